"""``contrastive/llm`` (docs/methods.md#contrastive-llm): can a judge model pick the summarized code
out of the distractors?

The options are the target and its distractor set (the same sets as
``contrastive/embedding``, selected once by the controller), shuffled with a generator
seeded by the run seed, the unit and the model, so the target's position is reproducible
and recorded. The model that picks is the run's helper (``roles/assign.py``: the first judge of
none of the families of the models under test); it gets the spec's prompt verbatim at
temperature 0, with JSON output requested where the provider supports it, and
every answer is cached in the store. An answer without a valid ``selected`` option is an
evaluation error carrying the answer, never a guess.

Metrics: ``correct`` (1.0 or 0.0), ``predicted_rank`` 1 when correct and 2 otherwise (a
single pick only says that the target was not first; the spec's formula, which returns the
picked position when it lies after the target, measures the shuffle rather than the
summary), and ``confidence_gap`` 0.0, as the spec has it for this method.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ...llm.json_answer import parse_json_object
from ..base import Answers, Component, EvaluationError, gather, reject_answers
from .base import ContrastiveEvaluator

if TYPE_CHECKING:
    from ...context import RunContext
    from ...llm.requests import ModelRequest
    from ...schemas import CodeUnit, ModelConfig, ScoreRecord
    from ..base import MatrixItem

CONTRASTIVE_LLM_PROMPT = """Given a code summary, identify which code snippet it describes.

## Summary
{summary}

## Code Options
{code_options}

Which code option (1-{n}) does this summary describe?

