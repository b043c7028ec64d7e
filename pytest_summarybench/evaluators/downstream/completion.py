"""``downstream/completion`` (docs/methods.md#downstream-completion): complete a function from its
callees' summaries.

Per task x model under test: the task model gets the summaries of the units the function
calls (as the model under test wrote them), the function with its body removed and the
requirements; its code is spliced into a copy of the module and the task's tests run in
the sandbox. Metrics: ``pass_rate`` (fraction of the task's tests passed, 0-1),
``success`` (1 when all passed) and ``similarity`` (``0.5 * BLEU-4 + 0.5 *
keyword-weighted unigram match`` to the original, see ``downstream/similarity.py``); a
task without tests scores ``similarity`` only. Generated code that fails, loops, forks,
allocates without bound or is refused by the sandbox is a failed task with the reason in
``details.reason``; a task-model error is an error record with its reason.
"""

from __future__ import annotations

import warnings
from collections import Counter
from typing import TYPE_CHECKING, Any, ClassVar

from ...sandbox import (
    KERNEL_BOUNDARIES,
    SandboxLimits,
    SandboxUnavailable,
    SandboxWarning,
    boundary_status,
    resolve_boundary,
)
from ...schemas import ScoreRecord
from ..base import Component, EvaluationError
from .answers import extract_code
from .base import DownstreamEvaluator
from .outside import outside_text
from .prompts import completion_prompt
from .sandbox_run import package_layout, run_tests
from .similarity import code_similarity, exact_match
from .splice import CompletionError, completed_function, original_code, partial_code, splice
from .tasks import CompletionTask, Loaded

if TYPE_CHECKING:
    from ...context import RunContext
    from ...schemas import ModelConfig

#: Characters of generated code kept in a record's details.
MAX_CODE_CHARS = 4000


def sandbox_limits(ctx: RunContext) -> SandboxLimits:
    """The limits completion tests run under: the configured ones, and the fixed layers."""
    return SandboxLimits.configured(ctx.settings.evaluation.downstream.sandbox)


class CompletionEvaluator(DownstreamEvaluator):
    name: ClassVar[str] = "downstream/completion"
    kind: ClassVar = "completion"
    components: ClassVar[tuple[Component, ...]] = (
        Component("pass_rate", "completion", "code completion pass rate"),)

    def skip_reason(self, ctx: RunContext) -> str | None:
        reason = super().skip_reason(ctx)
        if reason is not None:
            return reason
        try:
            resolve_boundary(sandbox_limits(ctx))
        except SandboxUnavailable as exc:
            return f"model-written code will not run here: {exc}"
        return None

    def prepare(self, ctx: RunContext) -> None:
        super().prepare(ctx)
        limits = sandbox_limits(ctx)
        if resolve_boundary(limits) is None:
            warnings.warn(SandboxWarning(
                "downstream/completion runs model-written code WITHOUT a kernel boundary ("
                f"{boundary_status().explain(limits.boundary)}); allowWithoutBoundary is set, "
                "so only the process limits, the syscall filter and the guard stand between "
                "that code and this machine"), stacklevel=1)

    def summarize(self, records: list[ScoreRecord], ctx: RunContext) -> dict[str, Any]:
        out = super().summarize(records, ctx)
        held: Counter[str] = Counter(", ".join(r.details["sandboxLayers"]) for r in records
                                     if r.details.get("sandboxLayers"))
        bounded = sum(n for layers, n in held.items()
                      if any(b in layers.split(", ") for b in KERNEL_BOUNDARIES))
        runs = sum(held.values())
        out["sandbox"] = {"layersHeld": dict(held.most_common()),
                          "runsWithKernelBoundary": bounded, "runs": runs}
        if bounded < runs:
            out["notes"] = [f"{runs - bounded} of {runs} sandboxed runs had no kernel boundary "
                            "(allowWithoutBoundary): the code ran on this machine behind "
                            "process limits, the syscall filter and the guard only"]
        return out

    answer_tokens: ClassVar[int] = 400  # a whole function

    def _source(self, loaded: Loaded[Any], ctx: RunContext) -> tuple[str, str, str]:
        """(the file's source, the partial code shown, the original function)."""
        task: CompletionTask = loaded.task
        unit = ctx.unit(loaded.target_id)
        try:
            source = (ctx.settings.codebase_root / task.path).read_text(encoding="utf-8")
            return (source, task.partial_code or partial_code(source, unit),
                    original_code(source, unit))
        except (OSError, SyntaxError, CompletionError) as exc:
            raise EvaluationError(f"cannot read {task.path} for task {task.id}: {exc}") from None

    def prompt(self, loaded: Loaded[Any], model: ModelConfig, ctx: RunContext) -> str:
        task: CompletionTask = loaded.task
        _, partial, _ = self._source(loaded, ctx)
        shown = self.shown_units(loaded)
        summaries = [self.summary_text(ctx, uid, model.id) for uid in shown]
        return completion_prompt(summaries=summaries,
                                 language=ctx.unit(loaded.target_id).language,
                                 partial_code=partial, requirements=task.requirements)

    def score(self, loaded: Loaded[Any], model: ModelConfig, worker: ModelConfig,
              ctx: RunContext) -> list[ScoreRecord]:
        task: CompletionTask = loaded.task
        unit = ctx.unit(loaded.target_id)
        source, partial, reference = self._source(loaded, ctx)
        shown = self.shown_units(loaded)
        summaries = [self.summary_text(ctx, uid, model.id) for uid in shown]
        completion = self.call(worker, self.prompt(loaded, model, ctx), ctx)
        code = extract_code(completion.text, unit.language)
        details: dict[str, Any] = {
            "taskId": task.id, "task": loaded.source, **self.call_details(worker, completion),
            "contextUnits": len(shown), "contextSummaries": len(summaries)}
        function, reason = code, None
        spliced: str | None = None
        if unit.language == "python":
            try:
                done = completed_function(code, unit, partial)
                function = done.function
                spliced = splice(source, unit, done)
            except CompletionError as exc:
                reason = str(exc)
        metrics = {"similarity": code_similarity(function, reference, unit.language)}
        details["exactMatch"] = exact_match(function, reference, unit.language)
        details["generatedCode"] = outside_text(function, MAX_CODE_CHARS)
        if task.tests:
            limits = sandbox_limits(ctx)
            if spliced is None:
                passed, results = 0, [{"name": t.name, "passed": False, "error": reason}
                                      for t in task.tests]
            else:
                run = run_tests(spliced, package_layout(ctx.settings.codebase_root, task.path),
                                task.tests, limits, target=unit.name)
                passed, results, reason = run.passed, run.results, run.reason
                details.update(sandboxLayers=list(run.layers), sandboxSeconds=run.duration_s)
                if reason is None and passed < len(task.tests):
                    failed = next(r for r in results if not r["passed"])
                    reason = f"test {failed['name']} failed: {failed.get('error', '')}"
            metrics["pass_rate"] = passed / len(task.tests)
            metrics["success"] = float(passed == len(task.tests))
            details["tests"] = results
        if reason:
            details["reason"] = outside_text(reason, 400)
        return [ScoreRecord(unit_id=loaded.target_id, model_id=model.id, evaluator=self.name,
                            metrics=metrics, details=details)]
