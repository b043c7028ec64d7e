"""Issue 18, item 1 (second half): without a kernel boundary, model-written code does not
run unless the user opts in; when they do, the record and the report say which layers
held. On the code before this issue, ``namespaces: false`` ran the tasks as root with only
the guard active, scored them normally and said nothing."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_summarybench.context import RunContext
from pytest_summarybench.evaluators.downstream.completion import CompletionEvaluator
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.extract import extract_units
from pytest_summarybench.extract.config import ExtractionConfig
from pytest_summarybench.sandbox import KERNEL_BOUNDARIES, SandboxWarning
from pytest_summarybench.settings import load_settings
from pytest_summarybench.store import Store
from tests.evaluators.downstream.conftest import CODEBASE
from tests.evaluators.downstream.scripted import ScriptedTaskModel


def _ctx(tmp_path: Path, server: Any, **sandbox: Any) -> RunContext:
    units = extract_units(ExtractionConfig(root_path=str(CODEBASE))).units
    settings = load_settings(None, {
        "codebase.root": str(CODEBASE),
        "models.test": [{"provider": "builtin", "model": "docstring"}],
        "output.directory": str(tmp_path / "out"),
        "evaluation.downstream.completionModel": "local/task-model",
        "evaluation.downstream.apiEndpoint": server.base_url,
        **{f"evaluation.downstream.sandbox.{k}": v for k, v in sandbox.items()}},
        base_dir=tmp_path, families=BUILTIN_FAMILIES)
    store = Store(tmp_path / "store.sqlite")
    store.save_units("run", units, {u.id for u in units})
    return RunContext(settings, store, "run")


def test_without_a_boundary_the_completion_task_is_skipped_with_the_reason(
        tmp_path: Path, fake_server: Callable[..., Any]) -> None:
    ctx = _ctx(tmp_path, fake_server(respond=ScriptedTaskModel()), boundary="none")
    reason = CompletionEvaluator().skip_reason(ctx) or ""
    assert "model-written code will not run here" in reason
    assert "allowWithoutBoundary" in reason and "sandbox.boundary: none" in reason


def test_an_opted_in_run_says_which_layers_held(tmp_path: Path,
                                                fake_server: Callable[..., Any]) -> None:
    ctx = _ctx(tmp_path, fake_server(respond=ScriptedTaskModel()), boundary="none",
               allowWithoutBoundary=True)
    evaluator = CompletionEvaluator()
    assert evaluator.skip_reason(ctx) is None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluator.prepare(ctx)
    ctx = ctx.refreshed()  # with the summaries prepare wrote
    assert any(issubclass(w.category, SandboxWarning) and "WITHOUT a kernel boundary"
               in str(w.message) for w in caught)
    item = next(i for i in evaluator.items(ctx) if i.variant == "c-reserve-many")
    (record,) = evaluator.evaluate(item, ctx)
    layers = record.details["sandboxLayers"]
    assert not set(layers) & set(KERNEL_BOUNDARIES) and "rlimits" in layers
    summary = evaluator.summarize([record], ctx)
    assert summary["sandbox"]["runsWithKernelBoundary"] == 0
    assert "had no kernel boundary" in json.dumps(summary["notes"])


def test_by_default_every_run_has_a_kernel_boundary(tmp_path: Path,
                                                    fake_server: Callable[..., Any]) -> None:
    from tests.sandbox.layers import limits_for

    limits_for("all")
    ctx = _ctx(tmp_path, fake_server(respond=ScriptedTaskModel()))
    evaluator = CompletionEvaluator()
    evaluator.prepare(ctx)
    ctx = ctx.refreshed()
    item = next(i for i in evaluator.items(ctx) if i.variant == "c-reserve-many")
    (record,) = evaluator.evaluate(item, ctx)
    assert record.metrics["pass_rate"] == 1.0
    assert set(record.details["sandboxLayers"]) & set(KERNEL_BOUNDARIES)
    assert "notes" not in evaluator.summarize([record], ctx)
