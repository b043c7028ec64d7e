"""The end of a run, without pytest: a session's records become its report, the CI gate
is applied, the run is saved in the store and its reports are written.

``finish_run`` returns one ``RunOutcome``; the pytest plugin prints it and sets the exit
status from it, and unit tests read it directly. The output directory's own reports change
only here, last, all or nothing (``report/files.py``: ``publish``): a session that fails
before, or while, publishing leaves them as they were.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.printable import shown_path

if TYPE_CHECKING:
    from ..aggregate import ReportInputs, Scoring
    from ..context import RunContext
    from ..evaluators import Evaluator
    from ..llm.endpoints import Endpoints
    from ..schemas import BenchmarkReport, ScoreRecord
    from ..schemas.report import RunSelection


@dataclass
class RunOutcome:
    """What the end of a run produced, for whoever drives it to show."""

    report: BenchmarkReport | None = None
    """The run's report; None when nothing was scored or the reports could not be
    written (``error`` then says why)."""
    gate_failures: list[str] = field(default_factory=list)
    """Why the configured gate or a ranking hook failed the run (empty: it passed)."""
    notes: list[str] = field(default_factory=list)
    """Lines to show after the ranking (or alone, without a report)."""
    report_paths: dict[str, Path] = field(default_factory=dict)
    """Format -> the file written (``json`` is results.json)."""
    error: str | None = None
    """A failure that ends the session as a usage error (exit code 4)."""

    @property
    def results_path(self) -> Path | None:
        return self.report_paths.get("json")


@dataclass
class SessionRecords:
    """What a session hands to its end: the records and how it went."""

    records: list[ScoreRecord]
    """The code-summary benchmark's records, in node id order."""
    evaluators: Mapping[str, Evaluator]
    """The active evaluators, by name."""
    scoring: Scoring | None
    skipped_families: dict[str, str]
    """Why each family that recorded nothing did not run."""
    selection: RunSelection
    """What the session selected of the run's matrix."""
    started_at: datetime
    stopped: str = ""
    """Why the session did not run every selected test ("" when it did)."""


def summarize_evaluators(ctx: RunContext, records: list[ScoreRecord],
                         evaluators: Mapping[str, Evaluator], notes: list[str]
                         ) -> dict[str, dict[str, Any]]:
    """Each evaluator's own report section (``summarize``) over its records of the models
    under test (the validity ladder is analysed on its own, into ``report.validity``); one
    that fails says so in its section and in ``notes``, and costs nothing else."""
    from ..generate.ladder import is_ladder_model
    from ..llm.redaction import failure

    details: dict[str, dict[str, Any]] = {}
    for name, ev in sorted(evaluators.items()):
        summarize = getattr(ev, "summarize", None)
        if not callable(summarize):
            continue
        mine = [r for r in records if r.evaluator == name
                and not is_ladder_model(r.model_id)]
        if not mine:
            continue
        try:
            details[name] = summarize(mine, ctx)
        except Exception as exc:  # noqa: BLE001 - one evaluator's section only
            details[name] = {"error": f"summarize failed: {failure(exc)}"}
            notes.append(f"summarybench: {name} could not summarize its records "
                         f"({failure(exc)}); its report section says so instead")
    return details


