"""The model-call half of the generation phase: each summary one ``ModelRequest`` through
the session's scheduler, saved and linked the moment it arrives.

The scheduler gives each model ``parallel`` concurrent calls under its rate limits and
the session's cost cap; a summary is saved and linked to the run as soon as its answer is
in (the answer itself was cached by the model layer before that), so a kill loses at most
the calls in flight. A failure is linked as an error, never cached, and the next run tries
that unit again.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..llm import ModelCallError, RetryPolicy, price_known
from ..llm.answers import answer_problem
from ..llm.redaction import scrub
from ..llm.requests import ModelRequest
from ..llm.scheduler import (
    Budget,
    BudgetExhausted,
    ProgressBoard,
    Scheduler,
    run_coroutine,
    settle,
)
from ..schemas import CodeUnit, GeneratedSummary, ModelConfig
from .prompts import PROMPT_VERSION, build_messages, prompt_kind
from .report import GenerationReport, ModelStats
from .summaries import model_summary

if TYPE_CHECKING:
    from ..context import RunContext

PHASE = "generation"
#: Typical output tokens of a summary by prompt kind (the prompt asks for 2-4 sentences for
#: functions, 3-6 for classes and files: docs/methods.md#summary-generation), for the dry run.
TYPICAL_OUTPUT_TOKENS = {"function": 80, "class": 140, "file": 140}


def generation_request(unit: CodeUnit, model: ModelConfig, ctx: RunContext | None
                       ) -> ModelRequest:
    """The call ``model`` gets to summarize ``unit``: the prompt and the sampling parameters of
    docs/methods.md#summary-generation."""
    return ModelRequest.chat(model, build_messages(unit, ctx), role="test", phase=PHASE,
                             tag=PROMPT_VERSION,
                             output_tokens=min(model.max_tokens,
                                               TYPICAL_OUTPUT_TOKENS[prompt_kind(unit)]))


def warn_unpriced(models: list[ModelConfig], cap_usd: float | None) -> None:
    """Say which models the cost cap cannot bound (their price is unknown)."""
    if cap_usd is None:
        return
    for model in models:
        if model.provider != "builtin" and not price_known(model):
            print(f"summarybench: the price of {model.id} is unknown, so the cost cap "
                  f"(${cap_usd:.2f}) cannot bound it; set inputCostPerMillion and "
                  "outputCostPerMillion for it", file=sys.stderr)


def announce_cap(budget: Budget) -> None:
    print(f"summarybench: cost cap ${budget.cap_usd:.2f} reached (${budget.spent_usd:.4f} "
          "spent); no new calls are started", file=sys.stderr)


async def summarize(ctx: RunContext, model: ModelConfig, unit: CodeUnit, scheduler: Scheduler,
                    report: GenerationReport) -> GeneratedSummary | None:
    """``model``'s summary of ``unit``, saved and linked to the run; None when the call
    failed (the error is linked) or the cost cap stopped it."""
    stats = report.models[model.id]
    try:
        completion = await scheduler.call(generation_request(unit, model, ctx))
    except BudgetExhausted:
        report.cap_reached = True
        stats.skipped += 1
        return None
    except ModelCallError as exc:
        _failed(ctx, model, unit, stats, str(exc))
        return None
    if not completion.cached:
        stats.calls += 1
        stats.add_cost(completion.cost)
    if not completion.text:
        _failed(ctx, model, unit, stats,
                f"{model.id}: returned an empty summary (output tokens "
                f"{completion.output_tokens}, max_tokens {model.max_tokens})")
        return None
    problem = answer_problem(completion.text, model.max_tokens)
    if problem is not None:
        # The model layer refuses such answers before caching them; this guards the store
        # against any other way in (a hook, an older cache).
        _failed(ctx, model, unit, stats, f"{model.id}: {problem}")
        return None
    stats.cached += int(completion.cached)
    summary = model_summary(unit, model, completion)
    ctx.store.save_summaries([summary])
    ctx.store.link_summary(ctx.run_id, unit.id, model.id, summary.id)
    stats.generated += 1
    return summary


def run_model_calls(ctx: RunContext, remote: dict[str, list[CodeUnit]],
                    report: GenerationReport, *, parallel: int,
                    retry_policy: RetryPolicy | None = None,
                    progress: ProgressBoard | None = None) -> None:
    """Summarize ``remote`` (model id -> pending units) with a scheduler of its own, and
    record the outcome in ``report``."""
    models = {m.id: m for m in ctx.models}
    warn_unpriced([models[m] for m in remote], report.max_cost_usd)
    scheduler = Scheduler(ctx.store, parallel=parallel, max_cost_usd=report.max_cost_usd,
                          retry_policy=retry_policy, progress=progress, session=ctx.session,
                          on_cap=announce_cap, endpoints=ctx.endpoints)
    scheduler.expect(PHASE, sum(len(units) for units in remote.values()))

    async def everything() -> None:
        await settle([summarize(ctx, models[model_id], unit, scheduler, report)
                      for model_id, units in remote.items() for unit in units])

    try:
        run_coroutine(everything)
    finally:
        scheduler.close()
    report.spent_usd = scheduler.budget.spent_usd


def _failed(ctx: RunContext, model: ModelConfig, unit: CodeUnit, stats: ModelStats,
            message: str) -> None:
    """Link the error (not cached: the next run tries this unit again)."""
    message = scrub(message, max_chars=ModelCallError.MAX_REASON_CHARS, one_line=True)
    ctx.store.link_summary(ctx.run_id, unit.id, model.id, None, error=message)
    stats.add_error(message)
