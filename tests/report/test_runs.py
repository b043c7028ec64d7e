"""Runs (issue 21, items 1, 2, 5 and 11): every session that scores is kept under its run
id; the output directory's own reports are the latest complete run's, and a partial
session (-k, -m, a dry run, the validity ladder alone) never replaces them; a partial run
says so in the terminal, results.json and the reports; ``summarybench runs`` lists the
runs and ``report``/``compare`` pick one by a unique id prefix; a -k or -m that selects
nothing says why.

The project and its deterministic evaluators are those of ``test_session_reports.py``
(pytester, the built-in offline models, no model call)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_session_reports import _cli_each, _project, _run, _write_project

from pytest_summarybench.cli._common import CliError
from pytest_summarybench.cli.compare import resolve_model
from tests.fakes.project import run_session

TOP = ("results.json", "report.md", "report.html", "explorer.html")


def _top_level(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in TOP}


def _explored(page: Path) -> dict:
    """The data an explorer page embeds."""
    blob = re.search(r'<script type="application/json" id="sb-data">(.*?)</script>',
                     page.read_text(), re.S)
    assert blob is not None
    return json.loads(blob.group(1))


def _runs(out: Path) -> dict[str, dict]:
    """Run id -> its results.json, for every run folder of the output directory."""
    return {p.name: json.loads((p / "results.json").read_text())
            for p in sorted((out / "runs").iterdir())}


@pytest.fixture(scope="module")
def complete(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project after one complete plain session, run once for the module: the tests
    that start from such a run take a copy of it (``_complete_copy``) instead of running
    that session again."""
    project = tmp_path_factory.mktemp("complete") / "project"
    project.mkdir()
    _write_project(project)
    result = run_session(project, "-p", "summarybench", "-p", "no:cacheprovider",
                         "--sb-output", "out")
    assert result.ret == 0, result.stdout.str()
    return project


def _complete_copy(pytester: pytest.Pytester, complete: Path) -> Path:
    """This test's project: a copy of the complete session's (files, store, reports and
    run folders); its output folder."""
    shutil.copytree(complete, pytester.path, dirs_exist_ok=True)
    return pytester.path / "out"


def test_a_partial_run_is_kept_apart_and_labelled(pytester: pytest.Pytester,
                                                  run_mode: list[str],
                                                  request: pytest.FixtureRequest) -> None:
    if run_mode:  # the complete session with two workers too
        _project(pytester)
        out = pytester.path / "out"
        assert _run(pytester, *run_mode).ret == 0
    else:
        out = _complete_copy(pytester, request.getfixturevalue("complete"))
    complete = json.loads((out / "results.json").read_text())
    run = complete["metadata"]["run"]
    assert run["complete"] is True and run["deselectedItems"] == 0
    assert run["selectedItems"] == run["matrixItems"] > 0
    assert _runs(out) == {run["id"]: complete}
    # The explorer beside each report.html: every scored unit, each model's summary.
    explored = _explored(out / "runs" / run["id"] / "explorer.html")
    assert (out / "explorer.html").read_bytes() == \
        (out / "runs" / run["id"] / "explorer.html").read_bytes()
    assert explored["run"]["id"] == run["id"]
    assert explored["models"] == [r["modelId"] for r in complete["rankings"]]
    scored = {u for scores in complete["statistics"]["unitScores"].values() for u in scores}
    assert {u["id"] for u in explored["units"]} == scored
    assert all(s for u in explored["units"] for s in u["sum"])
    assert 'href="explorer.html#unit=' in (out / "report.html").read_text()
    before = _top_level(out)

    result = _run(pytester, *run_mode, "-k", "identifiers and retrieval")
    assert result.ret == 0, result.stdout.str()
    # The complete run's files are untouched; the partial one has its own folder.
    assert _top_level(out) == before
    runs = _runs(out)
    assert set(runs) - {run["id"]} and len(runs) == 2
    partial_id = next(i for i in runs if i != run["id"])
    partial = runs[partial_id]["metadata"]["run"]
    assert partial["complete"] is False
    assert partial["keyword"] == "identifiers and retrieval"
    assert partial["reasons"] == ["-k 'identifiers and retrieval'"]
    assert partial["matrixItems"] == run["matrixItems"]
    assert partial["selectedItems"] + partial["deselectedItems"] == partial["matrixItems"]
    assert set(partial["deselectedByFamily"]) == {"contrastive", "retrieval"}
    assert "builtin/lead" in partial["deselectedByModel"]
    assert [r["modelId"] for r in runs[partial_id]["rankings"]] == ["builtin/identifiers"]
    # Contrastive did not run because -k left it out, not because it recorded nothing.
    skipped = runs[partial_id]["metadata"]["familiesSkipped"]["contrastive"]
    assert skipped.startswith("deselected: -k/-m left out its ") and \
        skipped.endswith(" items in this session")
    result.stdout.fnmatch_lines(["skipped contrastive: deselected: -k/-m left out its *"])
    result.stdout.fnmatch_lines([
        f"PARTIAL RUN {partial_id}: -k 'identifiers and retrieval': * of * items left out "
        "(contrastive *, retrieval *); scores are not comparable with a complete run's",
        f"results: *runs/{partial_id}/results.json",
        f"run {partial_id} (partial) is kept in the store and in *; the output directory's "
        "own reports still show the latest complete run*"])
    folder = out / "runs" / partial_id
    assert "> **Partial run** `" + partial_id + "`" in (folder / "report.md").read_text()
    html = (folder / "report.html").read_text()
    assert f'<p class="partial" role="alert"><strong>Partial run</strong> <code>{partial_id}' \
           in html
    assert "Partial run" not in (out / "report.md").read_text()
    assert _explored(folder / "explorer.html")["run"]["partial"].startswith(
        "-k 'identifiers and retrieval'")