Respond with ONLY a JSON object:
```json
{
  "selected": <number 1-{n}>,
  "confidence": "high" | "medium" | "low",
  "reasoning": "<brief explanation>"
}
```"""



def selection_schema(n: int) -> dict[str, Any]:
    """The JSON schema of the answer (docs/methods.md#contrastive-llm) for ``n`` options:
    ``selected`` is an enum (llama.cpp's grammar ignores minimum/maximum), free text is bounded."""
    return {
        "type": "object",
        "properties": {
            "selected": {"type": "integer", "enum": list(range(1, n + 1))},
            "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
            "reasoning": {"type": "string", "maxLength": 600},
        },
        "required": ["selected", "confidence", "reasoning"],
        "additionalProperties": False,
    }


def code_options(candidates: list[CodeUnit]) -> str:
    """The spec's option list: a numbered, fenced block per candidate."""
    return "\n\n".join(f"### Option {i}\n```{c.language}\n{c.content}\n```"
                       for i, c in enumerate(candidates, 1))


def build_prompt(summary: str, candidates: list[CodeUnit]) -> str:
    """The spec's prompt. Every ``{n}`` is replaced (the spec's one-shot ``replace`` would
    leave the second one in the answer format); the summary goes in last so that braces in
    it are never taken for placeholders."""
    return (CONTRASTIVE_LLM_PROMPT.replace("{n}", str(len(candidates)))
            .replace("{code_options}", code_options(candidates))
            .replace("{summary}", summary, 1))


def parse_selection(text: str, n: int) -> tuple[int, str, str]:
    """(selected option, confidence, reasoning) from the judge's answer; ValueError when
    there is no valid selection."""
    data = parse_json_object(text)
    raw = data.get("selected")
    if isinstance(raw, bool):
        raise ValueError(f"'selected' is {raw!r}, not an option number")
    try:
        selected = int(str(raw).strip())
    except (TypeError, ValueError):
        raise ValueError(f"'selected' is {raw!r}, not an option number") from None
    if not 1 <= selected <= n:
        raise ValueError(f"'selected' is {selected}, outside 1-{n}")
    return selected, str(data.get("confidence", "")), str(data.get("reasoning", ""))


class ContrastiveLLM(ContrastiveEvaluator):
    """Ask a judge model which shuffled option the summary describes."""

    name: ClassVar[str] = "contrastive/llm"
    family: ClassVar[str] = "contrastive"
    requests_need_prepare: ClassVar[bool] = True  # the distractor sets
    components: ClassVar[tuple[Component, ...]] = (
        Component("correct", "llm", "LLM contrastive accuracy"),)

    def requested(self, ctx: RunContext) -> bool:
        return "llm" in ctx.settings.evaluation.contrastive.methods

    def skip_reason(self, ctx: RunContext) -> str | None:
        methods = ctx.settings.evaluation.contrastive.methods
        if not self.requested(ctx):
            return f"evaluation.contrastive.methods does not include 'llm' (it is {methods})"
        if not ctx.judges:
            return ("contrastive/llm needs a judge model: add one under models.judge in "
                    "summarybench.yaml or pass --sb-judge PROVIDER/MODEL")
        if ctx.roles.helper is None:
            return f"contrastive/llm needs a helper model: {ctx.roles.helper_reason}"
        return None

    def judge(self, ctx: RunContext) -> ModelConfig:
        """The model that picks an option: the run's helper (``roles/assign.py``)."""
        helper = ctx.roles.helper
        if helper is None:
            raise EvaluationError(f"no helper model: {ctx.roles.helper_reason}")
        return helper

    def _options(self, item: MatrixItem, ctx: RunContext
                 ) -> tuple[list[CodeUnit], int, ModelRequest]:
        """The shuffled options, the target's position and the helper's call."""
        summary = self.summary(item, ctx)
        dset = self.distractor_set(ctx, item.unit_id)
        candidates = [ctx.unit(item.unit_id), *(ctx.unit(d) for d in dset.distractor_ids)]
        ctx.rng(self.name, item.unit_id, item.model_id).shuffle(candidates)
        position = next(i for i, c in enumerate(candidates, 1) if c.id == item.unit_id)
        return candidates, position, self._request(ctx, summary.summary, candidates)

    def _request(self, ctx: RunContext, summary: str, candidates: list[CodeUnit]
                 ) -> ModelRequest:
        from ...llm.requests import ModelRequest
        from ...llm.structured import response_format

        helper = self.judge(ctx)
        # Structured output where the provider supports it, by the judges' rules.
        fmt = response_format(helper, ctx.settings.evaluation.judge.structured_output,
                              "selection", selection_schema(len(candidates)))
        return ModelRequest.chat(
            helper, [{"role": "user", "content": build_prompt(summary, candidates)}],
            role="helper", phase=self.name, tag=self.name, response_format=fmt,
            temperature=0.0, max_tokens=helper.max_tokens, output_tokens=120)

    def estimate_requests(self, item: MatrixItem, ctx: RunContext) -> list[ModelRequest]:
        """The call as the dry run counts it: the distractor sets are chosen in
        ``prepare``, so other sampled units stand in for them (same number of options)."""
        count = ctx.settings.evaluation.contrastive.distractors
        others = [u for u in ctx.units if u.id != item.unit_id][:count]
        return [self._request(ctx, self.summary(item, ctx).summary,
                              [ctx.unit(item.unit_id), *others])]

    def requests(self, item: MatrixItem, ctx: RunContext,
                 answers: Answers) -> list[ModelRequest]:
        *_, request = self._options(item, ctx)
        return [] if request.key in answers else [request]

    def evaluate(self, item: MatrixItem, ctx: RunContext) -> list[ScoreRecord]:
        from ...llm import ModelCallError
        from ...schemas import ScoreRecord

        summary = self.summary(item, ctx)
        dset = self.distractor_set(ctx, item.unit_id)
        candidates, position, request = self._options(item, ctx)
        judge = request.model
        answer = gather(self, item, ctx).get(request.key)
        if isinstance(answer, ModelCallError):
            raise EvaluationError(str(answer))
        if answer is None:
            raise EvaluationError(f"{judge.id} was not asked")
        try:
            selected, confidence, reasoning = parse_selection(answer.text, len(candidates))
        except ValueError as exc:
            reject_answers(ctx, [request.key])  # a later session asks again
            raise EvaluationError(f"unparseable answer from {judge.id}: {exc}; answer: "
                                  f"{answer.text[:300]!r}") from None
        correct = selected == position
        return [ScoreRecord(
            unit_id=item.unit_id, model_id=item.model_id, evaluator=self.name,
            metrics={"correct": float(correct), "predicted_rank": 1.0 if correct else 2.0,
                     "confidence_gap": 0.0},
            details={"method": "llm", "llmModel": judge.id, "summaryId": summary.id,
                     "options": len(candidates), "optionIds": [c.id for c in candidates],
                     "targetPosition": position, "selected": selected,
                     "selectedUnitId": candidates[selected - 1].id, "confidence": confidence,
                     "reasoning": reasoning, "cached": answer.cached, "cost": answer.cost,
                     **dset.details()})]