def finish_run(ctx: RunContext, session: SessionRecords,
               ranking_hook: Callable[[BenchmarkReport], list[str]],
               notes: list[str] | None = None) -> RunOutcome:
    """The report of a session that scored (``session.records`` is not empty), gated,
    saved under its run id and written; see the module docstring.

    :param ranking_hook: gate messages of the plugins' ranking hooks for the report.
    """
    from ..generate.ladder import is_ladder_model
    from ..report import apply_gate, save_gate_outcome
    from ..report.build import report_of_inputs
    from ..report.gate import gate_configured
    from ..report.inputs import inputs_from_context
    from .health import models_left_out, run_health

    settings = ctx.settings
    outcome = RunOutcome(notes=notes if notes is not None else [])
    records = session.records
    ctx = ctx.refreshed()  # the summaries this session wrote
    details = summarize_evaluators(ctx, records, session.evaluators, outcome.notes)
    skipped = dict(session.skipped_families)
    # Why a family that ran is out of some models' overall score, for the ranking's line.
    for family, left in models_left_out(ctx, session.evaluators).items():
        skipped[f"{family} in overall"] = "; ".join(dict.fromkeys(left.values()))
    inputs = inputs_from_context(ctx, records, families_skipped=skipped,
                                 started_at=session.started_at,
                                 finished_at=datetime.now(timezone.utc),
                                 evaluator_details=details, scoring=session.scoring)
    report = report_of_inputs(ctx.store, inputs, save=True)
    # Health before any headline: an unhealthy run names no best model.
    health = report.metadata.health = run_health(ctx, records, session.evaluators)
    if not health.healthy:
        report.recommendations = []
    # The configured gate first: it attaches the baseline comparison that ranking hooks
    # may want to read (this directory's results.json is still the earlier session's).
    failures = apply_gate(report, settings, ctx.store)
    if not health.healthy and gate_configured(settings.gate):
        failures.insert(0, f"the run is unhealthy ({health.problems[0]}); a gate passes only "
                           "a healthy run")
    if session.stopped and gate_configured(settings.gate):
        failures.append(f"the session stopped early ({session.stopped}); a gate judges only "
                        "a session that ran to the end")
    failures += ranking_hook(report)
    report.gate_failures = list(failures)
    save_gate_outcome(ctx.store, report)
    outcome.gate_failures = failures
    # Scored means a model under test scored: the ladder's built-in summaries score
    # whatever the models' endpoints do (only a ladder-only session is judged by them).
    models = [r for r in records if not is_ladder_model(r.model_id)]
    report.metadata.run = run_selection(session.selection, session.stopped,
                                        scored=any(r.error is None for r in models or records),
                                        problems=health.problems)
    from ..report import save_session_run, write_session_reports
    from ..report.json_report import report_json

    save_session_run(ctx.store, report, report_json(report))
    formats = ["json", *settings.output.formats]
    explorer = explorer_page(report, inputs, outcome.notes) if "html" in formats else None
    try:
        outcome.report_paths = write_session_reports(report, settings.output_dir, formats,
                                                     explorer=explorer,
                                                     families=settings.families)
    except OSError as exc:
        from ..report.files import PublishRefused

        # A folder or FIFO in the way says what to move in its own words.
        way_out = "" if isinstance(exc, PublishRefused) else (
            "free space there or make it writable, or pass --sb-output DIR; ")
        outcome.error = (
            f"cannot write the reports to {shown_path(settings.output_dir)} "
            f"({exc.strerror or exc}): nothing was published, the reports there are "
            f"unchanged; {way_out}the scores are in the store "
            f"({shown_path(settings.store_path)}), `summarybench report --run "
            f"{report.metadata.run.id}` writes them")
        return outcome
    outcome.report = report
    return outcome


def explorer_page(report: BenchmarkReport, inputs: ReportInputs,
                  notes: list[str]) -> str | None:
    """The run's explorer page (``report/explorer.py``); None, and a line in ``notes``,
    when it cannot be built: the reports are written without it."""
    from ..llm.redaction import failure
    from ..report.explorer import render_explorer

    try:
        return render_explorer(report, inputs)
    except Exception as exc:  # noqa: BLE001 - the explorer only; the reports still go out
        notes.append(f"summarybench: the explorer could not be built ({failure(exc)}); "
                     "the reports are written without it")
        return None


def nothing_scored(session: SessionRecords, settings_gate: Any) -> RunOutcome:
    """The end of a session that scored nothing: no report (the previous reports must not
    pass for this session's), the reason, and a failed gate when one is configured."""
    from ..report.gate import gate_configured

    why = session.stopped or ("every selected item was skipped or failed before scoring; "
                              "-rs shows the skip reasons")
    outcome = RunOutcome(notes=[f"summarybench: no unit was scored ({why}); no results.json "
                                "written"])
    if gate_configured(settings_gate):
        outcome.gate_failures = [f"no unit was scored in this session ({why}); a gate "
                                 "passes only on a session that scored"]
    return outcome


def run_selection(selection: RunSelection, stopped: str, *, scored: bool,
                  problems: Sequence[str] = ()) -> RunSelection:
    """The session's run: the selection collection saw, made partial if the session
    stopped early, scored nothing (every item ended in an error: a dead endpoint, say) or
    is unhealthy (``problems``, ``engine/health.py``), so that it never replaces the
    output directory's reports of a complete run that did not."""
    from ..schemas.report import UNHEALTHY_REASON

    more = ([f"stopped early: {stopped}"] if stopped else []) + (
        [] if scored else ["nothing scored: every item ended in an error"])
    if problems:
        others = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        more.append(f"{UNHEALTHY_REASON}: {problems[0]}{others}")
    if not more:
        return selection
    return selection.model_copy(update={"complete": False,
                                        "reasons": [*selection.reasons, *more]})


def dead_endpoint_lines(endpoints: Endpoints) -> list[str]:
    """One line per endpoint still refused at the end (its breaker open in the session's
    ``endpoints``: the controller makes the session's calls): which model, where, and
    why; the items it failed are counted per model and evaluator."""
    lines = []
    for (provider, name, where), cause in sorted(endpoints.open_breakers().items(),
                                                 key=lambda kv: str(kv[0])):
        at = f" ({where})" if where and str(where) not in cause else ""
        lines.append(f"dead endpoint: {provider}/{name}{at}: {cause}")
    return lines
