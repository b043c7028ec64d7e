"""Reports: the run's report object from the store's data, and its renderings (terminal
table, results.json, Markdown, HTML), the CI gate, and the pytest-html columns."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..aggregate import build_report
from ..schemas import BenchmarkReport, ScoreRecord
from .gate import apply_gate
from .inputs import ReportError, inputs_from_context, inputs_from_store, save_session_inputs
from .json_report import write_results_json
from .render import FILE_NAMES, render, write_reports
from .terminal import terminal_lines

if TYPE_CHECKING:
    from ..context import RunContext
    from ..store import Store


def build_run_report(ctx: RunContext, records: list[ScoreRecord],
                     families_skipped: dict[str, str], *, started_at: datetime,
                     finished_at: datetime,
                     evaluator_details: dict[str, dict[str, Any]] | None = None,
                     save: bool = False) -> BenchmarkReport:
    """The report of one session from its records and the run's units and summaries (no
    model calls); with ``save``, what only the session knows is kept in the store so that
    ``report_from_store`` rebuilds the same report."""
    inputs = inputs_from_context(ctx, records, families_skipped=families_skipped,
                                 started_at=started_at, finished_at=finished_at,
                                 evaluator_details=evaluator_details)
    if save:
        save_session_inputs(ctx.store, inputs)
    return build_report(inputs)


def report_from_store(store: Store, run_id: str | None = None) -> BenchmarkReport:
    """The report of ``run_id`` (default: the latest run) rebuilt from the store alone."""
    return build_report(inputs_from_store(store, run_id))


__all__ = ["FILE_NAMES", "ReportError", "apply_gate", "build_run_report", "render",
           "report_from_store", "terminal_lines", "write_reports", "write_results_json"]
