"""The downstream evaluators on a run context over the bundled codebase, with the task
model behind the fake server: hostile completions end as failed tasks with the reason,
task-model errors are errors, the family rule skips, and task sets are built where none
is shipped."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.context import RunContext
from pytest_summarybench.evaluators import EvaluationError, MatrixItem
from pytest_summarybench.evaluators.downstream.bug_localisation import BugLocalisationEvaluator
from pytest_summarybench.evaluators.downstream.completion import CompletionEvaluator
from pytest_summarybench.evaluators.downstream.function_selection import (
    FunctionSelectionEvaluator,
)
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.extract import extract_units
from pytest_summarybench.extract.config import ExtractionConfig
from pytest_summarybench.schemas import CodeUnit
from pytest_summarybench.settings import load_settings
from pytest_summarybench.store import Store
from tests.evaluators.downstream.conftest import CODEBASE
from tests.evaluators.downstream.scripted import ScriptedTaskModel

DOCSTRING = {"provider": "builtin", "model": "docstring"}


@pytest.fixture(scope="module")
def units() -> list[CodeUnit]:
    return extract_units(ExtractionConfig(root_path=str(CODEBASE))).units


@pytest.fixture
def make_ctx(tmp_path: Path, units: list[CodeUnit]) -> Callable[..., RunContext]:
    def build(server: Any, *, models: list[dict] | None = None, root: Path = CODEBASE,
              unit_list: list[CodeUnit] | None = None, sampled: int = 10,
              **overrides: Any) -> RunContext:
        chosen = unit_list if unit_list is not None else units
        settings = load_settings(None, {
            "codebase.root": str(root), "models.test": models or [DOCSTRING],
            "output.directory": str(tmp_path / "out"),
            "evaluation.downstream.completionModel": "local/task-model",
            "evaluation.downstream.apiEndpoint": server.base_url,
            "evaluation.downstream.sandbox.cpuS": 1,
            "evaluation.downstream.sandbox.memoryMb": 256,
            "evaluation.downstream.sandbox.wallS": 15, **overrides}, base_dir=tmp_path,
            families=BUILTIN_FAMILIES)
        store = Store(tmp_path / "store.sqlite")
        store.save_units("run", chosen, {u.id for u in sorted(chosen, key=lambda u: u.id)
                                         [:sampled]})
        return RunContext(settings, store, "run")

    return build


def _item(evaluator: Any, ctx: RunContext, task_id: str) -> MatrixItem:
    return next(i for i in evaluator.items(ctx) if i.variant == task_id)


def _summarized(evaluator: Any, ctx: RunContext) -> RunContext:
    """The context once the evaluator's ``prepare`` had every unit its tasks show
    summarized (the controller does it in a session)."""
    evaluator.prepare(ctx)
    return ctx.refreshed()


def test_prepare_summarizes_units_the_sample_left_out(fake_server: Callable[..., Any],
                                                      make_ctx: Callable[..., RunContext]
                                                      ) -> None:
    ctx = make_ctx(fake_server(respond=ScriptedTaskModel()), sampled=3)
    evaluator = BugLocalisationEvaluator()
    assert evaluator.skip_reason(ctx) is None
    shown = {uid for t in evaluator.tasks(ctx).values() for uid in t.unit_ids.values()}
    assert any(ctx.summary(uid, "builtin/docstring") is None for uid in shown)
    evaluator.prepare(ctx)
    ctx = ctx.refreshed()  # a context made after prepare reads the summaries it linked
    assert all(ctx.summary(uid, "builtin/docstring") is not None for uid in shown)
    items = evaluator.items(ctx)
    assert len(items) == 10 and {i.model_id for i in items} == {"builtin/docstring"}
    item = _item(evaluator, ctx, "bl-vat-rounding-down")
    assert item.unit_id == ctx.unit(item.unit_id).id and "calculate_vat" in item.label
    (record,) = evaluator.evaluate(item, ctx)
    assert set(record.metrics) == {"success", "partial"}
    assert record.details["taskModel"] == "local/task-model"
    json.dumps(record.details)


HOSTILE = {
    "loops-forever": ("def calculate_vat(net_cents, category):\n    while True:\n        pass\n",
                      "CPU time limit exceeded"),
    "forks-without-end": ("import os\n\ndef calculate_vat(net_cents, category):\n"
                          "    while True:\n        os.fork()\n", "process creation"),
    "allocates-without-bound": ("def calculate_vat(net_cents, category):\n    hoard = []\n"
                                "    while True:\n        hoard.append(bytearray(10 ** 7))\n",
                                "MemoryError"),
    "opens-a-connection": ("import socket\n\ndef calculate_vat(net_cents, category):\n"
                           "    socket.create_connection(('127.0.0.1', PORT), timeout=2)\n"
                           "    return 0\n", "network access"),
    "reads-keys": ("import os\n\ndef calculate_vat(net_cents, category):\n"
                   "    print(dict(os.environ))\n"
                   "    return len(os.environ['OPENAI_API_KEY']) * 0\n",
                   "KeyError: 'OPENAI_API_KEY'"),
    "writes-outside": ("def calculate_vat(net_cents, category):\n"
                       "    open(TARGET, 'w').write('planted')\n    return 0\n",
                       "writing outside the sandbox directory"),
}

#: Limits under which each hostile completion can meet only the limit its case is about,
#: however loaded the machine. The wall clock is far past any case's CPU need (none of
#: them is about the wall clock, and a passing case never waits for it): with 15 s, a
#: loop given 1 CPU second by ``cpuS`` and a few percent of a CPU by a loaded machine
#: reached the wall first. The allocation gets CPU seconds to spare (its 256 MB cost a
#: tenth of a second, more when the kernel has to reclaim memory for it, and that time is
#: the process's own), so that it ends on the memory limit it is about.
HOSTILE_LIMITS: dict[str, Any] = {"evaluation.downstream.sandbox.wallS": 120}
CASE_LIMITS: dict[str, dict[str, Any]] = {
    "allocates-without-bound": {"evaluation.downstream.sandbox.cpuS": 20}}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_completions_end_as_failed_tasks_with_the_reason(
        case: str, fake_server: Callable[..., Any], make_ctx: Callable[..., RunContext],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sentinel = "sk-DOWNSTREAM-SENTINEL-51c0"
    monkeypatch.setenv("OPENAI_API_KEY", sentinel)
    target = tmp_path / "planted.txt"
    answer: dict[str, str] = {}
    server = fake_server(respond=lambda body: f"```python\n{answer['code']}\n```")
    code, reason = HOSTILE[case]
    answer["code"] = code.replace("PORT", str(server.port)).replace("TARGET", repr(str(target)))
    ctx = make_ctx(server, **HOSTILE_LIMITS, **CASE_LIMITS.get(case, {}))
    evaluator = CompletionEvaluator()
    ctx = _summarized(evaluator, ctx)
    (record,) = evaluator.evaluate(_item(evaluator, ctx, "c-calculate-vat"), ctx)
    assert record.error is None
    assert record.metrics["pass_rate"] < 1.0 and record.metrics["success"] == 0.0
    assert reason in record.details["reason"]
    assert all(not t["passed"] or t["name"] == "returns_int" for t in record.details["tests"])
    # nothing outside the sandbox changed, nothing reached the server but the task call
    assert not target.exists()
    assert server.requests_by_path == {"/v1/chat/completions": 1}
    assert sentinel not in json.dumps(record.details)
    assert "rlimits" in record.details["sandboxLayers"]


def test_a_correct_completion_passes_every_test(fake_server: Callable[..., Any],
                                                make_ctx: Callable[..., RunContext]) -> None:
    ctx = make_ctx(fake_server(respond=ScriptedTaskModel()))
    evaluator = CompletionEvaluator()
    ctx = _summarized(evaluator, ctx)
    (record,) = evaluator.evaluate(_item(evaluator, ctx, "c-reserve-many"), ctx)
    assert record.metrics == {"similarity": 1.0, "pass_rate": 1.0, "success": 1.0}
    assert "reason" not in record.details and record.details["exactMatch"] is True


def test_task_model_errors_are_errors_with_the_reason(fake_server: Callable[..., Any],
                                                      make_ctx: Callable[..., RunContext]
                                                      ) -> None:
    server = fake_server(respond=ScriptedTaskModel(), faults=lambda n, body: "401")
    ctx = make_ctx(server)
    evaluator = FunctionSelectionEvaluator()
    ctx = _summarized(evaluator, ctx)
    with pytest.raises(EvaluationError, match=r"task model call failed: local/task-model: "):
        evaluator.evaluate(_item(evaluator, ctx, "fs-vat-rate-lookup"), ctx)


def test_a_model_without_a_summary_is_never_shown_to_the_task_model(
        fake_server: Callable[..., Any], make_ctx: Callable[..., RunContext]) -> None:
    """Issue 33: a misspelt model (no summary at all) was shown to the task model as
    "[No summary available]" for every candidate and scored from the names alone."""
    server = fake_server(respond=ScriptedTaskModel())
    ctx = make_ctx(server)
    evaluator = FunctionSelectionEvaluator()
    item = _item(evaluator, ctx, "fs-vat-rate-lookup")
    with pytest.raises(EvaluationError):       # the controller asks nothing for it
        evaluator.requests(item, ctx, {})
    with pytest.raises(EvaluationError, match=r"^no summary of builtin/docstring to show "
                                              r"the task model: no summary was generated"):
        evaluator.evaluate(item, ctx)
    assert server.chat_requests == 0


def test_a_model_of_the_task_models_family_is_skipped(fake_server: Callable[..., Any],
                                                      make_ctx: Callable[..., RunContext]
                                                      ) -> None:
    server = fake_server(respond=ScriptedTaskModel())
    ctx = make_ctx(server, models=[{"provider": "openai", "model": "gpt-4o",
                                    "apiEndpoint": server.base_url}],
                   **{"evaluation.downstream.completionModel": "openai/gpt-4o-mini"})
    evaluator = FunctionSelectionEvaluator()
    with pytest.raises(pytest.skip.Exception, match="same family \\(openai\\)"):
        evaluator.evaluate(_item(evaluator, ctx, "fs-vat-rate-lookup"), ctx)
    assert server.chat_requests == 0
    # Every model under test shares it: the family says so once, as its skip line.
    reason = evaluator.skip_reason(ctx)
    assert reason is not None and "as every model under test (openai/gpt-4o)" in reason


def test_a_model_of_the_task_models_family_beside_others_has_no_summary_written_for_it(
        fake_server: Callable[..., Any], make_ctx: Callable[..., RunContext]) -> None:
    """The new user's pass on rich: the downstream items of the openai models were skipped,
    yet their tasks' candidates were summarized for them all the same (105 summaries each
    for a sample of 50). A model whose items are skipped is named with the reason and
    asks for no summary."""
    server = fake_server(respond=ScriptedTaskModel())
    ctx = make_ctx(server, models=[{"provider": "openai", "model": "gpt-4o",
                                    "apiEndpoint": server.base_url},
                                   {"provider": "builtin", "model": "docstring"}],
                   **{"evaluation.downstream.completionModel": "openai/gpt-4o-mini"})
    evaluator = FunctionSelectionEvaluator()
    assert evaluator.skip_reason(ctx) is None
    [left_out] = evaluator.models_left_out(ctx)
    assert left_out == "openai/gpt-4o"
    items = {i.model_id: i for i in evaluator.items(ctx) if i.variant == "fs-vat-rate-lookup"}
    assert evaluator.summaries(items["openai/gpt-4o"], ctx) == []
    assert evaluator.summaries(items["builtin/docstring"], ctx)


def test_answers_naming_no_candidate_score_zero_with_the_reason(
        fake_server: Callable[..., Any], make_ctx: Callable[..., RunContext]) -> None:
    server = fake_server(respond=lambda body: '{"predicted_file": "src/unknown.rs"}')
    ctx = make_ctx(server)
    evaluator = BugLocalisationEvaluator()
    ctx = _summarized(evaluator, ctx)
    (record,) = evaluator.evaluate(_item(evaluator, ctx, "bl-stale-search"), ctx)
    assert record.metrics == {"success": 0.0, "partial": 0.0}
    assert "names no candidate file" in record.details["reason"]


def test_tasks_are_built_for_a_codebase_without_a_task_set(
        fake_server: Callable[..., Any], make_ctx: Callable[..., RunContext],
        tmp_path: Path) -> None:
    root = tmp_path / "code"
    shutil.copytree(CODEBASE / "python", root / "python")
    built_units = extract_units(ExtractionConfig(root_path=str(root))).units
    ctx = make_ctx(fake_server(respond=ScriptedTaskModel()), root=root,
                   unit_list=built_units, sampled=len(built_units))
    selection, completion = FunctionSelectionEvaluator(), CompletionEvaluator()
    assert BugLocalisationEvaluator().skip_reason(ctx) == (
        "no bug_localisation tasks for this codebase: write a task set "
        "(evaluation.downstream.tasksFile; see fixtures/tasks/README.md)")
    fs_tasks = selection.tasks(ctx)
    assert 5 <= len(fs_tasks) <= 20 and all(t.startswith("auto-fs-") for t in fs_tasks)
    assert all(len(t.task.candidates) >= 3 for t in fs_tasks.values())
    c_tasks = completion.tasks(ctx)
    assert c_tasks and all(not t.task.tests for t in c_tasks.values())
    selection.prepare(ctx)
    ctx = ctx.refreshed()
    item = selection.items(ctx)[0]
    (record,) = selection.evaluate(item, ctx)
    assert set(record.metrics) == {"success", "partial"}
    completion.prepare(ctx)
    ctx = ctx.refreshed()
    (record,) = completion.evaluate(completion.items(ctx)[0], ctx)
    assert set(record.metrics) == {"similarity"} and record.metrics["similarity"] == 1.0
    summary = completion.summarize([record], ctx)
    assert summary["byModel"]["builtin/docstring"] == {"scored": 1, "similarity": 1.0}
    # the same seed builds the same tasks
    assert list(FunctionSelectionEvaluator().tasks(ctx)) == list(fs_tasks)


def test_tasks_on_code_the_run_left_out_are_left_out(fake_server: Callable[..., Any],
                                                     make_ctx: Callable[..., RunContext],
                                                     units: list[CodeUnit]) -> None:
    python_only = [u for u in units if u.language == "python"]
    ctx = make_ctx(fake_server(respond=ScriptedTaskModel()), unit_list=python_only)
    reason = BugLocalisationEvaluator().skip_reason(ctx)
    assert reason is not None and reason.startswith(
        "all 10 bug_localisation tasks were left out, e.g. ")
    assert "exists but this run did not extract it" in reason
    selection = FunctionSelectionEvaluator()
    assert selection.skip_reason(ctx) is None
    kept = selection.tasks(ctx)
    assert {"fs-hold-whole-basket", "fs-return-held-copies"} <= set(kept)
    assert "fs-isbn10-check" not in kept
    summary = selection.summarize([], ctx)
    assert any("other/isbn.rs" in line for line in summary["excludedTasks"])
    assert len(CompletionEvaluator().tasks(ctx)) == 9
