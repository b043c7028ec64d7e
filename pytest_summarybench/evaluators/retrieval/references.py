"""Retrieval's reference rows: the run's queries, embedder and metrics against an index of
the code itself, and against an index of the code with each model's summary, so a reader
deciding whether to index summaries at all sees what they add over the code alone.

Two kinds of document per unit (``DOCUMENTS``), one vector each:

- ``code``: the unit's source as extracted (the text contrastive embeds, so its vectors
  come from the same cache); one index for the run, the same for every model;
- ``code+summary``: the code's vector and the model's summary's vector added and
  normalised again (``fused``): both count equally, whatever the code's length. One index
  per model. A unit the model has no summary of is its code alone. Embedding the summary
  and the code as one text was measured too (on the bundled sample: every model's MRR
  within 0.04 of this, docstring first and shuffled last either way) and costs an
  embedding of every unit's code per model, which tripled a first run's wall time; the
  fused vectors cost none, as the run already has both (docs/validity.md, "Reference
  rows").

"Code" is one row because it does not depend on the model; "code + summary" is one row per
model because that is the choice a reader makes: index this model's summaries with the
code, or the code alone. Each row is paired with the code row unit by unit (per-unit
reciprocal rank, the mean over the unit's queries): a bootstrap interval of the difference
and a paired t-test. The rows are not models: they never enter the ranking or the overall
score. Ladder models (``validate/*``) get no reference row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...context import RunContext
    from ...embeddings.base import Matrix
    from ...schemas import CodeUnit, GeneratedSummary, ScoreRecord

CODE = "code"
CODE_SUMMARY = "code+summary"
#: The reference documents, in the order they are reported.
DOCUMENTS: tuple[str, ...] = (CODE, CODE_SUMMARY)
#: How results.json says what the documents are.
DOCUMENT_TEXT = ("code: each unit's source as extracted; code+summary: one vector per unit, "
                 "the code's and the model's summary's vectors added and normalised")
COMPARISON_TEXT = ("per-unit reciprocal rank (mean over the unit's queries), paired over "
                   "units with the code row: the row's minus the code's, with a 95% "
                   "bootstrap interval and a paired t-test (not adjusted)")


def has_references(model_id: str) -> bool:
    """Whether ``model_id`` gets a code+summary row (not the validity ladder's models)."""
    from ...generate.ladder import is_ladder_model

    return not is_ladder_model(model_id)


def has_text(summary: GeneratedSummary | None) -> bool:
    """Whether ``summary`` adds anything to its unit's code+summary document."""
    return summary is not None and bool(summary.summary.strip())


def document(kind: str, unit: CodeUnit, summary: GeneratedSummary | None) -> str:
    """The text kept in the index for ``unit`` as a ``kind`` reference document (for a
    reader of the index: ``code+summary`` is searched by its ``fused`` vector)."""
    if kind == CODE or summary is None or not has_text(summary):
        return unit.content
    return f"{summary.summary}\n\n{unit.content}"


def fused(code: Matrix, summaries: Matrix, present: Sequence[bool]) -> Matrix:
    """Code+summary vectors: each row of ``code`` plus the same row of ``summaries``,
    normalised to unit length; the code's own row where ``present`` is False."""
    import numpy as np

    from ...embeddings.base import normalize_rows

    mask = np.asarray(present, dtype=bool)[:, None]
    return normalize_rows(np.where(mask, code + summaries, code)).astype(np.float32)


def index_key(kind: str, model_id: str) -> str:
    """What names the reference index of ``kind`` (the code index is the run's alone)."""
    return f"reference:{CODE}" if kind == CODE else f"reference:{kind}:{model_id}"


def metrics_row(agg: dict[str, Any], k_values: list[int]) -> dict[str, Any]:
    """One row of the family's report (a model's, a query type's, a reference's) from
    ``stats.ir.aggregate``: precision at each K, MRR and the number of queries."""
    return {**{f"precision@{k}": agg["precision"][k] for k in k_values}, "mrr": agg["mrr"],
            "queries": agg["count"]}


def _row(results: Sequence[dict[str, Any]], k_values: list[int]) -> dict[str, Any]:
    from ...stats.ir import QueryResult, aggregate

    return metrics_row(aggregate([QueryResult(q.get("type", ""),
                                              {k: float(q["hits"][str(k)]) for k in k_values},
                                              float(q["reciprocalRank"])) for q in results],
                                 k_values), k_values)


def _versus_code(row: dict[str, float], code: dict[str, float], ctx: RunContext,
                 name: str) -> dict[str, Any] | None:
    """``row``'s per-unit reciprocal ranks against the code row's, paired over units."""
    from ...stats.significance import ALPHA, bootstrap_interval, paired_t_test

    units = sorted(set(row) & set(code))
    if len(units) < 2:
        return None
    a, b = [row[u] for u in units], [code[u] for u in units]
    test = paired_t_test(a, b)
    seed = ctx.rng("retrieval-reference", name).getrandbits(63)
    low, high = bootstrap_interval(a, b, seed=seed)
    return {"mrrDifference": test.mean_difference, "interval": [low, high],
            "pValue": test.p_value, "significant": test.p_value < ALPHA, "units": len(units)}


def summarize_references(records: Sequence[ScoreRecord], evaluator: str, k_values: list[int],
                         ctx: RunContext) -> dict[str, Any] | None:
    """results.json's ``evaluatorDetails["retrieval/embedding"].references``: the code row,
    each model's code+summary row and how each model's rows compare with the code row
    (None when no record carries reference results: an older run)."""
    code_queries: dict[str, list[dict[str, Any]]] = {}
    combined: dict[str, list[dict[str, Any]]] = {}
    per_unit: dict[str, dict[str, float]] = {}
    """Row name -> unit -> reciprocal rank (the mean over the unit's queries)."""
    for rec in sorted(records, key=lambda r: (r.model_id, r.unit_id)):
        refs = rec.details.get("references")
        if rec.error is not None or rec.evaluator != evaluator or not refs:
            continue
        code = refs.get(CODE) or []
        if code and rec.unit_id not in code_queries:
            # The code index is the same for every model: one unit's results once.
            code_queries[rec.unit_id] = code
            per_unit.setdefault(CODE, {})[rec.unit_id] = _mean_rr(code)
        both = refs.get(CODE_SUMMARY) or []
        if both:
            combined.setdefault(rec.model_id, []).extend(both)
            per_unit.setdefault(f"{CODE_SUMMARY}:{rec.model_id}", {})[rec.unit_id] = \
                _mean_rr(both)
        per_unit.setdefault(f"summary:{rec.model_id}", {})[rec.unit_id] = float(
            rec.metrics["reciprocal_rank"])
    if not code_queries:
        return None
    code_rr = per_unit[CODE]
    versus: dict[str, Any] = {}
    for model in sorted(combined):
        versus[model] = {
            "summary": _versus_code(per_unit.get(f"summary:{model}", {}), code_rr, ctx,
                                    f"summary:{model}"),
            CODE_SUMMARY: _versus_code(per_unit[f"{CODE_SUMMARY}:{model}"], code_rr, ctx,
                                       f"{CODE_SUMMARY}:{model}")}
    return {"documents": DOCUMENT_TEXT,
            CODE: {**_row([q for qs in code_queries.values() for q in qs], k_values),
                   "units": len(code_queries)},
            CODE_SUMMARY: {m: _row(qs, k_values) for m, qs in sorted(combined.items())},
            "versusCode": versus, "comparison": COMPARISON_TEXT}


def _mean_rr(results: Sequence[dict[str, Any]]) -> float:
    return sum(float(q["reciprocalRank"]) for q in results) / len(results)
