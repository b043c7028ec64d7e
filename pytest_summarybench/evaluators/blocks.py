"""What a family's report section is made of: ``Block``s, each a small table or list with
a title and a note, which the reports render (``report/``). A family lays out its
evaluators' details (their ``summarize`` results) as blocks in its package
(``evaluators/judge/report.py``...), named by its declaration's ``layouts``; details of an
evaluator without a layout are laid out generically (``report/details.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: A figure the details do not have, in words.
NOT_MEASURED = "not measured"


@dataclass
class Block:
    """One renderable piece of an evaluator section."""

    title: str
    headers: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    items: list[tuple[str, str]] = field(default_factory=list)
    """Key-value pairs when the block is a list rather than a table (an empty key for
    the items of a plain list)."""
    truncated: int = 0
    """Rows left out beyond the generic layout's limit."""
    note: str = ""
    """A sentence under the block saying what its figures mean."""


def dec(value: Any, digits: int = 3) -> str:
    """A number to ``digits`` decimals, ``NOT_MEASURED`` for anything else."""
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) else NOT_MEASURED


__all__ = ["NOT_MEASURED", "Block", "dec"]
