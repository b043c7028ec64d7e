"""End to end: the three downstream evaluators in a pytest run of the plugin, on the
bundled codebase and task set, with a scripted task model behind the fake server."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.evaluators.downstream.conftest import CODEBASE
from tests.evaluators.downstream.scripted import ScriptedTaskModel
from tests.fakes.project import write_bench_module

MODELS = ["--sb-model", "builtin/docstring", "--sb-model", "builtin/shuffled"]


def _project(pytester: pytest.Pytester, downstream: str = "") -> None:
    write_bench_module(pytester)
    pytester.makefile(".yaml", summarybench=textwrap.dedent(f"""
        name: downstream-e2e
        codebase:
          root: {CODEBASE}
        evaluation:
          sampleSize: 12
          downstream:
        """) + textwrap.indent(textwrap.dedent(downstream), "    "))


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                         "--sb-output", "out", "--sb-eval", "downstream",
                                         "-rs", *MODELS, *args)


def _records(pytester: pytest.Pytester, selected: str) -> dict[str, dict]:
    """The stored records of the tests whose node id contains ``selected``, by node id."""
    with sqlite3.connect(pytester.path / "out" / "store.sqlite") as conn:
        rows = conn.execute("SELECT nodeid, json FROM records WHERE nodeid LIKE ?",
                            (f"%{selected}%",)).fetchall()
    out = {}
    for nodeid, text in rows:
        record = json.loads(text)
        out[nodeid] = {"metrics": record["metrics"], "details": {
            k: v for k, v in record["details"].items()
            if k not in ("cached", "sandboxSeconds")}}
    return out


def _gift_card_fails(n: int, body: dict[str, Any]) -> str | None:
    """A task-model failure (HTTP 400, not retried) for one bug report."""
    return "400" if "gift card" in json.dumps(body) else None


def test_default_run_scores_all_three_tasks(pytester: pytest.Pytester, fake_server: Any) -> None:
    model = ScriptedTaskModel()
    server = fake_server(respond=model, faults=_gift_card_fails)
    _project(pytester, f"""
        completionModel: local/task-model
        apiEndpoint: {server.base_url}
        """)
    result = _run(pytester)
    outcomes = result.parseoutcomes()
    # (9 completion + 10 bug localisation + 12 function selection) tasks x 2 models; the
    # gift-card report fails at the task model for both models, and the run goes on. Two
    # of the 14 function-selection tasks are left out: their text shares a word with the
    # right function's name only (price, rating), so names alone would answer them.
    assert outcomes == {"passed": 60, "failed": 2}, result.stdout.str()
    result.stdout.fnmatch_lines([
        "*downstream/bug_localisation could not score *bl-gift-card-overdraw*"
        "task model call failed: local/task-model: *",
        "*families run: downstream*",
    ])
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    by_model = {r["modelId"]: r for r in data["rankings"]}
    assert set(by_model) == {"builtin/docstring", "builtin/shuffled"}
    for ranking in by_model.values():
        assert "downstream" in ranking["scores"]
    details = data["detailed"]["byModel"]["builtin/docstring"]
    # Completions are the original code except calculate_vat (a stub: 2 of 4 tests pass)
    # and TokenBucket.try_acquire (writes outside its sandbox): (7 + 0.5 + 0) / 9.
    assert details["downstream/completion:pass_rate"] == pytest.approx(7.5 / 9)
    assert details["downstream/completion:success"] == pytest.approx(7 / 9)
    assert 0.5 < details["downstream/completion:similarity"] <= 1.0
    # Docstring summaries point the lexical localiser at the right files more often than
    # another unit's summary does.
    shuffled = data["detailed"]["byModel"]["builtin/shuffled"]
    assert (details["downstream/function_selection:success"]
            > shuffled["downstream/function_selection:success"])
    assert model.seen["completion"] >= 9 and model.seen["selection"] >= 12
    rows = list(_records(pytester, "").values())
    planted = [r for r in rows
               if r.get("details", {}).get("taskId") == "c-token-bucket-acquire"]
    assert len(planted) == 2
    for record in planted:
        assert "writing outside the sandbox directory" in record["details"]["reason"]
        assert record["metrics"]["pass_rate"] == 0.0
    assert not Path("/etc/summarybench-planted").exists()
    # The VAT tasks again with two xdist workers (task-model answers now come from the
    # store's cache): each test records the same scores as in the plain run.
    before = _records(pytester, "vat")
    again = _run(pytester, "-n", "2", "-k", "vat")
    assert again.parseoutcomes() == {"passed": len(before)}
    assert _records(pytester, "vat") == before


def test_without_a_task_model_the_tasks_skip_saying_how_to_configure_one(
        pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = _run(pytester)
    assert result.ret == 0
    result.stdout.fnmatch_lines([
        "*SKIPPED*summarybench has no matrix items*no task model configured: set "
        "evaluation.downstream.completionModel: PROVIDER/MODEL in summarybench.yaml*",
    ])


def test_a_bad_task_file_stops_collection_naming_line_and_field(
        pytester: pytest.Pytester, fake_server: Any) -> None:
    server = fake_server(respond=ScriptedTaskModel())
    bad = pytester.path / "tasks"
    bad.mkdir()
    (bad / "function_selection.jsonl").write_text(
        '{"id": "ok", "description": "d", "correct": {"path": "python/bookshop/pricing.py", '
        '"name": "calculate_vat"}, "candidates": [{"path": "python/bookshop/pricing.py", '
        '"name": "calculate_vat"}]}\n'
        '{"id": "empty", "description": "d", "correct": {"path": "a.py", "name": "f"}, '
        '"candidates": []}\n')
    _project(pytester, f"""
        completionModel: local/task-model
        apiEndpoint: {server.base_url}
        tasksFile: {bad}
        """)
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        f"ERROR: summarybench: invalid downstream task set: "
        f"{bad / 'function_selection.jsonl'}:2: field 'candidates': the candidate list is "
        "empty"])
