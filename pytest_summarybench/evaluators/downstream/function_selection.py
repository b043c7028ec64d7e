"""``downstream/function_selection`` (docs/methods.md#downstream-function-selection): pick the
function for a task.

Per task x model under test: the task model reads the task and the summaries of the
candidate functions (as the model under test wrote them) and names one. Candidates are
listed by qualified name (``path::name`` where two candidates share a name). Metrics:
``success`` (1 for the right function) and ``partial``: 1 for the right function, 0.5 for
a sibling of it (same file and same enclosing class or module level: the near miss
between ``apply_percentage_discount`` and ``apply_fixed_discount``), 0 otherwise or for an
answer that names no candidate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ...schemas import ScoreRecord
from ..base import Component
from .answers import AnswerError, match_candidate, parse_choice
from .base import DownstreamEvaluator
from .prompts import function_selection_prompt
from .tasks import FunctionSelectionTask, Loaded, UnitRef

if TYPE_CHECKING:
    from ...context import RunContext
    from ...schemas import ModelConfig

SIBLING_CREDIT = 0.5


def titles(candidates: list[UnitRef]) -> dict[str, UnitRef]:
    """How each candidate is listed: its qualified name, or ``path::name`` if shared."""
    names = [c.name for c in candidates]
    return {(c.name if names.count(c.name) == 1 else str(c)): c for c in candidates}


def partial_credit(chosen: UnitRef | None, correct: UnitRef) -> float:
    if chosen is None:
        return 0.0
    if chosen.key() == correct.key():
        return 1.0
    same_parent = chosen.name.rpartition(".")[0] == correct.name.rpartition(".")[0]
    return SIBLING_CREDIT if chosen.path == correct.path and same_parent else 0.0


class FunctionSelectionEvaluator(DownstreamEvaluator):
    name: ClassVar[str] = "downstream/function_selection"
    kind: ClassVar = "function_selection"
    components: ClassVar[tuple[Component, ...]] = (
        Component("success", "function_selection", "function selection accuracy"),)

    def _functions(self, loaded: Loaded[Any], model: ModelConfig, ctx: RunContext
                   ) -> list[tuple[str, str]]:
        listed = titles(loaded.task.candidates)
        return [(title, self.summary_text(ctx, loaded.unit_ids[str(ref)], model.id))
                for title, ref in listed.items()]

    def prompt(self, loaded: Loaded[Any], model: ModelConfig, ctx: RunContext) -> str:
        return function_selection_prompt(task_description=loaded.task.description,
                                         functions=self._functions(loaded, model, ctx))

    def score(self, loaded: Loaded[Any], model: ModelConfig, worker: ModelConfig,
              ctx: RunContext) -> list[ScoreRecord]:
        task: FunctionSelectionTask = loaded.task
        listed = titles(task.candidates)
        completion = self.call(worker, self.prompt(loaded, model, ctx), ctx)
        details: dict[str, Any] = {"taskId": task.id, "task": loaded.source,
                                   "correct": str(task.correct),
                                   **self.call_details(worker, completion)}
        chosen: UnitRef | None = None
        try:
            choice = parse_choice(completion.text, "selected_function")
        except AnswerError as exc:
            details["reason"] = str(exc)
        else:
            title = match_candidate(choice.answer, list(listed), separators=".:/")
            chosen = listed[title] if title is not None else None
            details.update(answer=choice.answer, confidence=choice.confidence,
                           reasoning=choice.reasoning)
            if chosen is None:
                details["reason"] = f"the answer {choice.answer!r} names no candidate function"
        details["selected"] = str(chosen) if chosen else None
        metrics = {"success": float(chosen is not None and chosen.key() == task.correct.key()),
                   "partial": partial_credit(chosen, task.correct)}
        return [ScoreRecord(unit_id=loaded.target_id, model_id=model.id, evaluator=self.name,
                            metrics=metrics, details=details)]
