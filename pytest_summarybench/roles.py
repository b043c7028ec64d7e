"""Which model plays which role in a run (``vocabulary.Role``), resolved once per run
context and only when asked: a default offline run has no judge and asks for none.

- ``judge``: the spec 5.3 plan of which judges judge which model and pair
  (``evaluators/judge/selection.py``), over the context's models under test;
- ``helper``: the model that writes retrieval queries and picks options for
  ``contrastive/llm``: the first judge (by id) of none of the families of the models under
  test, so that no model is helped by its own family;
- ``task``: the downstream family's task model (``evaluation.downstream.completionModel``).

The helper is chosen against every configured model under test, not the context's
selection (``-k``): every process of a run, whatever it selected, agrees on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from .llm.families import PROVIDER_FAMILIES, family_of
from .schemas import ModelConfig
from .vocabulary import PROVIDERS

if TYPE_CHECKING:
    from .evaluators.judge.selection import JudgePlan
    from .settings import Settings

#: The skip reason when no task model is configured.
NO_TASK_MODEL = ("no task model configured: set evaluation.downstream.completionModel: "
                 "PROVIDER/MODEL in summarybench.yaml (or the id of a model in models.judge)")
#: Providers a bare model name is served by, by the model's family (spec 11.2 writes
#: ``completionModel: claude-3-5-sonnet-20241022``): those serving their own family only.
_FAMILY_PROVIDERS = {family: provider for provider, family in PROVIDER_FAMILIES.items()}


class TaskModelError(ValueError):
    """``completionModel`` names no usable model; the message says what is accepted."""


@dataclass(frozen=True, eq=False)
class Roles:
    """The models of a run by role; each is worked out on first use."""

    settings: Settings
    models: tuple[ModelConfig, ...]
    """The models under test of the context (those the judge plan covers)."""
    judges: tuple[ModelConfig, ...]
    """The configured judges, by id."""

    @cached_property
    def judge_plan(self) -> JudgePlan:
        """Spec 5.3: the judges of every model under test and every pair of them."""
        from .evaluators.judge.selection import plan_judges

        section = self.settings.evaluation.judge
        return plan_judges(self.models, self.judges, min_judges=section.min_judges,
                           max_judges=section.max_judges, allow_fewer=section.allow_fewer,
                           extra=section.family_patterns)

    @cached_property
    def _helper(self) -> tuple[ModelConfig | None, str | None]:
        from .evaluators.judge.selection import HOW_TO_ADD, exclusion_reason

        if not self.judges:
            return None, f"no judge model is configured; {HOW_TO_ADD}"
        targets = self.settings.test_models()
        extra = self.settings.evaluation.judge.family_patterns
        why: list[str] = []
        for judge in self.judges:
            reason = exclusion_reason(judge, targets, extra)
            if reason is None:
                return judge, None
            why.append(f"{judge.id}: {reason}")
        return None, ("no judge can help, each shares a family with a model under test ("
                      + "; ".join(why) + f"); {HOW_TO_ADD}, of another family")

    @property
    def helper(self) -> ModelConfig | None:
        """The helper model (None when no judge is eligible: ``helper_reason`` says why)."""
        return self._helper[0]

    @property
    def helper_reason(self) -> str | None:
        """Why there is no helper model (None when there is one)."""
        return self._helper[1]

    @cached_property
    def task(self) -> ModelConfig | None:
        """The task model (None when none is configured); ``TaskModelError`` when
        ``completionModel`` names none that can be used."""
        return task_model(self.settings)


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
