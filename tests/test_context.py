"""The run context never changes once made, and resolves the models' roles once, lazily.

A narrower or fresher view is a new context; the helper model (query writing and
``contrastive/llm``) is the first judge of none of the families of the models under test,
the same whichever models a process selected.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.context import RunContext
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.roles import NO_TASK_MODEL, TaskModelError
from pytest_summarybench.schemas import CodeUnit, GeneratedSummary, GenerationMetadata
from pytest_summarybench.schemas.units import UnitMetadata
from pytest_summarybench.settings import load_settings
from pytest_summarybench.store import Store

TEST = [{"provider": "openai", "model": "gpt-4o"},
        {"provider": "anthropic", "model": "claude-3-5-sonnet-20241022"}]


def _unit(i: int) -> CodeUnit:
    return CodeUnit(id=f"u{i}", path=f"m{i}.py", name=f"f{i}", type="function",
                    language="python", content=f"def f{i}():\n    return {i}\n",
                    metadata=UnitMetadata(start_line=1, end_line=2))


def _summary(unit_id: str, model_id: str) -> GeneratedSummary:
    return GeneratedSummary(
        id=f"s-{unit_id}-{model_id}", code_unit_id=unit_id, model_id=model_id,
        summary=f"summary of {unit_id}",
        generation_metadata=GenerationMetadata(model_name=model_id, model_version="v",
                                               prompt_version="p", temperature=0.0,
                                               max_tokens=10, generated_at="t", latency_ms=1.0,
                                               input_tokens=1, output_tokens=1))


def _context(tmp_path: Path, **overrides: Any) -> RunContext:
    settings = load_settings(None, {"output.directory": str(tmp_path / "out"), **overrides},
                             base_dir=tmp_path, families=BUILTIN_FAMILIES)
    store = Store(tmp_path / "store.sqlite")
    units = [_unit(i) for i in range(4)]
    store.save_units("run", units, {"u0", "u1"})
    return RunContext(settings, store, "run")


def test_a_context_cannot_be_changed(tmp_path: Path) -> None:
    """Payload: assign to a context's fields. Afterwards: refused, the context as made."""
    ctx = _context(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.run_id = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.chosen_models = ()  # type: ignore[misc]
    assert ctx.run_id == "run"


def test_narrower_and_fresher_views_are_new_contexts(tmp_path: Path) -> None:
    ctx = _context(tmp_path, **{"models.test": TEST})
    assert [m.id for m in ctx.models] == ["anthropic/claude-3-5-sonnet-20241022",
                                          "openai/gpt-4o"]
    assert [u.id for u in ctx.units] == ["u0", "u1"]

    narrow = ctx.restricted({"openai/gpt-4o"})
    assert [m.id for m in narrow.models] == ["openai/gpt-4o"]
    assert len(ctx.models) == 2  # the original is unchanged

    other = narrow.with_units([ctx.unit("u3")])
    assert [u.id for u in other.units] == ["u3"] and other.models == narrow.models
    assert [u.id for u in narrow.units] == ["u0", "u1"]
    # the units read from the store are shared, not read again
    assert other.stored_units is ctx.stored_units

    assert ctx.summary("u0", "openai/gpt-4o") is None
    ctx.store.save_summaries([_summary("u0", "openai/gpt-4o")])
    ctx.store.link_summary("run", "u0", "openai/gpt-4o", "s-u0-openai/gpt-4o")
    assert ctx.summary("u0", "openai/gpt-4o") is None  # what it read, it keeps
    fresh = ctx.refreshed()
    assert fresh.summary("u0", "openai/gpt-4o") is not None
    assert fresh.models == ctx.models and fresh.units == ctx.units


def test_the_default_run_asks_no_role_of_anyone(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    roles = ctx.roles
    assert ctx.roles is roles  # resolved once per context
    assert vars(roles) == {"settings": ctx.settings, "models": tuple(ctx.models),
                           "judges": ()}  # nothing worked out until asked
    assert roles.helper is None
    assert roles.helper_reason is not None and roles.helper_reason.startswith(
        "no judge model is configured; add one under models.judge")
    assert roles.task is None
    assert roles.judge_plan.models and not any(a.judges for a in roles.judge_plan.models.values())


def test_the_helper_is_the_first_judge_of_no_family_under_test(tmp_path: Path) -> None:
    judges = [{"provider": "openai", "model": "gpt-4o-mini"},         # same family as gpt-4o
              {"provider": "google", "model": "gemini-1.5-pro"},      # eligible
              {"provider": "anthropic", "model": "claude-3-opus"}]    # same as claude
    ctx = _context(tmp_path, **{"models.test": TEST, "models.judge": judges})
    assert [j.id for j in ctx.judges][0] == "anthropic/claude-3-opus"  # what judges[0] was
    assert ctx.roles.helper is not None
    assert ctx.roles.helper.id == "google/gemini-1.5-pro"
    assert ctx.roles.helper_reason is None
    # A process that selected one model picks the same helper (its queries are shared).
    assert ctx.restricted({"openai/gpt-4o"}).roles.helper == ctx.roles.helper
    # The judge plan is over the context's own models.
    assert set(ctx.restricted({"openai/gpt-4o"}).roles.judge_plan.models) == {"openai/gpt-4o"}


def test_no_eligible_helper_says_why(tmp_path: Path) -> None:
    judges = [{"provider": "openai", "model": "gpt-4o-mini"},
              {"provider": "anthropic", "model": "claude-3-opus"}]
    ctx = _context(tmp_path, **{"models.test": TEST, "models.judge": judges})
    assert ctx.roles.helper is None
    reason = ctx.roles.helper_reason or ""
    assert "anthropic/claude-3-opus: same family as anthropic/claude-3-5-sonnet" in reason
    assert "openai/gpt-4o-mini: same family as openai/gpt-4o" in reason
    # the advice is valid: a judge of neither family under test
    assert "add a judge of another family (--sb-judge google/gemini-2.5-pro)" in reason


def test_the_task_model_role(tmp_path: Path) -> None:
    ctx = _context(tmp_path, **{"evaluation.downstream.completionModel": "openai/gpt-4o"})
    assert ctx.roles.task is not None and ctx.roles.task.id == "openai/gpt-4o"
    bad = _context(tmp_path, **{"evaluation.downstream.completionModel": "builtin/lead"})
    with pytest.raises(TaskModelError, match="built-in summarizers cannot perform tasks"):
        _ = bad.roles.task
    assert NO_TASK_MODEL.startswith("no task model configured")


def test_the_endpoints_are_the_sessions(tmp_path: Path) -> None:
    """The rate limiters and breakers travel with the context: every context made from
    one (``restricted``, ``refreshed``) shares them; a context made anew (another
    session's) has its own, so two sessions in one process never share a limiter."""
    ctx = _context(tmp_path)
    model = ctx.models[0]
    assert ctx.refreshed().endpoints is ctx.endpoints
    assert ctx.restricted([model.id]).endpoints is ctx.endpoints
    assert ctx.refreshed().endpoints.limiter(model) is ctx.endpoints.limiter(model)
    other = _context(tmp_path)
    assert other.endpoints is not ctx.endpoints
    assert other.endpoints.breaker(model) is not ctx.endpoints.breaker(model)
