"""``judge/pointwise``: each summary scored on the rubric (docs/methods.md#judge-pointwise) by each
eligible judge.

Items are unit x model x judge (the judge in ``MatrixItem.variant``); a judge never scores
a model of its own family (docs/methods.md#judge-selection). The score is the weighted average of
the five criteria computed here from the judge's scores (the judge's own arithmetic is kept, not
used). A judge whose answer stays unreadable fails the item with the raw text; the
report section gives means with intervals over units, per-judge error rates, the length
bias of each judge's scores and the agreement between judges.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any, ClassVar

from ...schemas import ScoreRecord
from ..base import Answers, Component, MatrixItem, gather
from .agreement import judge_agreement
from .audit import length_bias_pointwise, pointwise_notes
from .base import (
    JudgeEvaluator,
    bootstrap_seed,
    error_notes,
    error_rates,
    judge_model,
    other_errors,
)
from .calling import JudgeError, JudgeQuestion
from .prompts import (
    CRITERIA,
    CRITERIA_WEIGHTS,
    POINTWISE_TAG,
    PROMPT_VERSION,
    pointwise_messages,
)
from .tally import mean_ci
from .verdicts import POINTWISE_JSON_SCHEMA, parse_pointwise

if TYPE_CHECKING:
    from ...context import RunContext
    from ...llm.requests import ModelRequest


def _rounded(score: float) -> int:
    """A weighted average as a 1-5 category (halves round up), for kappa."""
    return min(5, max(1, int(score + 0.5)))


class JudgePointwise(JudgeEvaluator):
    """See the module docstring."""

    name: ClassVar[str] = "judge/pointwise"
    pairs: ClassVar[bool] = False
    components: ClassVar[tuple[Component, ...]] = (
        Component("weighted_average", "pointwise", "judge rubric score", low=1.0, high=5.0),)

    def items(self, ctx: RunContext) -> list[MatrixItem]:
        plan = ctx.roles.judge_plan
        return [MatrixItem(evaluator=self.name, family=self.family, unit_id=u.id,
                           models=(m.id,), variant=j, label=ctx.unit_label(u))
                for u in ctx.units for m in ctx.models for j in plan.judges_for_model(m.id)]

    def _question(self, item: MatrixItem, ctx: RunContext) -> JudgeQuestion[Any]:
        summary = self.summary_text(ctx, item.unit_id, item.model_id)
        unit = ctx.unit(item.unit_id)
        return self.question(ctx, judge_model(ctx, item.variant),
                             pointwise_messages(unit.language, unit.content, summary),
                             parse_pointwise, tag=POINTWISE_TAG,
                             schema_name="pointwise_verdict", schema=POINTWISE_JSON_SCHEMA)

    def requests(self, item: MatrixItem, ctx: RunContext,
                 answers: Answers) -> list[ModelRequest]:
        return self._question(item, ctx).next_request(answers)

    def evaluate(self, item: MatrixItem, ctx: RunContext) -> list[ScoreRecord]:
        summary = self.summary_text(ctx, item.unit_id, item.model_id)
        judge = judge_model(ctx, item.variant)
        try:
            answer = self._question(item, ctx).outcome(gather(self, item, ctx))
        except JudgeError as exc:
            raise self.no_verdict(ctx, exc) from None
        verdict = answer.verdict
        scores = verdict.scores.model_dump()
        return [ScoreRecord(
            unit_id=item.unit_id, model_id=item.model_id, evaluator=self.name,
            metrics={"weighted_average": verdict.score, **scores},
            details={"judge": judge.id, "reasoning": verdict.reasoning,
                     "judgeWeightedAverage": verdict.weighted_average,
                     "summaryWords": len(summary.split()),
                     "answers": answer.answers, "cached": answer.cached,
                     "cost": answer.cost, "responseFormat": answer.response_format,
                     "promptVersion": PROMPT_VERSION})]

    # -- report section -------------------------------------------------------------------
    def summarize(self, records: list[ScoreRecord], ctx: RunContext) -> dict[str, Any]:
        ok = sorted((r for r in records if r.error is None and "judge" in r.details),
                    key=lambda r: (r.unit_id, r.model_id, r.details["judge"]))
        failed = [r for r in records if r.error is not None]
        samples = ctx.settings.evaluation.judge.bootstrap_samples
        plan = ctx.roles.judge_plan

        by_model: dict[str, list[ScoreRecord]] = defaultdict(list)
        by_judge: dict[str, list[ScoreRecord]] = defaultdict(list)
        for r in ok:
            by_model[r.model_id].append(r)
            by_judge[r.details["judge"]].append(r)

        models: dict[str, Any] = {}
        criteria: list[dict[str, Any]] = []
        by_judge_mean: dict[str, dict[str, float]] = {}
        for model, recs in sorted(by_model.items()):
            for metric in ("weighted_average", *CRITERIA):
                per_unit: dict[str, list[float]] = defaultdict(list)
                for r in recs:
                    per_unit[r.unit_id].append(r.metrics[metric])
                stats = mean_ci(per_unit, samples=samples,
                                seed=bootstrap_seed(ctx, self.name, model, metric))
                if metric == "weighted_average":
                    models[model] = stats
                else:
                    criteria.append({"model": model, "criterion": metric, **stats})
            judged_by: dict[str, list[float]] = defaultdict(list)
            for r in recs:
                judged_by[r.details["judge"]].append(r.metrics["weighted_average"])
            by_judge_mean[model] = {j: sum(v) / len(v) for j, v in sorted(judged_by.items())}

        errors = error_rates(Counter({j: len(v) for j, v in by_judge.items()}), failed)
        judges: dict[str, Any] = {}
        notes = plan.shortfalls(pairs=False)
        for judge in sorted(set(by_judge) | set(errors)):
            recs = by_judge.get(judge, [])
            length = length_bias_pointwise([r.details.get("summaryWords", 0) for r in recs],
                                           [r.metrics["weighted_average"] for r in recs])
            scores = [r.metrics["weighted_average"] for r in recs]
            judges[judge] = {
                **errors[judge],
                "meanScore": sum(scores) / len(scores) if scores else None,
                "retried": sum(1 for r in recs if r.details.get("answers", 1) > 1),
                "length": length,
            }
            notes.extend(pointwise_notes(judge, length))
            notes.extend(error_notes(judge, judges[judge]))

        labels = {j: {(r.unit_id, r.model_id): _rounded(r.metrics["weighted_average"])
                      for r in recs} for j, recs in by_judge.items()}
        return {
            "promptVersion": PROMPT_VERSION,
            "weights": CRITERIA_WEIGHTS,
            "models": models,
            "criteria": criteria,
            "byJudge": by_judge_mean,
            "judges": judges,
            "agreement": judge_agreement(labels, categories=[1, 2, 3, 4, 5],
                                         weights="quadratic"),
            "selection": plan.to_json(pairs=False),
            "otherErrors": other_errors(failed),
            "notes": notes,
        }
