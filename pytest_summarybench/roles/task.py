"""The task model of the downstream family (``evaluation.downstream.completionModel``):
the model that performs every task, for every model under test."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.errors import InputError
from ..core.vocabulary import PROVIDERS
from ..llm.families import PROVIDER_FAMILIES, family_of, same_family
from ..schemas import ModelConfig

if TYPE_CHECKING:
    from ..settings import Settings

#: The skip reason when no task model is configured.
NO_TASK_MODEL = ("no task model configured: set evaluation.downstream.completionModel: "
                 "PROVIDER/MODEL in summarybench.yaml (or the id of a model in models.judge)")
#: Providers a bare model name is served by, by the model's family (``completionModel:
#: claude-3-5-sonnet-20241022`` is accepted, docs/configuration.md#evaluation): those serving
#: their own family only.
_FAMILY_PROVIDERS = {family: provider for provider, family in PROVIDER_FAMILIES.items()}


class TaskModelError(InputError, ValueError):
    """``completionModel`` names no usable model; the message says what is accepted."""


def task_model(settings: Settings) -> ModelConfig | None:
    """The configured task model (None when there is none), with the family
    ``evaluation.downstream.family`` gives it."""
    model = _named_task_model(settings)
    family = settings.evaluation.downstream.family
    if model is None or not family:
        return model
    return model.model_copy(update={"family": family})


def _named_task_model(settings: Settings) -> ModelConfig | None:
    """The model ``completionModel`` names (None when there is none).

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


def same_family_as_all(task: ModelConfig, models: Sequence[ModelConfig]) -> str | None:
    """Why ``task`` can perform no task: it shares a family with every model under test,
    whose summaries it would read (a task is never done by a model of the summarizer's own
    family); None when some model under test is of another family."""
    if not models or len(same_family_models(task, models)) < len(models):
        return None
    return (f"task model {task.id} is of the same family ({family_of(task)}) as every model "
            f"under test ({', '.join(m.id for m in models)}), whose summaries it would read: "
            "set one of another family with `summarybench config --task-model "
            "PROVIDER/MODEL`, or give it a family of its own with `summarybench config "
            "--task-family NAME`")


def same_family_models(task: ModelConfig, models: Sequence[ModelConfig]) -> list[ModelConfig]:
    """The models under test that share a family with ``task``: it performs no task on
    their summaries."""
    return [m for m in models if same_family(task, m)]


def same_family_as_some(task: ModelConfig, models: Sequence[ModelConfig]) -> str | None:
    """Why the downstream items of some (not all) models under test are skipped: they share
    the task model's family; None when none does, or all do (``same_family_as_all``). The
    text names the models and the commands that fix it."""
    shared = same_family_models(task, models)
    if not shared or len(shared) == len(models):
        return None
    return (f"task model {task.id} is of the same family ({family_of(task)}) as "
            f"{', '.join(m.id for m in shared)}, whose summaries it would read, so their "
            "downstream items are skipped: give them another family (`summarybench set-model "
            f"{shared[0].id} --family NAME`), give the task model one (`summarybench config "
            "--task-family NAME`), or set a task model of another family (`summarybench "
            "config --task-model PROVIDER/MODEL`)")


def task_warnings(settings: Settings) -> list[str]:
    """What to warn about before a run: a task model that shares a family with a model under
    test performs no task on its summaries (with every one, downstream is skipped; with
    some, their downstream items are), or a ``completionModel`` that names no usable model."""
    try:
        worker = task_model(settings)
    except TaskModelError as exc:
        return [str(exc)]
    if worker is None or not settings.evaluation.downstream.enabled:
        return []
    models = settings.test_models()
    every = same_family_as_all(worker, models)
    if every is not None:
        return [f"{every}; downstream will be skipped"]
    some = same_family_as_some(worker, models)
    return [] if some is None else [some]
