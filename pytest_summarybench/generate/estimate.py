"""The dry run: how many calls the generation phase would make, and what they would cost.

Nothing is called and nothing is written. Calls already answered (summaries linked to the
run, or responses in the cache) are counted apart, because a re-run does not pay for
them. Input tokens are estimated from the prompts actually built, output tokens from the
length the prompt asks for (2-4 sentences for functions, 3-6 for classes and files),
capped at ``max_tokens``; "at most" assumes every answer uses ``max_tokens``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..llm import cached_completion, messages_tokens, token_prices
from .prompts import PROMPT_VERSION, build_messages, prompt_kind
from .runner import linked_pairs, pending_units

if TYPE_CHECKING:
    from ..context import RunContext

#: Typical output tokens of a summary by prompt kind (see the module docstring).
TYPICAL_OUTPUT_TOKENS = {"function": 80, "class": 140, "file": 140}


@dataclass(frozen=True)
class EstimateRow:
    """One model's share of one phase, before anything is spent."""

    phase: str
    """``generation`` here; other phases add their own rows."""
    model_id: str
    calls: int
    """Provider calls the phase would make."""
    cached: int
    """Requests the response cache already answers (no call)."""
    reused: int
    """Units already linked to a summary for this run (nothing to do)."""
    input_tokens: int
    """Estimated input tokens of the ``calls``."""
    output_tokens: int
    """Estimated output tokens of the ``calls``."""
    cost: float | None
    """Estimated USD; None when the model's price is unknown."""
    max_cost: float | None
    """USD if every answer used ``max_tokens``; None when the price is unknown."""


def _cost(prices: tuple[float | None, float | None], inp: int, out: int) -> float | None:
    pin, pout = prices
    if pin is None or pout is None:
        return None
    return inp * pin + out * pout


def estimate_generation(ctx: RunContext) -> list[EstimateRow]:
    """One row per model under test for the generation phase (makes no call)."""
    linked = linked_pairs(ctx)
    rows = []
    for model in ctx.models:
        todo = pending_units(ctx, model, linked)
        reused = len(ctx.units) - len(todo)
        if model.provider == "builtin":
            rows.append(EstimateRow("generation", model.id, 0, 0, reused, 0, 0, 0.0, 0.0))
            continue
        calls = cached = inp = out = worst = 0
        for unit in todo:
            messages = build_messages(unit, ctx)
            if cached_completion(model, messages, cache=ctx.store,
                                 cache_tag=PROMPT_VERSION) is not None:
                cached += 1
                continue
            calls += 1
            inp += messages_tokens(messages)
            out += min(model.max_tokens, TYPICAL_OUTPUT_TOKENS[prompt_kind(unit)])
            worst += model.max_tokens
        if not calls:  # nothing to pay, whatever the price
            rows.append(EstimateRow("generation", model.id, 0, cached, reused, 0, 0, 0.0, 0.0))
            continue
        prices = token_prices(model)
        rows.append(EstimateRow("generation", model.id, calls, cached, reused, inp, out,
                                _cost(prices, inp, out), _cost(prices, inp, worst)))
    return rows


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.4f}"


def format_estimate(rows: list[EstimateRow]) -> list[str]:
    """The dry-run table, one line per model and phase, and a total."""
    header = ("phase", "model", "calls", "cached", "input tok", "output tok", "est. cost",
              "at most")
    table = [header] + [
        (r.phase, r.model_id, f"{r.calls:,}", f"{r.cached:,}", f"{r.input_tokens:,}",
         f"{r.output_tokens:,}", _money(r.cost), _money(r.max_cost)) for r in rows]
    known = [r.cost for r in rows if r.cost is not None]
    unknown = [r.model_id for r in rows if r.cost is None and r.calls]
    total_cost = _money(sum(known)) + (" + unknown" if unknown else "")
    table.append(("total", "", f"{sum(r.calls for r in rows):,}",
                  f"{sum(r.cached for r in rows):,}",
                  f"{sum(r.input_tokens for r in rows):,}",
                  f"{sum(r.output_tokens for r in rows):,}", total_cost, ""))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["summarybench dry run: nothing is called; estimated calls, tokens and cost"]
    for row in table:
        cells = [c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in
                 enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    if unknown:
        lines.append(f"price unknown for {', '.join(unknown)}: set inputCostPerMillion and "
                     "outputCostPerMillion in the model's config to estimate it")
    return lines
