"""Which model plays which role in a run (``vocabulary.Role``), resolved once per run
context and only when asked: a default offline run has no judge and asks for none.

- ``judge``: the plan (docs/methods.md#judge-selection) of which judges judge which model and pair
  (``judges.py``), over the context's models under test;
- ``helper``: the model that writes retrieval queries and picks options for
  ``contrastive/llm``: the first judge (by id) of none of the families of the models under
  test, so that no model is helped by its own family;
- ``task``: the downstream family's task model (``evaluation.downstream.completionModel``,
  ``task.py``).

The helper is chosen against every configured model under test, not the context's
selection (``-k``): every process of a run, whatever it selected, agrees on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from ..schemas import ModelConfig
from .advice import example_judge, how_to_add
from .judges import JudgePlan, exclusion_reason, plan_judges
from .task import task_model

if TYPE_CHECKING:
    from ..settings import Settings


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
        """The judges of every model under test and every pair of them
        (docs/methods.md#judge-selection)."""
        section = self.settings.evaluation.judge
        return plan_judges(self.models, self.judges, min_judges=section.min_judges,
                           max_judges=section.max_judges, allow_fewer=section.allow_fewer,
                           extra=section.family_patterns)

    @cached_property
    def _helper(self) -> tuple[ModelConfig | None, str | None]:
        targets = self.settings.test_models()
        extra = self.settings.evaluation.judge.family_patterns
        if not self.judges:
            return None, f"no judge model is configured; {how_to_add(targets, extra)}"
        why: list[str] = []
        for judge in self.judges:
            reason = exclusion_reason(judge, targets, extra)
            if reason is None:
                return judge, None
            why.append(f"{judge.id}: {reason}")
        return None, ("no judge can help, each shares a family with a model under test ("
                      + "; ".join(why) + "); add a judge of another family ("
                      + example_judge(targets, extra) + ") or fix family: in models.judge")

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