def test_runs_report_and_compare_pick_a_run_by_prefix(pytester: pytest.Pytester,
                                                      complete: Path) -> None:
    out = _complete_copy(pytester, complete)
    assert _run(pytester, "-k", "lead and contrastive").ret == 0
    runs = _runs(out)
    meta = json.loads((out / "results.json").read_text())["metadata"]
    full, configuration = meta["run"]["id"], meta["benchmarkId"]
    part = next(i for i in runs if i != full)
    store = ["--store", "out/store.sqlite"]
    (listed, default_json, picked, cmp_default, cmp_partial, ambiguous, missing,
     mixed) = _cli_each(
        pytester.path,
        ["runs", *store],
        ["report", "--format", "json", *store],
        ["report", "--format", "markdown", "--run", part[:6], *store],
        ["compare", "identifiers", "lead", *store],
        ["compare", "lead", "builtin/lead", "--run", part, *store],
        ["report", "--run", "", *store],
        ["report", "--run", "zz", *store],
        ["report", "--format", "json", "--run", configuration, *store])
    code, text, _ = listed
    assert code == 0
    lines = text.splitlines()
    assert lines[0].split() == ["run", "date", "(UTC)", "configuration", "status", "units",
                                "families", "top", "model", "models"]
    # each run names its configuration (issue 33: runs of several were mixed unmarked)
    name = meta["name"]
    assert all(f" {configuration[:8]} {name} " in lines[i] for i in (1, 3))
    # newest first; the latest complete run is starred, the partial one says why
    assert lines[1].startswith(f"  {part}") and " partial " in lines[1]
    assert lines[2] == "    -k 'lead and contrastive': " + lines[2].split(": ", 1)[1]
    assert lines[3].startswith(f"* {full}") and " complete " in lines[3]
    assert "builtin/identifiers" in lines[3] and "contrastive,retrieval" in lines[3]
    assert lines[-1].startswith(f"* {full}: the latest complete run")

    code, text, _ = default_json
    assert code == 0 and text == (out / "results.json").read_text()
    code, text, _ = picked
    assert code == 0 and text == (out / "runs" / part / "report.md").read_text()

    code, text, _ = cmp_default
    assert code == 0
    assert text.splitlines()[0].startswith(f"builtin/identifiers vs builtin/lead (run {full}")
    code, _, err = cmp_partial
    assert code == 2 and "compare needs two different models" in err

    code, out_text, err = ambiguous
    assert code == 2 and out_text == ""
    assert err.startswith("summarybench report: error: --run '' matches 2 runs (")
    assert part in err and full in err and "summarybench runs" in err
    assert len(err.splitlines()) == 1
    code, _, err = missing
    assert code == 2 and "has no run 'zz'" in err and part in err
    # A configuration id names both sessions: its records mixed made a report of neither;
    # it picks the configuration's latest complete run.
    code, text, _ = mixed
    assert code == 0 and json.loads(text)["metadata"]["run"]["id"] == full
    # A run of another configuration: the column tells them apart, and a line says so.
    assert _run(pytester, "--sb-sample-size", "4").ret == 0
    other = json.loads((out / "results.json").read_text())["metadata"]["benchmarkId"]
    assert other != configuration
    ((code, text, _),) = _cli_each(pytester.path, ["runs", *store])
    lines = text.splitlines()
    assert f" {other[:8]} " in lines[1] and f" {configuration[:8]} " in lines[2]
    assert "runs of different configurations do not compare" in text


