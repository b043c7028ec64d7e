"""The retrieval family's report section: the details of ``retrieval/embedding`` as
tables (the reference rows against indexing the code itself, precision at K and MRR per
model, MRR by query type), the layout the family declares; ``references_block`` is also
the terminal summary's reference table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..blocks import NOT_MEASURED, Block, dec


def _versus(test: Any) -> str:
    if not isinstance(test, Mapping) or not isinstance(test.get("mrrDifference"), (int, float)):
        return NOT_MEASURED
    low, high = test.get("interval") or (None, None)
    ci = (f" [{low:+.3f}, {high:+.3f}]" if isinstance(low, (int, float))
          and isinstance(high, (int, float)) else "")
    return f"{test['mrrDifference']:+.3f}{ci}"


def references_block(d: Mapping[str, Any]) -> Block | None:
    """Retrieval's reference rows (``evaluatorDetails["retrieval/embedding"].references``)
    as one table: per model, its summaries alone and its summaries fused with the code,
    each against indexing the code alone; None when the run has no reference rows."""
    refs = d.get("references")
    if not isinstance(refs, Mapping) or not isinstance(refs.get("code"), Mapping):
        return None
    code = refs["code"]
    combined = refs.get("code+summary") or {}
    versus = refs.get("versusCode") or {}
    overall = d.get("overall") or {}
    block = Block(
        title="Retrieval: summaries against indexing the code itself",
        headers=["Model", "Summary MRR", "Summary - code (95% CI)", "Code + summary MRR",
                 "Code + summary - code (95% CI)"],
        note=(f"Code alone (the reference, not ranked): MRR {dec(code.get('mrr'))}, "
              + ", ".join(f"P@{k} {dec(code.get(f'precision@{k}'))}"
                          for k in (d.get("kValues") or [])[:2])
              + f" on {code.get('queries', '-')} queries of {code.get('units', '-')} units. "
              "The same queries, embedder and metrics; code + summary is one vector per "
              "unit, the code's and the model's summary's vectors added and normalised. "
              "Differences are per-unit reciprocal "
              "ranks paired with the code row; an interval that excludes 0 is a real "
              "difference."))
    models = sorted(combined, key=lambda m: (-(combined[m].get("mrr") or 0.0), m))
    for model in models:
        vs = versus.get(model) or {}
        block.rows.append([model, dec((overall.get(model) or {}).get("mrr")),
                           _versus(vs.get("summary")), dec(combined[model].get("mrr")),
                           _versus(vs.get("code+summary"))])
    return block


def embedding_blocks(d: Mapping[str, Any]) -> list[Block]:
    """``retrieval/embedding``: the reference rows, hit rate and MRR per model, MRR by
    query type."""
    rows = d["overall"]  # KeyError: details of another shape
    ks = [k for k in d.get("kValues") or [1, 3, 5, 10] if isinstance(k, int)]
    meaning = d.get("precisionMeans")
    overall = Block(title="Retrieval: hit rate and MRR per model",
                    headers=["Model", *(f"P@{k}" for k in ks), "MRR", "Queries"],
                    note=f"P@K: {meaning}." if meaning else "")
    for model, row in (rows or {}).items():
        overall.rows.append([model, *(dec(row.get(f"precision@{k}")) for k in ks),
                             dec(row.get("mrr")), str(row.get("queries", "-"))])
    blocks = [overall]
    by_type: dict[str, dict[str, Any]] = {}
    for key, row in (d.get("byQueryType") or {}).items():
        model, _, qtype = str(key).rpartition(" / ")
        by_type.setdefault(qtype or key, {})[model] = row.get("mrr")
    if by_type:
        models = list(dict.fromkeys(m for row in by_type.values() for m in row))
        block = Block(title="Retrieval: MRR by query type", headers=["Query type", *models],
                      note="Mean reciprocal rank of the unit for each kind of developer query.")
        for qtype, row in by_type.items():
            block.rows.append([qtype.replace("_", " "), *(dec(row.get(m)) for m in models)])
        blocks.append(block)
    refs = references_block(d)
    return blocks if refs is None else [refs, *blocks]
