"""The downstream family's base, what its three evaluators share: items, the task model,
summaries, calls.

Items are task x model under test (``unit_id`` the task's target unit, ``variant`` the
task id). Before tests run, the controller has the models under test summarize every unit
a task shows them that the sample left out, so that the task model sees a summary where
one is expected. One task model performs every task for every model; a model under test
of the task model's family is skipped with the reason (the no-self-judging rule).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from ...core.errors import InputError
from ...llm.families import family_of, same_family
from ...roles.task import (
    NO_TASK_MODEL,
    same_family_as_all,
    same_family_as_some,
    same_family_models,
)
from ..base import Answers, EvaluationError, Evaluator, MatrixItem
from .prompts import PROMPT_VERSION
from .tasks import Loaded, TaskFileError, TaskType
from .taskset import load_tasks

if TYPE_CHECKING:
    from ...context import RunContext
    from ...llm.requests import ModelRequest
    from ...llm.types import Completion
    from ...schemas import ModelConfig, ScoreRecord


class DownstreamEvaluator(Evaluator, ABC):
    """Base of ``downstream/completion``, ``downstream/bug_localisation`` and
    ``downstream/function_selection``; subclasses implement ``score``."""

    name: ClassVar[str]
    family: ClassVar[str] = "downstream"
    kind: ClassVar[TaskType]

    def __init__(self) -> None:
        self._tasks: dict[str, Loaded[Any]] | None = None
        self._excluded: list[str] = []

    # -- the protocol ------------------------------------------------------------------
    def requested(self, ctx: RunContext) -> bool:
        return self.kind in ctx.settings.evaluation.downstream.tasks

    def skip_reason(self, ctx: RunContext) -> str | None:
        if not self.requested(ctx):
            return f"{self.kind} is not listed in evaluation.downstream.tasks"
        worker = self.task_model(ctx)
        if worker is None:
            return NO_TASK_MODEL
        # Said once for the family, not as one pytest skip per item (the family's line
        # read "no evaluator of this family recorded a score").
        conflict = same_family_as_all(worker, ctx.settings.test_models())
        if conflict is not None:
            return conflict
        if not self.tasks(ctx):
            if self._excluded:
                return (f"all {len(self._excluded)} {self.kind} tasks were left out, e.g. "
                        f"{self._excluded[0]}")
            return (f"no {self.kind} tasks for this codebase: write a task set "
                    f"(evaluation.downstream.tasksFile; see fixtures/tasks/README.md)")
        return None

    def models_left_out(self, ctx: RunContext) -> dict[str, str]:
        """The models under test of the task model's family (when not all are: then the
        family is skipped), whose items ``evaluate`` skips."""
        worker = self.task_model(ctx) if self.requested(ctx) else None
        if worker is None:
            return {}
        models = ctx.settings.test_models()
        why = same_family_as_some(worker, models)
        return {} if why is None else {m.id: why for m in same_family_models(worker, models)}

    def items(self, ctx: RunContext) -> list[MatrixItem]:
        out = []
        for task_id, loaded in sorted(self.tasks(ctx).items()):
            unit = ctx.unit(loaded.target_id)
            for model in ctx.models:
                out.append(MatrixItem(evaluator=self.name, family=self.family, unit_id=unit.id,
                                      models=(model.id,), variant=task_id,
                                      label=ctx.unit_label(unit)))
        return out

    def prepare(self, ctx: RunContext) -> None:
        needed = sorted({uid for loaded in self.tasks(ctx).values()
                         for uid in self.shown_units(loaded)})
        ensure_summaries(ctx, needed)

    def _parts(self, item: MatrixItem, ctx: RunContext
               ) -> tuple[Loaded[Any], ModelConfig, ModelConfig]:
        """(the task, the model under test, the task model) of ``item``."""
        loaded = self.tasks(ctx).get(item.variant)
        if loaded is None:
            raise EvaluationError(f"no {self.kind} task {item.variant!r} in the task set")
        model = next((m for m in ctx.settings.test_models() if m.id == item.model_id), None)
        if model is None:
            raise EvaluationError(f"{item.model_id} is not a configured model under test")
        worker = self.task_model(ctx)
        assert worker is not None, "items exist only with a task model"
        return loaded, model, worker

    def summaries(self, item: MatrixItem, ctx: RunContext) -> list[tuple[str, str]]:
        """The summaries the task shows, by the item's model (the sample may leave some of
        those units out: the controller has them written too)."""
        loaded = self.tasks(ctx).get(item.variant)
        if loaded is None or item.model_id in self.models_left_out(ctx):
            return []       # no task is shown a summary of this model: none is written for it
        return [(uid, item.model_id) for uid in self.shown_units(loaded)]

    def requests(self, item: MatrixItem, ctx: RunContext,
                 answers: Answers) -> list[ModelRequest]:
        loaded, model, worker = self._parts(item, ctx)
        if same_family(worker, model):
            return []
        request = self.request(worker, self.prompt(loaded, model, ctx), ctx)
        return [] if request.key in answers else [request]

    def evaluate(self, item: MatrixItem, ctx: RunContext) -> list[ScoreRecord]:
        loaded, model, worker = self._parts(item, ctx)
        if same_family(worker, model):
            pytest.skip(f"task model {worker.id} is of the same family "
                        f"({family_of(worker)}) as {model.id}, whose summaries it would read; "
                        "configure a task model of another family")
        return self.score(loaded, model, worker, ctx)

    def summarize(self, records: list[ScoreRecord], ctx: RunContext) -> dict[str, Any]:
        """Per model: tasks scored and mean of each metric; the commonest failure reasons."""
        by_model: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        scored: Counter[str] = Counter()
        reasons: Counter[str] = Counter()
        for rec in records:
            if rec.error is not None:
                reasons[rec.error[:80]] += 1
                continue
            scored[rec.model_id] += 1
            for metric, value in rec.metrics.items():
                by_model[rec.model_id][metric].append(value)
            reason = rec.details.get("reason")
            if reason:
                reasons[str(reason)[:80]] += 1
        worker = self.task_model(ctx)
        return {
            "taskModel": worker.id if worker else None,
            "tasks": len(self.tasks(ctx)),
            "excludedTasks": self._excluded,
            "byModel": {m: {"scored": scored[m],
                            **{k: round(sum(v) / len(v), 4) for k, v in sorted(metrics.items())}}
                        for m, metrics in sorted(by_model.items())},
            "failureReasons": dict(reasons.most_common(10)),
        }

    # -- shared helpers -----------------------------------------------------------------
    #: Typical output tokens of the task model's answer, for the dry run.
    answer_tokens: ClassVar[int] = 150

    @abstractmethod
    def prompt(self, loaded: Loaded[Any], model: ModelConfig, ctx: RunContext) -> str:
        """The task's prompt, with ``model``'s summaries."""

    @abstractmethod
    def score(self, loaded: Loaded[Any], model: ModelConfig, worker: ModelConfig,
              ctx: RunContext) -> list[ScoreRecord]:
        """Run the task for one model's summaries and score the answer."""

    def shown_units(self, loaded: Loaded[Any]) -> list[str]:
        """Units whose summaries the task model is shown for this task."""
        return list(loaded.unit_ids.values())

    def task_model(self, ctx: RunContext) -> ModelConfig | None:
        """The run's task model (``ctx.roles.task``); a ``completionModel`` that names
        no usable model stops the run (``TaskModelError``, an ``InputError``)."""
        return ctx.roles.task

    def tasks(self, ctx: RunContext) -> dict[str, Loaded[Any]]:
        if self._tasks is None:
            try:
                found = load_tasks(ctx)
            except TaskFileError as exc:
                # It stops the run, as an InputError, named as the task set's.
                raise InputError(f"invalid downstream task set: {exc}") from None
            self._tasks = {t.task.id: t for t in found.tasks.get(self.kind, [])}
            self._excluded = found.excluded.get(self.kind, [])
        return self._tasks

    def request(self, worker: ModelConfig, prompt: str, ctx: RunContext) -> ModelRequest:
        """The task model's call for ``prompt``: temperature 0, room for a whole function."""
        from ...llm.requests import ModelRequest

        ds = ctx.settings.evaluation.downstream
        return ModelRequest.chat(worker, [{"role": "user", "content": prompt}], role="task",
                                 phase=self.name, tag=f"{self.name}/{PROMPT_VERSION}",
                                 temperature=0.0,
                                 max_tokens=max(worker.max_tokens, ds.max_tokens),
                                 output_tokens=self.answer_tokens)

    def call(self, worker: ModelConfig, prompt: str, ctx: RunContext) -> Completion:
        """The task model's answer to ``prompt`` (fetched by the controller, from the
        store's cache)."""
        from ...llm import ModelCallError
        from ...llm.scheduler import fetch

        try:
            return fetch(self.request(worker, prompt, ctx), ctx.store, ctx.session,
                         endpoints=ctx.endpoints)
        except ModelCallError as exc:
            raise EvaluationError(f"task model call failed: {exc}") from None

    @staticmethod
    def call_details(worker: ModelConfig, completion: Completion) -> dict[str, Any]:
        return {"taskModel": worker.id, "taskModelVersion": completion.model_version,
                "inputTokens": completion.input_tokens,
                "outputTokens": completion.output_tokens, "cost": completion.cost,
                "cached": completion.cached, "promptVersion": PROMPT_VERSION}

    @staticmethod
    def summary_text(ctx: RunContext, unit_id: str, model_id: str) -> str:
        """The model's summary of a unit the task shows; an ``EvaluationError`` when the
        model has none. The task model is never shown a stand-in for a summary the model
        did not write (the spec's "[No summary available]"): it would score the task
        model's guess from the names alone as if it were the summaries' merit."""
        found = ctx.summary(unit_id, model_id)
        if found is None:
            raise EvaluationError(f"no summary of {model_id} to show the task model: "
                                  f"{ctx.summary_error(unit_id, model_id)}")
        return found.summary


def ensure_summaries(ctx: RunContext, unit_ids: list[str]) -> None:
    """Have every model under test summarize those of ``unit_ids`` it never summarized
    (units a task shows that the sample left out), through the generation phase. In a
    session the controller's plan has written them already (``summaries``); a failed one
    is not asked again here. A context made afterwards reads them (``ctx.refreshed()``)."""
    from ...context import NEVER_GENERATED
    from ...generate import run_generation

    missing = [uid for uid in unit_ids
               if any(ctx.summary(uid, m.id) is None
                      and ctx.summary_error(uid, m.id) == NEVER_GENERATED for m in ctx.models)]
    if not missing:
        return
    by_id = {u.id: u for u in ctx.all_units}
    run_generation(ctx.with_units(by_id[uid] for uid in missing if uid in by_id),
                   progress=False)
