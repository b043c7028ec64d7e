"""The dry run: every call the session's plan would make, counted and priced, none made.

It reads the very plan the real run executes (``engine/plan.py``): the summaries the selected
items read, the evaluators' run-wide calls and each item's first round of calls, per phase,
model and role (the model under test, a judge, the helper, the task model). Calls the
response cache already answers, and summaries the run already has, are counted apart: a
re-run does not pay for them. Input tokens are counted on the prompts actually built; a
summary that does not exist yet stands in at a typical length. Output tokens are the
call's typical answer, capped at ``max_tokens``; "at most" assumes every answer uses
``max_tokens``. Re-asks after an unreadable answer are not counted: they depend on the
answers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..evaluators.base import makes_calls, prepare_requests_of, requests_of
from ..llm import cached_completion, messages_tokens, token_prices
from ..llm.requests import ModelRequest

if TYPE_CHECKING:
    from ..context import RunContext
    from ..evaluators.base import Evaluator, MatrixItem
    from ..schemas import GeneratedSummary
    from .plan import CallPlan


@dataclass
class EstimateRow:
    """One phase's calls to one model in one role, before anything is spent."""

    phase: str
    model_id: str
    role: str
    calls: int = 0
    """Provider calls the phase would make."""
    cached: int = 0
    """Requests the response cache already answers (no call)."""
    reused: int = 0
    """Summaries the run already has (generation only: nothing to do)."""
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0
    """Estimated USD; None when the model's price is unknown."""
    max_cost: float | None = 0.0
    """USD if every answer used ``max_tokens``; None when the price is unknown."""

    def add(self, request: ModelRequest, store: object) -> None:
        if store is not None and cached_completion(
                request.model, request.chat_messages, cache=store,  # type: ignore[arg-type]
                cache_tag=request.tag, response_format=request.format,
                **request.overrides) is not None:
            self.cached += 1
            return
        limit = int(request.overrides.get("max_tokens") or request.model.max_tokens)
        inp = messages_tokens(request.chat_messages)
        out = min(limit, request.output_tokens or limit)
        self.calls += 1
        self.input_tokens += inp
        self.output_tokens += out
        pin, pout = token_prices(request.model)
        if pin is None or pout is None:
            self.cost = self.max_cost = None
        elif self.cost is not None and self.max_cost is not None:
            self.cost += inp * pin + out * pout
            self.max_cost += inp * pin + limit * pout


def _stand_in(ctx: RunContext, key: tuple[str, str]) -> GeneratedSummary:
    """A summary of typical length where the real one does not exist yet."""
    from ..generate.calls import TYPICAL_OUTPUT_TOKENS
    from ..generate.prompts import prompt_kind
    from ..schemas import GeneratedSummary, GenerationMetadata

    unit = ctx.unit(key[0])
    words = TYPICAL_OUTPUT_TOKENS[prompt_kind(unit)] * 3 // 4
    return GeneratedSummary(
        id="dry-run", code_unit_id=unit.id, model_id=key[1], summary=" ".join(["word"] * words),
        generation_metadata=GenerationMetadata(
            model_name=key[1], model_version="", prompt_version="", temperature=0.0,
            max_tokens=1, generated_at="", latency_ms=0.0, input_tokens=0, output_tokens=0,
            cost=0.0))


def estimate_plan(plan: CallPlan) -> list[EstimateRow]:
    """Rows of the dry run of ``plan`` (see the module docstring)."""
    from ..generate.calls import generation_request
    from ..generate.report import GenerationReport
    from ..generate.runner import missing

    ctx = plan.ctx
    rows: dict[tuple[str, str, str], EstimateRow] = {}

    def row(phase: str, model_id: str, role: str) -> EstimateRow:
        return rows.setdefault((phase, model_id, role), EstimateRow(phase, model_id, role))

    report = GenerationReport(models={})
    stand_ins: dict[tuple[str, str], GeneratedSummary] = {}
    for model in ctx.models:
        wanted = plan.units_of(model.id)
        if not wanted:
            continue
        todo, stats = missing(ctx, model, wanted, report, adopt=False)
        generation = row("generation", model.id, "test")
        generation.reused += stats.reused
        for unit in todo:
            if model.provider != "builtin":
                generation.add(generation_request(unit, model, ctx), ctx.store)
            stand_ins[(unit.id, model.id)] = _stand_in(ctx, (unit.id, model.id))
    dry = dataclasses.replace(ctx, fresh=stand_ins)
    for ev in plan.evaluators.values():
        _count(rows, prepare_requests_of(ev, dry), ctx)
    for ev, item in plan.items:
        _count(rows, _first_round(ev, item, dry), ctx)
    return sorted(rows.values(), key=lambda r: (_PHASE_ORDER.get(r.phase, 1), r.phase,
                                                 r.model_id, r.role))


