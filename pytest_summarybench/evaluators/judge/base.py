"""The judge family's base, what ``judge/pointwise`` and ``judge/pairwise`` share about a
run: the judge plan built from the run's settings, the reason to skip when nobody can
judge, the questions put to judges, the summaries to judge, and the per-judge error rates
read back from the recorded failures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ...roles.advice import example_judge, how_to_add, no_judge_reason
from ...schemas import ModelConfig, ScoreRecord
from ..base import EvaluationError, Evaluator, reject_answers
from .calling import JudgeError, JudgeQuestion, parse_judge_error, question

if TYPE_CHECKING:
    from ...context import RunContext

V = TypeVar("V")


def skip_reason(ctx: RunContext, *, pairs: bool) -> str | None:
    """Why no item of this kind can be judged in this run (None when some can).

    Pointwise and pairwise give the same line when one cause stops both, so that the
    family's skip line says it once; the line stays short and its advice valid (a
    suggested judge is of none of the tested models' families)."""
    extra = ctx.settings.evaluation.judge.family_patterns
    if not ctx.judges:
        return f"no judge model is configured; {how_to_add(ctx.models, extra)}"
    builtin = [j.id for j in ctx.judges if j.provider == "builtin"]
    if builtin:
        return (f"models.judge lists {', '.join(builtin)}: built-in summarizers cannot "
                f"judge; use a model served by a provider "
                f"({example_judge(ctx.models, extra)})")
    if pairs and len(ctx.models) < 2:
        return "pairwise comparison needs at least two models under test"
    plan = ctx.roles.judge_plan
    table = plan.pairs if pairs else plan.models
    if any(a.judges for a in table.values()):
        return None
    if any(a.eligible for a in table.values()):
        # Eligible judges, but fewer than asked, and allowFewer is false.
        return (f"fewer eligible judges than minJudges ({plan.min_judges}) for every "
                f"{'pair' if pairs else 'model'} and evaluation.judge.allowFewer is false")
    return no_judge_reason(ctx.models, ctx.judges, extra, pairs=pairs)


def judge_model(ctx: RunContext, judge_id: str) -> ModelConfig:
    for judge in ctx.judges:
        if judge.id == judge_id:
            return judge
    raise KeyError(f"judge {judge_id!r} is not configured under models.judge")


def bootstrap_seed(ctx: RunContext, *keys: str) -> int:
    """A seed for numpy, the same in every process for the same run seed and keys."""
    return ctx.rng("judge-bootstrap", *keys).getrandbits(63)


def error_rates(judged: Counter[str], failed: Iterable[ScoreRecord]) -> dict[str, Any]:
    """Per judge: items judged, judge errors by kind, and the error rate.

    ``judged`` counts each judge's successfully judged items; ``failed`` are the failed
    records of the evaluator, of which those made from a judge error are charged to it.
    """
    kinds: dict[str, Counter[str]] = {}
    for rec in failed:
        parsed = parse_judge_error(rec.error)
        if parsed is not None:
            judge, kind = parsed
            kinds.setdefault(judge, Counter())[kind] += 1
    out = {}
    for judge in sorted(set(judged) | set(kinds)):
        errors = sum(kinds.get(judge, Counter()).values())
        items = judged.get(judge, 0) + errors
        out[judge] = {"items": items, "errors": errors,
                      "invalidOutput": kinds.get(judge, Counter())["invalid_output"],
                      "callFailed": kinds.get(judge, Counter())["call_failed"],
                      "errorRate": errors / items if items else None}
    return out


def error_notes(judge: str, audit: dict[str, Any]) -> list[str]:
    """A sentence for the report when a judge failed some of its items."""
    rate = audit.get("errorRate")
    if not rate:
        return []
    return [f"{judge} gave no usable verdict for {rate:.0%} of its items "
            f"({audit.get('invalidOutput', 0)} invalid answers after retries, "
            f"{audit.get('callFailed', 0)} failed calls)"]


def other_errors(failed: Iterable[ScoreRecord]) -> list[dict[str, str]]:
    """Failed items that are no judge's fault (a summary that was never generated)."""
    return [{"unitId": r.unit_id, "modelId": r.model_id, "error": r.error or ""}
            for r in failed if parse_judge_error(r.error) is None]


class JudgeEvaluator(Evaluator):
    """What ``judge/pointwise`` and ``judge/pairwise`` do alike; they set ``name`` and
    ``pairs`` and implement ``items``, ``evaluate`` and ``summarize``."""

    family: ClassVar[str] = "judge"
    pairs: ClassVar[bool]
    """True for the evaluator whose items are model pairs."""

    def requested(self, ctx: RunContext) -> bool:
        return bool(getattr(ctx.settings.evaluation.judge,
                            "pairwise" if self.pairs else "pointwise"))

    def skip_reason(self, ctx: RunContext) -> str | None:
        key = "pairwise" if self.pairs else "pointwise"
        if not self.requested(ctx):
            return f"disabled (evaluation.judge.{key} is false)"
        return skip_reason(ctx, pairs=self.pairs)

    def prepare(self, ctx: RunContext) -> None:
        """Nothing to build: judges read the summaries the controller generated."""

    def question(self, ctx: RunContext, judge: ModelConfig, messages: list[dict[str, str]],
                 parse: Callable[[str], V], *, tag: str, schema_name: str,
                 schema: dict[str, Any]) -> JudgeQuestion[V]:
        """A question to ``judge`` under the run's structured-output and re-ask settings."""
        section = ctx.settings.evaluation.judge
        return question(judge, messages, parse, tag=tag, phase=self.name,
                        schema_name=schema_name, schema=schema,
                        structured=section.structured_output, retries=section.parse_retries)

    @staticmethod
    def no_verdict(ctx: RunContext, error: JudgeError) -> EvaluationError:
        """The item's error for a judge that gave no usable verdict; the answers it could
        not read are asked again by a later session, not read back from the cache."""
        reject_answers(ctx, error.unusable)
        return EvaluationError(str(error))

    @staticmethod
    def summary_text(ctx: RunContext, unit_id: str, model_id: str) -> str:
        """The summary to judge; an ``EvaluationError`` (no judge's fault) when the model
        has none for this unit."""
        found = ctx.summary(unit_id, model_id)
        if found is None:
            raise EvaluationError(f"no summary of {model_id} to judge: "
                                  f"{ctx.summary_error(unit_id, model_id)}")
        return found.summary
