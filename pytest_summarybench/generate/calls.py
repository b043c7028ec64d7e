"""The model-call half of the generation phase: concurrent, capped, saved as it arrives.

Each model gets ``parallel`` concurrent calls (its own semaphore; providers' limits are
separate), and the model layer paces them under the model's rate limits. A summary is
saved and linked to the run the moment its response arrives (the response itself was
cached by the model layer before that), so a kill loses at most the calls in flight.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ..llm import (
    Completion,
    ModelCallError,
    RetryPolicy,
    acomplete,
    cached_completion,
    price_known,
)
from ..llm.providers import litellm
from ..progress import Progress
from ..schemas import CodeUnit, GeneratedSummary, GenerationMetadata, ModelConfig
from .prompts import PROMPT_VERSION, build_messages
from .report import GenerationReport, ModelStats
from .runner import summary_id

if TYPE_CHECKING:
    from ..context import RunContext


class Budget:
    """The cost cap: known spending so far, and whether new calls may start."""

    def __init__(self, cap_usd: float | None) -> None:
        self.cap_usd = cap_usd
        self.spent_usd = 0.0

    def add(self, cost: float | None) -> bool:
        """Count a call's cost; True when this call reached the cap."""
        if cost is None:
            return False
        was = self.exhausted
        self.spent_usd += cost
        return self.exhausted and not was

    @property
    def exhausted(self) -> bool:
        return self.cap_usd is not None and self.spent_usd >= self.cap_usd


def model_summary(unit: CodeUnit, model: ModelConfig, completion: Completion) -> GeneratedSummary:
    """The stored form of a model's summary, with the metadata of spec 2.2."""
    return GeneratedSummary(
        id=summary_id(unit.id, model, PROMPT_VERSION),
        code_unit_id=unit.id,
        model_id=model.id,
        summary=completion.text,
        generation_metadata=GenerationMetadata(
            model_name=model.model_name, model_version=completion.model_version,
            prompt_version=PROMPT_VERSION, temperature=model.temperature,
            max_tokens=model.max_tokens,
            generated_at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            latency_ms=completion.latency_ms, input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens, cost=completion.cost),
    )


async def run_model_calls(ctx: RunContext, remote: dict[str, list[CodeUnit]],
                          report: GenerationReport, *, parallel: int, progress: bool,
                          retry_policy: RetryPolicy | None = None) -> None:
    """Summarize ``remote`` (model id -> pending units) and record the outcome in
    ``report``."""
    models = {m.id: m for m in ctx.models}
    budget = Budget(report.max_cost_usd)
    if budget.cap_usd is not None:
        for model_id in remote:
            if not price_known(models[model_id]):
                print(f"summarybench: the price of {model_id} is unknown, so the cost cap "
                      f"(${budget.cap_usd:.2f}) cannot bound it; set inputCostPerMillion and "
                      "outputCostPerMillion for it", file=sys.stderr)
    litellm()  # import it (seconds) before the progress clock starts, not inside a call
    bar = (ctx.progress if progress else Progress.off()).phase(
        "summarybench generation", sum(len(units) for units in remote.values()), unit="call",
        costed=True)

    async def one(model: ModelConfig, unit: CodeUnit, gate: asyncio.Semaphore) -> None:
        stats = report.models[model.id]
        async with gate:
            messages = build_messages(unit, ctx)
            try:
                completion = cached_completion(model, messages, cache=ctx.store,
                                               cache_tag=PROMPT_VERSION)
                if completion is None:
                    if budget.exhausted:
                        report.cap_reached = True
                        stats.skipped += 1
                        bar.advance(0)
                        return
                    completion = await acomplete(model, messages, cache=ctx.store,
                                                 cache_tag=PROMPT_VERSION,
                                                 retry_policy=retry_policy)
            except ModelCallError as exc:
                _failed(ctx, model, unit, stats, str(exc))
                bar.advance(1, 0.0)
                return
            if not completion.cached:
                stats.calls += 1
                stats.add_cost(completion.cost)
                if budget.add(completion.cost):
                    print(f"summarybench: cost cap ${budget.cap_usd:.2f} reached "
                          f"(${budget.spent_usd:.4f} spent); no new calls are started",
                          file=sys.stderr)
            bar.advance(1, 0.0 if completion.cached else completion.cost)
            if not completion.text:
                _failed(ctx, model, unit, stats,
                        f"{model.id}: returned an empty summary (output tokens "
                        f"{completion.output_tokens}, max_tokens {model.max_tokens})")
                return
            stats.cached += int(completion.cached)
            summary = model_summary(unit, model, completion)
            ctx.store.save_summaries([summary])
            ctx.store.link_summary(ctx.run_id, unit.id, model.id, summary.id)
            stats.generated += 1

    gates = {model_id: asyncio.Semaphore(max(1, parallel)) for model_id in remote}
    try:
        await asyncio.gather(*(one(models[model_id], unit, gates[model_id])
                               for model_id, units in remote.items() for unit in units))
    finally:
        bar.close()
    report.spent_usd = budget.spent_usd


def _failed(ctx: RunContext, model: ModelConfig, unit: CodeUnit, stats: ModelStats,
            message: str) -> None:
    """Link the error (not cached: the next run tries this unit again)."""
    ctx.store.link_summary(ctx.run_id, unit.id, model.id, None, error=message)
    stats.add_error(message)
