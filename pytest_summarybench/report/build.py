"""A report from a live session or from the store alone; both go through the same
``aggregate.build_report``, so they agree on every figure. The validity ladder's models
(``--sb-validate``) are kept out of the ranking and analysed into ``report.validity``."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..aggregate import ReportInputs, Scoring, build_report
from ..schemas import BenchmarkReport, ScoreRecord
from .inputs import inputs_from_context, inputs_from_store, save_session_inputs

if TYPE_CHECKING:
    from ..context import RunContext
    from ..store import Store


def build_run_report(ctx: RunContext, records: list[ScoreRecord],
                     families_skipped: dict[str, str], *, started_at: datetime,
                     finished_at: datetime,
                     evaluator_details: dict[str, dict[str, Any]] | None = None,
                     scoring: Scoring | None = None, save: bool = False) -> BenchmarkReport:
    """The report of one session from its records and the run's units and summaries (no
    model calls); with ``save``, what only the session knows is kept in the store so that
    ``report_from_store`` rebuilds the same report."""
    inputs = inputs_from_context(ctx, records, families_skipped=families_skipped,
                                 started_at=started_at, finished_at=finished_at,
                                 evaluator_details=evaluator_details, scoring=scoring)
    return report_of_inputs(ctx.store, inputs, save=save)


def report_of_inputs(store: Store, inputs: ReportInputs, *, save: bool = False
                     ) -> BenchmarkReport:
    """The report of a session's ``inputs`` (``inputs_from_context``); with ``save``, see
    ``build_run_report``."""
    if save:
        save_session_inputs(store, inputs)
    return _build(inputs)


def report_from_store(store: Store, run_id: str | None = None) -> BenchmarkReport:
    """The report of ``run_id`` (default: the latest run) rebuilt from the store alone."""
    return _build(inputs_from_store(store, run_id))


def _build(inputs: ReportInputs) -> BenchmarkReport:
    from ..validity.quote import quote_basis
    from ..validity.wiring import attach_validity, split_inputs

    main, ladder = split_inputs(inputs)
    report = attach_validity(build_report(main), ladder)
    if report.basis is not None:
        quote_basis(report.basis)
    return report
