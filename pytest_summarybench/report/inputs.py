"""The inputs of a report, gathered from a live run or from the store alone.

The store holds records, units, summaries and the run; what only the session knows (its
start and end, why families were skipped, the evaluators' own sections) is saved next to
them at the end of the session, so ``summarybench report`` rebuilds the same report later
without calling any model.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..aggregate import ReportInputs, Scoring
from ..core.errors import InputError
from ..schemas import BenchmarkReport, CodeUnit, GeneratedSummary, ScoreRecord
from ..schemas.report import BaselineComparison

if TYPE_CHECKING:
    from ..context import RunContext
    from ..store import Store

class ReportError(InputError, RuntimeError):
    """A report cannot be built (no such run, no scores); the message says which and why."""


def _models(records: list[ScoreRecord], extra: list[str]) -> list[str]:
    # ``a~b`` records belong to pairs (a pairwise judge); each model also has its own.
    return sorted({r.model_id for r in records if len(r.models) == 1} | set(extra))


def inputs_from_context(ctx: RunContext, records: list[ScoreRecord], *,
                        families_skipped: dict[str, str], started_at: datetime,
                        finished_at: datetime,
                        evaluator_details: dict[str, dict[str, Any]] | None = None,
                        scoring: Scoring | None = None) -> ReportInputs:
    """Inputs of the session's report: its own records and the run's units and summaries."""
    run = ctx.store.load_run(ctx.run_id)
    assert run is not None, f"run {ctx.run_id} is in the store once units are extracted"
    model_ids = _models(records, [m.id for m in ctx.models])
    summaries: dict[tuple[str, str], GeneratedSummary] = {}
    for unit in ctx.units:
        for model_id in model_ids:
            s = ctx.summary(unit.id, model_id)
            if s is not None:
                summaries[(unit.id, model_id)] = s
    return ReportInputs(
        run_id=ctx.run_id, name=ctx.settings.name, config=run.config,
        codebase=run.codebase_info, records=records, model_ids=model_ids,
        units=_record_units(ctx, records), summaries=summaries, started_at=started_at,
        finished_at=finished_at, families_skipped=dict(families_skipped),
        evaluator_details=dict(evaluator_details or {}), scoring=scoring)


def _record_units(ctx: RunContext, records: list[ScoreRecord]) -> list[CodeUnit]:
    """The units a report reads: the sampled ones and any other that a record scores or
    names in its details (a unit a task showed, a distractor, a retrieval hit), not every
    unit of the codebase."""
    known = ctx.unit_ids
    named = {r.unit_id for r in records} | named_units(records, known)
    sampled = {u.id for u in ctx.units}
    others = sorted((named - sampled) & known)
    ctx.stored_units.fetch(others)
    return [*ctx.units, *(ctx.unit(uid) for uid in others)]


def named_units(records: list[ScoreRecord], known: Set[str]) -> set[str]:
    """The unit ids of ``known`` that the records' details name, at any depth."""
    found: set[str] = set()
    stack: list[Any] = [r.details for r in records]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if value in known:
                found.add(value)
        elif isinstance(value, Mapping):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return found


def save_session_inputs(store: Store, inputs: ReportInputs) -> None:
    """Keep what only the session knows, for ``inputs_from_store``."""
    store.session_inputs.save(inputs.run_id, {
        "startedAt": inputs.started_at.isoformat(),
        "finishedAt": inputs.finished_at.isoformat(),
        "familiesSkipped": inputs.families_skipped,
        "evaluatorDetails": inputs.evaluator_details,
        "scoring": inputs.scoring.to_json() if inputs.scoring is not None else None})


def save_gate_outcome(store: Store, report: BenchmarkReport) -> None:
    """Keep the gate's verdict and baseline comparison with the session's inputs, so that
    a rebuilt report says what the session said."""
    store.session_inputs.update(report.metadata.benchmark_id, {
        "gateFailures": report.gate_failures,
        "baseline": (report.baseline.model_dump(mode="json", by_alias=True)
                     if report.baseline is not None else None)})


def inputs_from_store(store: Store, run_id: str | None = None) -> ReportInputs:
    """Inputs of a report of ``run_id`` (default: the latest run) from the store alone."""
    run_id = run_id or store.latest_run_id()
    if run_id is None:
        raise ReportError(f"store {store.path} holds no run; run the benchmark first "
                          "(`summarybench run`, or `summarybench evaluate --all` with a "
                          "configuration)")
    run = store.load_run(run_id)
    if run is None:
        raise ReportError(f"store {store.path} has no run {run_id!r}")
    records = store.load_records(run_id, benchmark="summary")
    if not records:
        raise ReportError(f"run {run_id} in {store.path} has no scores yet; run the "
                          "benchmark's tests first")
    summaries = {key: s for key, s in store.run_summaries(run_id).items()
                 if isinstance(s, GeneratedSummary)}
    saved = store.session_inputs.load(run_id)
    started = datetime.fromisoformat(saved.get("startedAt", run.started_at))
    finished_text = saved.get("finishedAt") or run.completed_at
    finished = (datetime.fromisoformat(finished_text) if finished_text
                else datetime.now(timezone.utc))
    return ReportInputs(
        run_id=run_id, name=run.name, config=run.config, codebase=run.codebase_info,
        records=records, model_ids=_models(records, []),
        units=store.load_units_by_id(run_id, {r.unit_id for r in records}
                                     | set(store.sampled_unit_ids(run_id))
                                     | named_units(records, set(store.unit_ids(run_id)))),
        summaries=summaries, started_at=started,
        finished_at=finished, families_skipped=saved.get("familiesSkipped", {}),
        evaluator_details=saved.get("evaluatorDetails", {}),
        gate_failures=saved.get("gateFailures") or [],
        baseline=(BaselineComparison.model_validate(saved["baseline"])
                  if saved.get("baseline") else None),
        scoring=Scoring.from_json(saved["scoring"]) if saved.get("scoring") else None)
