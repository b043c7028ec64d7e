"""Reports: the run's report object from the store's data, and its renderings."""

from __future__ import annotations

from datetime import datetime

from ..aggregate import build_report
from ..context import RunContext
from ..schemas import BenchmarkReport, ScoreRecord
from .json_report import write_results_json
from .terminal import terminal_lines


def build_run_report(ctx: RunContext, records: list[ScoreRecord],
                     families_skipped: dict[str, str], *, started_at: datetime,
                     finished_at: datetime) -> BenchmarkReport:
    """The report of one run from its records, units and summaries (no model calls)."""
    run = ctx.store.load_run(ctx.run_id)
    assert run is not None, f"run {ctx.run_id} is in the store once units are extracted"
    model_ids = sorted({r.model_id for r in records if "~" not in r.model_id}
                       | {m.id for m in ctx.models})
    summary_costs: dict[str, list[float | None]] = {m: [] for m in model_ids}
    for unit in ctx.units:
        for model_id in model_ids:
            s = ctx.summary(unit.id, model_id)
            if s is not None:
                summary_costs[model_id].append(s.generation_metadata.cost)
    return build_report(
        run_id=ctx.run_id, name=ctx.settings.name, config=run.config,
        codebase=run.codebase_info, records=records, model_ids=model_ids,
        unit_language={u.id: u.language for u in ctx.all_units},
        unit_type={u.id: u.type for u in ctx.all_units},
        summary_costs=summary_costs, families_skipped=families_skipped,
        started_at=started_at, finished_at=finished_at)


__all__ = ["build_run_report", "terminal_lines", "write_results_json"]