_PHASE_ORDER = {"generation": 0}


def _first_round(ev: Evaluator, item: MatrixItem, ctx: RunContext) -> list[ModelRequest]:
    """The item's first calls; for an evaluator whose calls read its artefacts (not built
    in a dry run), what it says it would ask (``estimate_requests``)."""
    if not makes_calls(ev):
        return []
    estimating = getattr(ev, "estimate_requests", None)
    try:
        if estimating is not None:
            return estimating(item, ctx)  # type: ignore[no-any-return]
        return requests_of(ev, item, ctx, {})
    except Exception:  # noqa: BLE001 - an item that cannot be asked is not counted
        return []


def _count(rows: dict[tuple[str, str, str], EstimateRow], requests: Iterable[ModelRequest],
           ctx: RunContext) -> None:
    for r in requests:
        key = (r.phase, r.model.id, r.role)
        rows.setdefault(key, EstimateRow(*key)).add(r, ctx.store)


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.4f}"


def format_estimate(rows: list[EstimateRow]) -> list[str]:
    """The dry-run table, one line per phase, model and role, and a total."""
    header = ("phase", "model", "role", "calls", "cached", "reused", "input tok",
              "output tok", "est. cost", "at most")
    table = [header] + [
        (r.phase, r.model_id, r.role, f"{r.calls:,}", f"{r.cached:,}", f"{r.reused:,}",
         f"{r.input_tokens:,}", f"{r.output_tokens:,}", _money(r.cost), _money(r.max_cost))
        for r in rows]
    known = [r.cost for r in rows if r.cost is not None]
    unknown = sorted({r.model_id for r in rows if r.cost is None and r.calls})
    total_cost = _money(sum(known)) + (" + unknown" if unknown else "")
    table.append(("total", "", "", f"{sum(r.calls for r in rows):,}",
                  f"{sum(r.cached for r in rows):,}", f"{sum(r.reused for r in rows):,}",
                  f"{sum(r.input_tokens for r in rows):,}",
                  f"{sum(r.output_tokens for r in rows):,}", total_cost, ""))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["summarybench dry run: nothing is called; estimated calls, tokens and cost "
             "(re-asks after an unreadable answer are not counted)"]
    for row in table:
        cells = [c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in
                 enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    if unknown:
        lines.append(f"price unknown for {', '.join(unknown)}: set inputCostPerMillion and "
                     "outputCostPerMillion in the model's config to estimate it")
    return lines


def generation_reasons(plan: CallPlan) -> list[str]:
    """Why a model is asked for more summaries than the sample has units: one line per set
    of models alike, the sampled units and, per evaluator, the units outside the sample
    whose summaries it reads (a downstream task shows its candidates, which the sample
    need not hold). Nothing when every summary is of a sampled unit."""
    sampled = {u.id for u in plan.ctx.units}
    by_model: dict[str, dict[str, int]] = {}
    for (unit_id, model_id), reader in plan.summaries.items():
        counts = by_model.setdefault(model_id, {})
        key = "" if unit_id in sampled else (reader or "another evaluator")
        counts[key] = counts.get(key, 0) + 1
    alike: dict[tuple[tuple[str, int], ...], list[str]] = {}
    for model_id, counts in by_model.items():
        if set(counts) - {""}:
            alike.setdefault(tuple(sorted(counts.items())), []).append(model_id)
    lines = []
    for breakdown, models in alike.items():
        counts = dict(breakdown)
        parts = [f"{counts.get('', 0):,} of sampled units"] + [
            f"{n:,} of units outside the sample that {reader} shows"
            for reader, n in breakdown if reader]
        lines.append(f"summaries per model ({', '.join(models)}): {sum(counts.values()):,} = "
                     f"{' + '.join(parts)} (docs/evaluators.md#summaries-outside-the-sample)")
    return lines


def estimate_generation(ctx: RunContext) -> list[EstimateRow]:
    """The dry run of the generation phase alone: every sampled unit by every model."""
    from .plan import CallPlan

    plan = CallPlan(ctx=ctx, items=[], evaluators={},
                    summaries={(u.id, m.id): None for m in ctx.models for u in ctx.units})
    return estimate_plan(plan)
