"""Choosing which units to benchmark: random, stratified or all; seeded, reproducible, and
stable under code change.

A unit's place in the draw is a keyed hash of the seed and the unit's identity (its path,
type and name, and the id's suffix that tells identical definitions apart), never its
position among the other units. So a sample depends on nothing but the units, the size and
the seed (not on hash randomization or the process), and adding, removing or editing a
few units changes it only where they are: an edited unit keeps its place (its identity
does not change with its body), an added unit enters only if its own hash ranks it in,
pushing out at most the unit ranked last. Stratified sampling ranks within each (language,
type) stratum the same way; a stratum's share moves by at most one unit when its count
changes by a few.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from .codebase import sort_key

if TYPE_CHECKING:
    from ..schemas.units import CodeUnit

#: An id the extractor gave a second identical definition under one name (``<hash>-2``).
_TWIN = re.compile(r"[0-9a-f]{16}-(\d+)")

Strategy = Literal["random", "stratified", "all"]
STRATEGIES: tuple[str, ...] = ("random", "stratified", "all")


def stratum_sizes(counts: dict[tuple[str, str], int], size: int) -> dict[tuple[str, str], int]:
    """How many units each (language, type) stratum gets out of ``size``.

    Proportional by largest remainder, with at least one unit per non-empty stratum when
    ``size`` allows (the largest strata first when it does not). Ties break by stratum key.
    """
    total = sum(counts.values())
    keys = sorted(k for k, c in counts.items() if c > 0)
    if size >= total:
        return {k: counts[k] for k in keys}
    by_size = sorted(keys, key=lambda k: (-counts[k], k))
    if size <= len(keys):
        return {k: (1 if k in by_size[:size] else 0) for k in keys}
    alloc = {k: 1 for k in keys}
    rest = size - len(keys)
    spare = {k: counts[k] - 1 for k in keys}
    spare_total = sum(spare.values())
    quotas = {k: rest * spare[k] / spare_total for k in keys}
    for k in keys:
        alloc[k] += int(quotas[k])
    left = size - sum(alloc.values())
    order = sorted(keys, key=lambda k: (-(quotas[k] - int(quotas[k])), k))
    for k in order:
        if left == 0:
            break
        if alloc[k] < counts[k]:
            alloc[k] += 1
            left -= 1
    return alloc


def identity(unit: CodeUnit) -> str:
    """What names a unit across versions of the code: path, type and name, plus the suffix
    the extractor gives identical definitions under one name (``-2``...). Not the body."""
    twin = _TWIN.fullmatch(unit.id)
    return f"{unit.path}\0{unit.type}\0{unit.name}\0{twin.group(1) if twin else ''}"


def draw_rank(seed: int, key: str) -> bytes:
    """A unit's place in the seeded draw: a keyed hash of its identity (smaller first)."""
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=12,
                           key=str(seed).encode()).digest()


def choose(entries: Iterable[tuple[str, str, str, str]], strategy: Strategy | str,
           size: int | None, seed: int) -> set[str]:
    """The ids chosen out of ``entries`` of (id, identity, language, type): the same rule
    as ``sample_units`` on light tuples, so a caller need not hold the units."""
    if strategy not in STRATEGIES:
        raise ValueError(
            f"sampling strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")
    if size is not None and size < 0:
        raise ValueError(f"sample size must be >= 0, got {size}")
    rows = list(entries)
    if strategy == "all" or size is None or size >= len(rows):
        return {r[0] for r in rows}
    if strategy == "random":
        ranked = sorted((draw_rank(seed, ident), uid) for uid, ident, _, _ in rows)
        return {uid for _, uid in ranked[:size]}
    strata: dict[tuple[str, str], list[tuple[bytes, str]]] = defaultdict(list)
    for uid, ident, language, kind in rows:
        strata[(language, kind)].append((draw_rank(seed, ident), uid))
    alloc = stratum_sizes({k: len(v) for k, v in strata.items()}, size)
    picked: set[str] = set()
    for stratum, members in strata.items():
        members.sort()
        picked.update(uid for _, uid in members[:alloc[stratum]])
    return picked


def sample_units(units: list[CodeUnit], strategy: Strategy | str = "stratified",
                 size: int | None = None, seed: int = 0) -> list[CodeUnit]:
    """A reproducible sample of ``units``, returned in canonical (path, line) order.

    ``size`` None (or at least the number of units) keeps every unit.
    """
    chosen = choose(((u.id, identity(u), u.language, u.type) for u in units),
                    strategy, size, seed)
    return sorted((u for u in units if u.id in chosen), key=sort_key)
