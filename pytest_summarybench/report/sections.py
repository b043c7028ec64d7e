"""Evaluator details (``evaluatorDetails``) as readable report sections: one section per
family, under the family's title, short tables with plain-language headers, nulls said in
words.

An evaluator whose family declares a layout for it (``Family.layouts``: the judges',
retrieval's) is laid out by it; any other (downstream tasks, a custom family) generically
by ``details.detail_blocks`` with its keys turned into words. Only the display is shaped
here: results.json keeps every figure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.family import Family, family_of
from ..evaluators.blocks import NOT_MEASURED, Block
from .details import detail_blocks


@dataclass
class Section:
    """One family's details: a heading and its blocks, each from one evaluator."""

    family: str
    title: str
    blocks: list[Block] = field(default_factory=list)


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


def declared(families: Iterable[Family] = ()) -> dict[str, Family]:
    """The families a report knows by name: the built-in ones, then ``families`` (a run's
    own, declared by a plugin)."""
    from ..evaluators.registry import BUILTIN_FAMILIES

    return {f.name: f for f in (*BUILTIN_FAMILIES, *families)}


def evaluator_blocks(name: str, details: Mapping[str, Any],
                     family: Family | None = None) -> list[Block]:
    """The blocks of one evaluator's details: the layout its family declares for it when
    the details have the figures it needs, the generic one otherwise."""
    layout = family.layout(name) if family is not None else None
    if layout is not None:
        try:
            return layout(details)
        except (AttributeError, TypeError, ValueError, KeyError):
            pass  # details of another shape (an older run): shown generically
    return _generic(name, details)


def sections(evaluator_details: Mapping[str, Mapping[str, Any]],
             families: Iterable[Family] = ()) -> list[Section]:
    """One section per family, the declared ones first, in their order (the built-in
    families, then ``families``), each under its title; any other family by name."""
    known = declared(families)
    by_family: dict[str, Section] = {}
    for name in sorted(evaluator_details):
        family = family_of(name)
        found = known.get(family)
        section = by_family.setdefault(family, Section(
            family=family, title=found.title if found is not None else family))
        section.blocks += evaluator_blocks(name, evaluator_details[name], found)
    order = list(known)
    return sorted(by_family.values(),
                  key=lambda s: (order.index(s.family) if s.family in order else len(order),
                                 s.family))
