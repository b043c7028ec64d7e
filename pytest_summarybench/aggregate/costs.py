"""Cost analysis of docs/reports.md#the-results-file: per model, generation and evaluation costs,
cost per 1K summaries and cost per quality point.

Generation costs come from each summary's ``generationMetadata.cost``. An evaluator that
pays for model calls (a judge, an LLM contrastive test) records the USD cost of the calls
behind a record in ``details["cost"]``; it is charged to the model whose summary was
scored (split evenly over both models of a pair ``a~b``). ``None`` means a price was
unknown, and a total with any unknown price is unknown rather than understated.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..schemas import GeneratedSummary, ScoreRecord
from ..schemas.report import CostBreakdown, Costs


class _Sum:
    """A USD total that becomes unknown as soon as one part is unknown."""

    def __init__(self) -> None:
        self.value: float | None = 0.0
        self.unknown = 0

    def add(self, cost: float | None) -> None:
        if cost is None:
            self.unknown += 1
            self.value = None
        elif self.value is not None:
            self.value += cost


def _record_cost(rec: ScoreRecord) -> tuple[bool, float | None]:
    """(whether the record reports a cost, the cost)."""
    if "cost" not in rec.details:
        return False, None
    raw = rec.details["cost"]
    return True, float(raw) if isinstance(raw, (int, float)) else None


def cost_analysis(model_ids: list[str], summaries: Mapping[str, list[GeneratedSummary]],
                  records: list[ScoreRecord], overall: Mapping[str, float | None]) -> Costs:
    phases: dict[str, dict[str, _Sum]] = {m: {"generation": _Sum()} for m in model_ids}
    for model_id in model_ids:
        for s in summaries.get(model_id, []):
            phases[model_id]["generation"].add(s.generation_metadata.cost)
    for rec in sorted(records, key=lambda r: (r.nodeid, r.unit_id, r.model_id, r.evaluator)):
        has, cost = _record_cost(rec)
        if not has:
            continue
        owners = [m for m in rec.models if m in phases]
        for owner in owners:
            phases[owner].setdefault(rec.family, _Sum()).add(
                None if cost is None else cost / len(owners))

    costs = Costs()
    grand = _Sum()
    for model_id in model_ids:
        total = _Sum()
        for part in phases[model_id].values():
            total.add(part.value)
        count = len(summaries.get(model_id, []))
        per_1k = total.value / count * 1000 if total.value is not None and count else None
        score = overall.get(model_id)
        costs.by_model[model_id] = CostBreakdown(
            total=total.value,
            per_1k_summaries=per_1k,
            by_phase={phase: s.value for phase, s in phases[model_id].items()},
            unknown_price_calls=sum(s.unknown for s in phases[model_id].values()),
            summaries=count,
            cost_per_quality_point=(per_1k / (score * 100)
                                    if per_1k is not None and score else None),
        )
        grand.add(total.value)
    costs.total = grand.value
    return costs
