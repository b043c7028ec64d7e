"""Choosing which units to benchmark: random, stratified or all; seeded and reproducible.

Only ``random.Random(seed)`` and the canonical unit order are used, so a sample depends on
nothing but the units, the size and the seed (not on hash randomization or the process).
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import TYPE_CHECKING, Literal

from .codebase import sort_key

if TYPE_CHECKING:
    from ..schemas.units import CodeUnit

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


def sample_units(units: list[CodeUnit], strategy: Strategy | str = "stratified",
                 size: int | None = None, seed: int = 0) -> list[CodeUnit]:
    """A reproducible sample of ``units``, returned in canonical (path, line) order.

    ``size`` None (or at least the number of units) keeps every unit.
    """
    if strategy not in STRATEGIES:
        raise ValueError(
            f"sampling strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")
    if size is not None and size < 0:
        raise ValueError(f"sample size must be >= 0, got {size}")
    # One pass reads each unit (its sort key and stratum); the rest works on positions.
    keyed = sorted((sort_key(u), i) for i, u in enumerate(units))
    if strategy == "all" or size is None or size >= len(units):
        return [units[i] for _, i in keyed]
    rng = random.Random(seed)
    if strategy == "random":
        picked = rng.sample(range(len(keyed)), size)
    else:
        strata: dict[tuple[str, str], list[int]] = defaultdict(list)
        for rank, (key, i) in enumerate(keyed):
            strata[(units[i].language, key[2])].append(rank)
        alloc = stratum_sizes({k: len(v) for k, v in strata.items()}, size)
        picked = []
        for stratum in sorted(strata):
            picked.extend(rng.sample(strata[stratum], alloc[stratum]))
    return [units[keyed[rank][1]] for rank in sorted(picked)]
