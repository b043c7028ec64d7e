"""Runs: each session that scored keeps its report under its run id, in the store
(``session_runs``) and in ``runs/<id>/`` of the output directory; the output directory's
own ``results.json``, ``report.md`` and ``report.html`` are those of the latest complete
run (``schemas.report.RunSelection`` says what complete means). ``summarybench runs``
lists them; ``report`` and ``compare`` pick one by a unique prefix of its id.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .inputs import ReportError

if TYPE_CHECKING:
    from ..core.family import Family
    from ..schemas import BenchmarkReport
    from ..store import Store
    from ..store.tables import SessionRun

#: Folder of the output directory that holds one folder per run.
RUNS_DIR = "runs"
#: How many candidates an ambiguous --run names.
_SHOWN = 8


class RunChoiceError(ReportError):
    """``--run`` matches no run, or more than one; the message names the candidates."""


def run_dir(output_dir: Path, run_id: str) -> Path:
    return output_dir / RUNS_DIR / run_id


def listing(report: BenchmarkReport) -> dict[str, Any]:
    """What ``summarybench runs`` shows of a run: date, models, families, units scored,
    the top model, and what a partial run left out."""
    units: set[str] = set()
    for scores in report.statistics.unit_scores.values():
        units.update(scores)
    ranked = [r for r in report.rankings if r.units]
    health = report.metadata.health
    healthy = health is None or health.healthy
    top = ""
    if ranked and healthy:  # an unhealthy run names no best model
        first = ranked[0]
        undecided = any(r.kind == "no_single_best" for r in report.recommendations)
        top = f"{first.model_id} {first.overall_score:.3f}" + (
            " (no single best)" if undecided else "")
    run = report.metadata.run
    return {"date": report.metadata.run_date, "models": [r.model_id for r in report.rankings],
            "families": list(report.metadata.families_run), "units": len(units),
            "top": top,
            "partial": run.describe() if run is not None and not run.only_unhealthy else "",
            "healthy": healthy, "problems": list(health.problems) if health else [],
            "configuration": report.metadata.benchmark_id,
            "name": report.metadata.name}


def save_session_run(store: Store, report: BenchmarkReport, report_json: str) -> None:
    """Keep the session's report (``report_json``, as written) under its run id."""
    from ..store.tables import SessionRun

    run = report.metadata.run
    assert run is not None, "a session's report names its run"
    store.session_runs.save(SessionRun(id=run.id, run_id=report.metadata.benchmark_id,
                                       finished_at=time.time(), complete=run.complete,
                                       listing=listing(report)), report_json)


def write_session_reports(report: BenchmarkReport, output_dir: Path,
                          formats: Iterable[str], *, explorer: str | None = None,
                          families: Iterable[Family] = ()) -> dict[str, Path]:
    """Write the session's reports (and ``explorer``, the explorer's page, beside them) to
    ``runs/<id>/``, and, for a complete run, to the output directory too (the earlier
    session's moved to ``*.previous.*``); format -> the path that shows this run (top
    level when complete). All or nothing (``files.publish``): when writing fails (a full
    disk, a folder or FIFO at a report's path) no file of this session is left and the
    output directory's reports are as they were."""
    from .render import write_reports

    run = report.metadata.run
    assert run is not None, "a session's report names its run"
    own = run_dir(output_dir, run.id)
    try:
        if run.complete:
            return write_reports(report, output_dir, formats, copies=[own],
                                 explorer=explorer, families=families, rotate=True)
        return write_reports(report, own, formats, explorer=explorer, families=families)
    except OSError:
        for folder in (own, own.parent):
            try:
                folder.rmdir()  # only when empty: an earlier run's files stay
            except OSError:
                break
        raise


def find_run(store: Store, prefix: str | None) -> SessionRun | None:
    """The session run whose id starts with ``prefix`` (default: the latest complete one,
    else the latest one); None when no session run matches. More than one match is a
    ``RunChoiceError`` naming them."""
    runs = store.session_runs.all()
    if prefix is None:
        return next((r for r in runs if r.complete), runs[0] if runs else None)
    matches = [r for r in runs if r.id.startswith(prefix)]
    if len(matches) > 1:
        raise RunChoiceError(_ambiguous(prefix, [r.id for r in matches]))
    return matches[0] if matches else None


def _ambiguous(prefix: str, ids: list[str]) -> str:
    shown = ", ".join(ids[:_SHOWN]) + (f" and {len(ids) - _SHOWN} more"
                                       if len(ids) > _SHOWN else "")
    return (f"--run {prefix!r} matches {len(ids)} runs ({shown}); give more of the id "
            "(`summarybench runs` lists them)")


def report_of_run(store: Store, prefix: str | None = None) -> BenchmarkReport:
    """The report of the run ``prefix`` picks (see ``find_run``), as its session wrote it.

    A prefix of a configuration's id (a report's ``benchmarkId``) picks that
    configuration's latest complete session (else its latest one): its records mixed
    would make a report of no session. In a store written before runs were kept, it gives
    the report rebuilt from the store's records of that configuration
    (``report_from_store``).
    """
    from ..schemas import BenchmarkReport
    from .build import report_from_store

    run = find_run(store, prefix)
    if run is not None:
        text = store.session_runs.report(run.id)
        assert text is not None, f"run {run.id} was listed"
        return store.parse(BenchmarkReport, text)
    if prefix is None:
        return report_from_store(store)
    configurations = [i for i in store.run_ids() if i.startswith(prefix)]
    if len(configurations) > 1:
        raise RunChoiceError(_ambiguous(prefix, configurations))
    if configurations:
        # A configuration id names every session of one configuration: its records mixed
        # would make a report of no session. Only a store written before runs were kept
        # has nothing else to offer.
        sessions = [r for r in store.session_runs.all() if r.run_id == configurations[0]]
        if sessions:  # its latest complete session (newest first), else its latest
            chosen = next((r for r in sessions if r.complete), sessions[0])
            text = store.session_runs.report(chosen.id)
            assert text is not None, f"run {chosen.id} was listed"
            return store.parse(BenchmarkReport, text)
        return report_from_store(store, configurations[0])
    known = [r.id for r in store.session_runs.all()]
    raise RunChoiceError(
        f"store {store.path} has no run {prefix!r}; "
        + (f"its runs are {', '.join(known[:_SHOWN])}" if known else "it holds no run yet")
        + " (`summarybench runs` lists them)")