def test_dry_run_and_validity_ladder_leave_the_reports(pytester: pytest.Pytester,
                                                       complete: Path) -> None:
    # Before: a dry run moved the reports aside (results.previous.json) and left none; the
    # ladder alone (`summarybench validate`) replaced them with an empty ranking.
    out = _complete_copy(pytester, complete)
    before = _top_level(out)
    assert _run(pytester, "--sb-dry-run").ret == 0
    assert _top_level(out) == before and not (out / "results.previous.json").exists()
    result = _run(pytester, "--sb-validate", "-m", "validate")
    assert result.ret == 0, result.stdout.str()
    assert _top_level(out) == before
    result.stdout.fnmatch_lines([
        "PARTIAL RUN *: the validity ladder alone (-m validate): *",
        "configuration *: * units extracted, * sampled; the validity ladder alone, no model "
        "under test evaluated (the ladder's scores are in its table below)",
        "families run: *"])
    # No ranking table of empty rows, no "0 scored" items line.
    assert "rank  model" not in result.stdout.str()
    assert "items: 0 scored" not in result.stdout.str()
    ladder = [r for r in _runs(out).values() if not r["metadata"]["run"]["complete"]]
    assert len(ladder) == 1 and ladder[0]["rankings"] == []
    assert ladder[0]["validity"]["families"]

    # compare still compares the complete run's models, not the ladder's empty ranking
    ((code, text, err),) = _cli_each(pytester.path, ["compare", "identifiers", "signature",
                                                     "--store", "out/store.sqlite"])
    assert code == 0, err
    full = json.loads(before["results.json"])["metadata"]["run"]["id"]
    assert f"(run {full}," in text.splitlines()[0]


STOPPING = """
import os
_score = Contrastive.evaluate


def _evaluate(self, item, ctx):
    if os.environ.get("SB_STOP") and item.model_id == "builtin/shuffled":
        raise RuntimeError("scripted failure")
    return _score(self, item, ctx)


Contrastive.evaluate = _evaluate
"""


def test_a_session_stopped_early_is_partial_and_puts_the_reports_back(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, complete: Path) -> None:
    # Before: -x left a results.json of the items it reached at the top, passing for a
    # complete run's.
    out = _complete_copy(pytester, complete)
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text() + STOPPING)
    before = _top_level(out)
    monkeypatch.setenv("SB_STOP", "1")
    result = _run(pytester, "-x")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["PARTIAL RUN *: stopped early: stopping after 1 failures; "
                                 "scores are not comparable with a complete run's"])
    assert _top_level(out) == before and not list(out.glob("*.previous.*"))
    (stopped,) = [r["metadata"]["run"] for r in _runs(out).values()
                  if not r["metadata"]["run"]["complete"]]
    assert stopped["reasons"] == ["stopped early: stopping after 1 failures"]
    assert stopped["deselectedItems"] == 0


# A session whose every item failed (a dead endpoint), with or without the ladder's items
# scoring, is partial and leaves the reports: tests/engine/test_finish.py, on the engine's
# ``finish_run`` (it was a scenario of two sessions per case here).


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["plain", "n2"])
def test_a_selection_of_nothing_says_why(pytester: pytest.Pytester, mode: list[str]) -> None:
    # Before: "N deselected", exit 5, and no reason.
    _project(pytester)
    result = _run(pytester, *mode, "-m", "judge")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["summarybench: no judge item is runnable, so -m 'judge' "
                                 "selected nothing: disabled in the configuration"])
    result = _run(pytester, *mode, "-k", "no_such_unit")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["summarybench: -k 'no_such_unit' matched none of the * "
                                 "benchmark items (ids look like '*': unit, model, evaluator)"])
    assert not (pytester.path / "out" / "results.json").exists()


def test_compare_takes_a_unique_part_of_a_model_id() -> None:
    from synthetic_report import make_report

    report = make_report(n_units=9)
    assert resolve_model("openai/alpha", report) == "openai/alpha"
    assert resolve_model("alpha", report) == "openai/alpha"
    assert resolve_model("ALPH", report) == "openai/alpha"
    assert resolve_model("local/", report) == "local/gamma"
    with pytest.raises(CliError, match=r"model 'a' is ambiguous in run .*: it could be "
                                       r"openai/alpha, anthropic/beta, local/gamma"):
        resolve_model("a", report)
    with pytest.raises(CliError, match=r"model 'delta' is not in run .*; its models are: "):
        resolve_model("delta", report)
    empty = report.model_copy(update={"rankings": []})
    with pytest.raises(CliError, match="ranks no model"):
        resolve_model("alpha", empty)
