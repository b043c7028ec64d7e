"""Evaluator sections (``evaluatorDetails``) laid out generically as tables and lists.

An evaluator's ``summarize`` returns any JSON: a judge bias audit, retrieval by query
type. Reports do not know their shapes; they render what they find: scalars as a list,
a mapping of mappings (or a list of mappings) as a table, anything deeper flattened into
dotted keys.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..evaluators.blocks import Block

_MAX_ROWS = 50


def fmt_value(value: Any) -> str:
    """A cell's text: numbers to 3 decimals, everything else as compact JSON or text."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (int, str)):
        return str(value)
    return json.dumps(value, sort_keys=True, default=str)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _flat(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, Mapping):
        out: list[tuple[str, str]] = []
        for k, v in value.items():
            out.extend(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return [(prefix, fmt_value(value))]


def _table(title: str, rows: list[tuple[str, Mapping[str, Any]]], first: str) -> Block:
    headers: list[str] = []
    for _, row in rows:
        for key, _ in _flat(row):
            if key not in headers:
                headers.append(key)
    block = Block(title=title, headers=[first, *headers])
    for label, row in rows[:_MAX_ROWS]:
        cells = dict(_flat(row))
        block.rows.append([label, *(cells.get(h, "") for h in headers)])
    block.truncated = max(0, len(rows) - _MAX_ROWS)
    return block


def _blocks(title: str, details: Mapping[str, Any]) -> list[Block]:
    scalars = Block(title=title)
    nested: list[Block] = []
    for key, value in details.items():
        name = f"{title}.{key}" if title else str(key)
        if _scalar(value):
            scalars.items.append((str(key), fmt_value(value)))
        elif isinstance(value, Mapping) and value and all(
                isinstance(v, Mapping) for v in value.values()):
            nested.append(_table(name, [(str(k), v) for k, v in value.items()], "key"))
        elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            nested.append(_table(name, [(str(i + 1), v) for i, v in enumerate(value)], "#"))
        elif isinstance(value, list) and all(_scalar(v) for v in value):
            if value:
                nested.append(Block(title=name, items=[("", fmt_value(v)) for v in value]))
            else:
                scalars.items.append((str(key), "none"))
        elif isinstance(value, Mapping):
            nested.extend(_blocks(name, value))
        else:
            scalars.items.append((str(key), fmt_value(value)))
    return ([scalars] if scalars.items else []) + nested


def detail_blocks(details: Mapping[str, Any]) -> list[Block]:
    """Blocks for one evaluator's section, in the order of its keys: the top level's
    scalars first, then a table, list or sub-section for each nested value."""
    return _blocks("", details)
