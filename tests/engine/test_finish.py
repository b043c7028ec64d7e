"""``engine.finish``: a session's records become its report, gate outcome and files,
without pytest. The records come from the toy family (``conftest.Toy``) scored by the
engine's own preparation on built-in models, so no model is called; the gate, the ranking
hooks, partial runs and the output directory's reports are checked on ``RunOutcome``."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.aggregate.scoring import scoring_from_config
from pytest_summarybench.engine.finish import (
    RunOutcome,
    SessionRecords,
    finish_run,
    nothing_scored,
    run_selection,
    summarize_evaluators,
)
from pytest_summarybench.engine.prepare import prepare_run
from pytest_summarybench.engine.warmup import WarmUp
from pytest_summarybench.evaluators import Evaluator
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.generate.ladder import LADDER_MODEL_IDS, LADDER_NAMES, is_ladder_model
from pytest_summarybench.schemas import ScoreRecord
from pytest_summarybench.schemas.report import RunSelection
from pytest_summarybench.store import record_row
from tests.engine.toy import Log, Toy


class Graded(Toy):
    """A toy family that scores each built-in model by a fixed grade, calls nothing, and
    summarizes its records (``fail_summary``: its summary raises)."""

    GRADES = {"builtin/docstring": 0.9, "builtin/identifiers": 0.6, "builtin/shuffled": 0.1}

    def __init__(self, fail_summary: bool = False) -> None:
        super().__init__(Log())
        self.fail_summary = fail_summary

    requests = Evaluator.requests  # type: ignore[assignment]  # the protocol's: no call

    def evaluate(self, item: Any, ctx: Any) -> list[ScoreRecord]:
        return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                            evaluator=self.name,
                            metrics={"match": self.GRADES.get(item.model_id, 0.5)})]

    def summarize(self, records: list[ScoreRecord], ctx: Any) -> dict[str, Any]:
        if self.fail_summary:
            raise ValueError("no breakdown for these records")
        return {"items": len(records)}


MODELS = [{"provider": "builtin", "model": m.split("/")[1]} for m in Graded.GRADES]
#: The validity ladder's built-in models (``generate/ladder.py``), as a session adds them.
LADDER = [{"provider": "builtin", "model": name, "id": model_id}
          for model_id, name in zip(LADDER_MODEL_IDS, LADDER_NAMES, strict=True)]


def _scored(make_run: Any, ev: Graded | None = None, models: list[Any] = MODELS,
            **overrides: Any) -> tuple[Any, SessionRecords]:
    """A run of the built-in models, summaries written by ``prepare_run``, every item
    scored: what a session hands to its end."""
    ev = ev or Graded()
    ctx = make_run(test=models, **overrides)
    items = ev.items(ctx)
    prepared = prepare_run(ctx, {ev.name: ev}, items, warm_up=WarmUp(),
                           say=lambda *a, **k: None)
    ctx = prepared.ctx
    records = [r.model_copy(update={"nodeid": f"test_bench.py::test_summary[{i.test_id}]"})
               for i in items for r in ev.evaluate(i, ctx)]
    # what the controller writes as the tests report (``report_from_store`` reads it)
    ctx.store.save_record_rows(ctx.run_id, [(r.nodeid, [record_row(r)]) for r in records])
    selection = RunSelection(id="session-1", complete=True, matrix_items=len(items),
                             selected_items=len(items))
    return ctx, SessionRecords(
        records=records, evaluators={ev.name: ev},
        scoring=scoring_from_config([ev], ctx.settings.benchmark_config()),
        skipped_families={"judge": "disabled in the configuration"}, selection=selection,
        started_at=datetime.now(timezone.utc))


def _no_hook(report: Any) -> list[str]:
    return []


def test_a_scored_session_is_ranked_saved_and_written(make_run) -> None:
    ctx, session = _scored(make_run)
    outcome = finish_run(ctx, session, _no_hook)
    assert outcome.error is None and outcome.gate_failures == []
    report = outcome.report
    assert report is not None
    assert [r.model_id for r in report.rankings] == list(Graded.GRADES)
    assert report.metadata.run == session.selection
    assert report.evaluator_details == {"toy/echo": {"items": len(session.records)}}
    out = ctx.settings.output_dir
    assert outcome.results_path == out / "results.json"
    assert set(outcome.report_paths) >= {"json"}
    data = json.loads((out / "results.json").read_text())
    assert data["metadata"]["run"]["id"] == "session-1"
    # saved under its run id: the report can be rebuilt from the store alone
    assert (out / "runs" / "session-1" / "results.json").is_file()
    from pytest_summarybench.report import report_from_store

    rebuilt = report_from_store(ctx.store)
    assert [r.model_id for r in rebuilt.rankings] == list(Graded.GRADES)


def test_the_gate_and_the_ranking_hooks_fail_the_run_together(make_run) -> None:
    ctx, session = _scored(make_run, **{"gate.minOverall": {"builtin/shuffled": 0.5}})
    seen: list[Any] = []

    def hook(report: Any) -> list[str]:
        seen.append(report)
        return ["identifiers must not rank second"]

    outcome = finish_run(ctx, session, hook)
    assert len(outcome.gate_failures) == 2
    assert outcome.gate_failures[0].startswith("builtin/shuffled: overall 0.")
    assert "< gate.minOverall 0.500" in outcome.gate_failures[0]
    assert outcome.gate_failures[1] == "identifiers must not rank second"
    assert seen == [outcome.report]
    assert outcome.report is not None
    assert outcome.report.gate_failures == outcome.gate_failures
    data = json.loads(outcome.results_path.read_text())  # type: ignore[union-attr]
    assert data["gateFailures"] == outcome.gate_failures


def test_a_session_stopped_early_is_partial_and_fails_a_configured_gate(make_run) -> None:
    ctx, session = _scored(make_run, **{"gate.minOverall": {"builtin/shuffled": 0.0}})
    out = ctx.settings.output_dir
    (out / "results.json").write_text('{"earlier": "complete run"}')
    session.stopped = "-x: the first failure stopped it"
    outcome = finish_run(ctx, session, _no_hook)
    assert outcome.gate_failures == [
        "the session stopped early (-x: the first failure stopped it); a gate judges only "
        "a session that ran to the end"]
    run = outcome.report.metadata.run  # type: ignore[union-attr]
    assert run is not None and not run.complete
    assert run.reasons == ["stopped early: -x: the first failure stopped it"]
    # written to its own folder; the complete run's report never moved
    assert outcome.results_path == out / "runs" / "session-1" / "results.json"
    assert not list(out.glob("*.previous.*"))
    assert json.loads((out / "results.json").read_text()) == {"earlier": "complete run"}


def test_reports_that_cannot_be_written_end_in_one_error_naming_the_way_out(
        make_run, tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the output directory's parent should be")
    ctx, session = _scored(make_run, **{"output.directory": str(blocked / "out")})
    outcome = finish_run(ctx, session, _no_hook)
    assert outcome.report is None and outcome.error is not None
    assert outcome.error.startswith(f"cannot write the reports to {blocked / 'out'} (")
    assert "nothing was published, the reports there are unchanged" in outcome.error
    assert "`summarybench report --run session-1` writes them" in outcome.error


def test_an_evaluator_summary_that_fails_says_so_and_costs_nothing_else(make_run) -> None:
    ctx, session = _scored(make_run, Graded(fail_summary=True))
    notes: list[str] = []
    details = summarize_evaluators(ctx, session.records, session.evaluators, notes)
    assert details == {"toy/echo": {
        "error": "summarize failed: ValueError: no breakdown for these records"}}
    assert notes == ["summarybench: toy/echo could not summarize its records (ValueError: "
                     "no breakdown for these records); its report section says so instead"]
    outcome = finish_run(ctx, session, _no_hook, notes=[])
    assert outcome.report is not None and outcome.notes == notes


def test_the_ladder_s_records_are_not_summarized_with_the_models_under_test(make_run) -> None:
    ctx, session = _scored(make_run)
    ladder = [r.model_copy(update={"model_id": LADDER_MODEL_IDS[0]}) for r in session.records]
    details = summarize_evaluators(ctx, ladder, session.evaluators, [])
    assert details == {}


def test_nothing_scored_writes_nothing_and_fails_a_configured_gate() -> None:
    from pytest_summarybench.settings import load_settings

    session = SessionRecords(records=[], evaluators={}, scoring=None, skipped_families={},
                             selection=RunSelection(id="s", complete=True),
                             started_at=datetime.now(timezone.utc))
    quiet = nothing_scored(session, load_settings(None, families=BUILTIN_FAMILIES).gate)
    assert quiet == RunOutcome(notes=[
        "summarybench: no unit was scored (every selected item was skipped or failed before "
        "scoring; -rs shows the skip reasons); no results.json written"])
    session.stopped = "interrupted (Ctrl-C)"
    gate = load_settings(None, {"gate.minOverall": {"builtin/lead": 0.5}},
                         families=BUILTIN_FAMILIES).gate
    gated = nothing_scored(session, gate)
    assert gated.report is None
    assert gated.gate_failures == ["no unit was scored in this session (interrupted "
                                   "(Ctrl-C)); a gate passes only on a session that scored"]


@pytest.mark.parametrize(("stopped", "scored", "reasons"), [
    ("", True, None),
    ("maxfail", True, ["-k x", "stopped early: maxfail"]),
    ("", False, ["-k x", "nothing scored: every item ended in an error"]),
])
def test_run_selection_is_partial_when_stopped_or_nothing_scored(
        stopped: str, scored: bool, reasons: list[str] | None) -> None:
    selection = RunSelection(id="s", complete=reasons is None, reasons=["-k x"]
                             if reasons else [])
    got = run_selection(selection, stopped, scored=scored)
    if reasons is None:
        assert got is selection
    else:
        assert not got.complete and got.reasons == reasons


@pytest.mark.parametrize("fail", ["all", "models"])
def test_a_session_whose_every_item_failed_is_partial_and_leaves_the_reports(
        make_run, fail: str) -> None:
    """A dead endpoint failed every item ("all"), or every item of the models under test
    while the ladder's built-in summaries scored ("models"): the session is partial, never
    the output directory's latest complete run. (This was a pytester scenario of two
    sessions per case in tests/report/test_runs.py.)"""
    ctx, session = _scored(make_run, models=MODELS + LADDER)
    refused = "connection refused at http://127.0.0.1:9/v1"
    session.records = [
        r.model_copy(update={"metrics": {}, "error": refused})
        if fail == "all" or not is_ladder_model(r.model_id) else r for r in session.records]
    out = ctx.settings.output_dir
    (out / "results.json").write_text('{"earlier": "complete run"}')
    outcome = finish_run(ctx, session, _no_hook)
    assert outcome.report is not None and outcome.error is None
    run = outcome.report.metadata.run
    assert run is not None and not run.complete
    assert run.reasons[0] == "nothing scored: every item ended in an error"
    if fail == "all":
        # ... which is an unhealthy run too (issue 33), said after it, on its own line
        assert [r.split(":")[0] for r in run.reasons[1:]] == ["unhealthy"]
        assert refused in run.reasons[1]
        health = outcome.report.metadata.health
        assert health is not None and not health.healthy
    assert outcome.results_path == out / "runs" / "session-1" / "results.json"
    assert json.loads((out / "results.json").read_text()) == {"earlier": "complete run"}
    assert not list(out.glob("*.previous.*"))
    # the ladder ran in both, and scored only when its own items did
    validity = outcome.report.validity
    assert validity is not None and bool(validity.families) == (fail == "models")
