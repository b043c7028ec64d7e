"""Where a run's tasks come from, and the task model that performs them.

Tasks: the ``evaluation.downstream.tasksFile`` location when set, else a task set shipped
next to the codebase (``<codebase>/../tasks/<codebase dir name>/``, which is how the
bundled ``fixtures/tasks/sample_codebase`` is found), and, for a task type neither
provides, tasks built from the codebase (``build.py``) unless ``buildTasks`` is off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...llm.families import PROVIDER_FAMILIES, family_of
from ...schemas import ModelConfig
from ...vocabulary import PROVIDERS
from .tasks import (
    TASK_TYPES,
    Loaded,
    TaskExcluded,
    TaskFileError,
    TaskType,
    UnitIndex,
    resolve,
    task_files,
)

if TYPE_CHECKING:
    from ...context import RunContext
    from ...settings import Settings

#: The skip reason when no task model is configured.
NO_TASK_MODEL = ("no task model configured: set evaluation.downstream.completionModel: "
                 "PROVIDER/MODEL in summarybench.yaml (or the id of a model in models.judge)")
#: Providers a bare model name is served by, by the model's family (spec 11.2 writes
#: ``completionModel: claude-3-5-sonnet-20241022``): those serving their own family only.
_FAMILY_PROVIDERS = {family: provider for provider, family in PROVIDER_FAMILIES.items()}


class TaskModelError(ValueError):
    """``completionModel`` names no usable model; the message says what is accepted."""


def task_model(settings: Settings) -> ModelConfig | None:
    """The configured task model (None when there is none).

    ``completionModel`` may be the id or model name of a model configured in
    ``models.judge`` or ``models.test`` (its endpoint, limits and prices apply),
    ``PROVIDER/MODEL`` (``apiEndpoint`` of the downstream section applies), or a bare
    model name whose family says the provider (``claude-...`` -> anthropic).
    """
    ds = settings.evaluation.downstream
    spec = (ds.completion_model or "").strip()
    if not spec:
        return None
    configured = [e.to_model_config() for e in (*settings.models.judge, *settings.models.test)]
    for model in configured:
        if spec == model.id:
            return model
    named = [m for m in configured if m.model_name == spec]
    if len(named) == 1:
        return named[0]
    provider, sep, name = spec.partition("/")
    if sep and provider in PROVIDERS and name:
        if provider == "builtin":
            raise TaskModelError(f"evaluation.downstream.completionModel = {spec!r}: built-in "
                                 "summarizers cannot perform tasks; name an LLM")
        return ModelConfig(provider=provider, model_name=name,  # type: ignore[arg-type]
                           api_endpoint=ds.api_endpoint, temperature=0.0,
                           max_tokens=ds.max_tokens)
    guess = _FAMILY_PROVIDERS.get(family_of(ModelConfig(provider="local", model_name=spec,
                                                        id="probe")))
    if guess is not None:
        return ModelConfig(provider=guess, model_name=spec,  # type: ignore[arg-type]
                           api_endpoint=ds.api_endpoint, temperature=0.0,
                           max_tokens=ds.max_tokens)
    raise TaskModelError(
        f"evaluation.downstream.completionModel = {spec!r}: not the id of a model in "
        f"models.judge or models.test, and not PROVIDER/MODEL with PROVIDER one of "
        f"{', '.join(p for p in PROVIDERS if p != 'builtin')}")


def task_location(settings: Settings) -> Path | None:
    """The configured or conventional task-set location (None when there is none)."""
    ds = settings.evaluation.downstream
    if ds.tasks_file:
        return settings.resolve(ds.tasks_file)
    root = settings.codebase_root.resolve()
    sibling = root.parent / "tasks" / root.name
    return sibling if sibling.is_dir() else None


@dataclass
class TaskSet:
    """A run's tasks by type, and the tasks left out because their code was not extracted."""

    tasks: dict[TaskType, list[Loaded[Any]]] = field(default_factory=dict)
    excluded: dict[TaskType, list[str]] = field(default_factory=dict)
    """Per type, why each left-out task was left out."""


def load_tasks(ctx: RunContext) -> TaskSet:
    """Every task of the run, validated and resolved against the extracted units.

    Raises ``TaskFileError`` for a bad task file (a configured ``tasksFile`` that does
    not exist included).
    """
    settings = ctx.settings
    location = task_location(settings)
    found: dict[TaskType, list[Loaded[Any]]] = {}
    if location is not None:
        if not location.exists():
            raise TaskFileError(str(location), 0, "tasksFile",
                                "no such file or directory (evaluation.downstream.tasksFile)")
        found = task_files(location)
    index = UnitIndex(ctx.all_units, settings.codebase_root)
    out = TaskSet()
    for kind in TASK_TYPES:
        if kind not in found and settings.evaluation.downstream.build_tasks:
            from .build import build_tasks

            found[kind] = build_tasks(kind, ctx)
        for loaded in found.get(kind, []):
            try:
                out.tasks.setdefault(kind, []).append(resolve(loaded, index))
            except TaskExcluded as exc:
                out.excluded.setdefault(kind, []).append(str(exc))
    return out
