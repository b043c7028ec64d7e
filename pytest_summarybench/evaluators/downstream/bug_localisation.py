"""``downstream/bug_localisation`` (docs/methods.md#downstream-bug-localisation): find the buggy
file from file summaries.

Per task x model under test: the task model reads the bug report and the file-level
summaries of the candidate files (as the model under test wrote them) and names a file.
Metrics: ``success`` (1 when the named file is the buggy one; the answer may leave out a
unique directory prefix, see ``downstream/answers.py``) and ``partial``: 1 for the right
file, 0.5 for another file in the same directory (the right component, the wrong file),
0 otherwise or for an answer that names no candidate.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any, ClassVar

from ...schemas import ScoreRecord
from ..base import Component
from .answers import AnswerError, match_candidate, parse_choice
from .base import DownstreamEvaluator
from .prompts import bug_localisation_prompt
from .tasks import BugLocalisationTask, Loaded

if TYPE_CHECKING:
    from ...context import RunContext
    from ...schemas import ModelConfig

SAME_DIRECTORY_CREDIT = 0.5


def partial_credit(predicted: str | None, actual: str) -> float:
    if predicted is None:
        return 0.0
    if predicted == actual:
        return 1.0
    return SAME_DIRECTORY_CREDIT if posixpath.dirname(predicted) == posixpath.dirname(
        actual) else 0.0


class BugLocalisationEvaluator(DownstreamEvaluator):
    name: ClassVar[str] = "downstream/bug_localisation"
    kind: ClassVar = "bug_localisation"
    components: ClassVar[tuple[Component, ...]] = (
        Component("success", "bug_localization", "bug localization accuracy"),)

    def _files(self, loaded: Loaded[Any], model: ModelConfig, ctx: RunContext
               ) -> list[tuple[str, str]]:
        task: BugLocalisationTask = loaded.task
        return [(path, self.summary_text(ctx, loaded.unit_ids[path], model.id))
                for path in task.candidate_files]

    def prompt(self, loaded: Loaded[Any], model: ModelConfig, ctx: RunContext) -> str:
        return bug_localisation_prompt(bug_description=loaded.task.description,
                                       files=self._files(loaded, model, ctx))

    def score(self, loaded: Loaded[Any], model: ModelConfig, worker: ModelConfig,
              ctx: RunContext) -> list[ScoreRecord]:
        task: BugLocalisationTask = loaded.task
        completion = self.call(worker, self.prompt(loaded, model, ctx), ctx)
        details: dict[str, Any] = {"taskId": task.id, "task": loaded.source,
                                   "buggyFile": task.buggy_file,
                                   **self.call_details(worker, completion)}
        try:
            choice = parse_choice(completion.text, "predicted_file")
        except AnswerError as exc:
            predicted = None
            details["reason"] = str(exc)
        else:
            predicted = match_candidate(choice.answer, task.candidate_files, separators="/")
            details.update(answer=choice.answer, confidence=choice.confidence,
                           reasoning=choice.reasoning)
            if predicted is None:
                details["reason"] = f"the answer {choice.answer!r} names no candidate file"
        details["predictedFile"] = predicted
        metrics = {"success": float(predicted == task.buggy_file),
                   "partial": partial_credit(predicted, task.buggy_file)}
        return [ScoreRecord(unit_id=loaded.target_id, model_id=model.id, evaluator=self.name,
                            metrics=metrics, details=details)]
