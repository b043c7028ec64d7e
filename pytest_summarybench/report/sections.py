"""Evaluator details (``evaluatorDetails``) as readable report sections: one section per
family, short tables with plain-language headers, nulls said in words.

The built-in judge and retrieval evaluators get a layout written for their figures; any
other evaluator (downstream tasks, a custom family) is laid out generically by
``details.detail_blocks`` with its keys turned into words. Only the display is shaped
here: results.json keeps every figure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .details import Block, detail_blocks
from .judge_sections import pairwise_blocks, pointwise_blocks

#: Family -> section heading.
FAMILY_TITLES = {"judge": "Judges", "contrastive": "Contrastive", "retrieval": "Retrieval",
                 "downstream": "Downstream tasks"}
NOT_MEASURED = "not measured"


@dataclass
class Section:
    """One family's details: a heading and its blocks, each from one evaluator."""

    family: str
    title: str
    blocks: list[Block] = field(default_factory=list)


def dec(value: Any, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) else NOT_MEASURED


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


def _retrieval_blocks(d: Mapping[str, Any]) -> list[Block]:
    ks = [k for k in d.get("kValues") or [1, 3, 5, 10] if isinstance(k, int)]
    meaning = d.get("precisionMeans")
    overall = Block(title="Retrieval: hit rate and MRR per model",
                    headers=["Model", *(f"P@{k}" for k in ks), "MRR", "Queries"],
                    note=f"P@K: {meaning}." if meaning else "")
    for model, row in (d.get("overall") or {}).items():
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


#: Evaluator -> (the keys its layout needs, the layout).
LAYOUTS: dict[str, tuple[set[str], Callable[[Mapping[str, Any]], list[Block]]]] = {
    "judge/pairwise": ({"table", "judges"}, pairwise_blocks),
    "judge/pointwise": ({"models", "judges"}, pointwise_blocks),
    "retrieval/embedding": ({"overall"}, _retrieval_blocks),
}

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def words(key: str) -> str:
    """``lengthVerdictCorrelation`` -> ``length verdict correlation``; dotted paths read
    as ``a › b``."""
    return " › ".join(_CAMEL.sub(" ", part).replace("_", " ").lower()
                      for part in key.split("."))


def _generic(name: str, details: Mapping[str, Any]) -> list[Block]:
    blocks = detail_blocks(details)
    for b in blocks:
        b.title = f"{name}: {words(b.title)}" if b.title else name
        b.headers = [words(h) for h in b.headers]
        b.items = [(words(k) if k else k, NOT_MEASURED if v == "null" else v)
                   for k, v in b.items]
        b.rows = [[NOT_MEASURED if c == "null" else c for c in row] for row in b.rows]
    return blocks


def evaluator_blocks(name: str, details: Mapping[str, Any]) -> list[Block]:
    """The blocks of one evaluator's details: its own layout when it has one and the
    details have the figures it needs, the generic one otherwise."""
    layout = LAYOUTS.get(name)
    if layout is not None and layout[0] <= set(details):
        try:
            return layout[1](details)
        except (AttributeError, TypeError, ValueError, KeyError):
            pass  # details of another shape (an older run): shown generically
    return _generic(name, details)


def sections(evaluator_details: Mapping[str, Mapping[str, Any]]) -> list[Section]:
    """One section per family, the built-in families first, in their spec order."""
    by_family: dict[str, Section] = {}
    for name in sorted(evaluator_details):
        family = name.split("/", 1)[0]
        section = by_family.setdefault(family, Section(
            family=family, title=FAMILY_TITLES.get(family, family)))
        section.blocks += evaluator_blocks(name, evaluator_details[name])
    order = list(FAMILY_TITLES)
    return sorted(by_family.values(),
                  key=lambda s: (order.index(s.family) if s.family in order else len(order),
                                 s.family))
