"""Sampling: random, stratified and all; seeded, reproducible, in canonical order."""

from __future__ import annotations

import pytest

from pytest_summarybench.extract import sample_units
from pytest_summarybench.extract.sampling import stratum_sizes
from pytest_summarybench.schemas.units import CodeUnit, UnitMetadata, UnitType


def make_units() -> list[CodeUnit]:
    units = []
    layout: dict[tuple[str, UnitType], int] = {
        ("python", "function"): 60, ("python", "method"): 30, ("go", "function"): 8,
        ("go", "file"): 2}
    for (language, kind), count in layout.items():
        for i in range(count):
            units.append(CodeUnit(
                id=f"{language}-{kind}-{i}", path=f"{language}/m{i % 7}.x",
                name=f"{kind}{i}", type=kind, language=language, content="x",
                metadata=UnitMetadata(start_line=i + 1, end_line=i + 3)))
    return units


def key(u: CodeUnit) -> tuple[str, int, str, str, str]:
    return (u.path, u.metadata.start_line, u.type, u.name, u.id)


def test_all_returns_every_unit_in_canonical_order() -> None:
    units = make_units()
    out = sample_units(list(reversed(units)), "all", size=5, seed=1)
    assert [u.id for u in out] == [u.id for u in sorted(units, key=key)]


@pytest.mark.parametrize("strategy", ["random", "stratified"])
def test_samples_are_seeded_and_sorted(strategy: str) -> None:
    units = make_units()
    a = sample_units(units, strategy, size=20, seed=7)
    b = sample_units(list(reversed(units)), strategy, size=20, seed=7)
    c = sample_units(units, strategy, size=20, seed=8)
    assert [u.id for u in a] == [u.id for u in b]
    assert [u.id for u in a] != [u.id for u in c]
    assert len(a) == 20 and len({u.id for u in a}) == 20
    assert a == sorted(a, key=key)


def test_stratified_is_proportional_with_one_per_stratum() -> None:
    sample = sample_units(make_units(), "stratified", size=20, seed=3)
    counts: dict[tuple[str, str], int] = {}
    for u in sample:
        counts[(u.language, u.type)] = counts.get((u.language, u.type), 0) + 1
    # 4 strata get one each; the other 16 split 59:29:7:1 (the units left in each):
    # quotas 9.83, 4.83, 1.17, 0.17 -> floors 9, 4, 1, 0 plus the two largest remainders.
    assert counts == {("python", "function"): 11, ("python", "method"): 6,
                      ("go", "function"): 2, ("go", "file"): 1}


def test_stratum_sizes_edge_cases() -> None:
    counts = {("a", "function"): 5, ("b", "class"): 1, ("c", "method"): 2}
    assert stratum_sizes(counts, 100) == counts
    assert stratum_sizes(counts, 2) == {("a", "function"): 1, ("b", "class"): 0,
                                        ("c", "method"): 1}
    sizes = stratum_sizes(counts, 4)
    assert sum(sizes.values()) == 4 and min(sizes.values()) == 1
    assert sizes == {("a", "function"): 2, ("b", "class"): 1, ("c", "method"): 1}


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="sampling strategy 'best'"):
        sample_units(make_units(), "best", size=3)
    with pytest.raises(ValueError, match="sample size must be >= 0"):
        sample_units(make_units(), "random", size=-1)


def _edited(unit: CodeUnit, body: str) -> CodeUnit:
    """The same definition with a new body: a new content hash, the same identity."""
    return unit.model_copy(update={"id": f"{unit.id}x", "content": body})


@pytest.mark.parametrize("strategy", ["random", "stratified"])
def test_sample_is_stable_under_a_small_code_change(strategy: str) -> None:
    """Editing, adding and removing a few units changes the sample only where they are
    (issue 32): an edited unit keeps its place, an added one enters only on its own hash
    and pushes out at most one unit, a removed one is replaced by at most one."""
    units = make_units()
    before = {u.id for u in sample_units(units, strategy, size=30, seed=5)}
    picked = [u for u in units if u.id in before]
    # edit two sampled units and one unsampled one
    changed = {picked[0].id: _edited(picked[0], "y"), picked[5].id: _edited(picked[5], "z")}
    other = next(u for u in units if u.id not in before)
    changed[other.id] = _edited(other, "w")
    edited = [changed.get(u.id, u) for u in units]
    after_edit = {u.id for u in sample_units(edited, strategy, size=30, seed=5)}
    assert after_edit == (before - {picked[0].id, picked[5].id}) | {
        changed[picked[0].id].id, changed[picked[5].id].id}
    # add one unit: at most it comes in and one goes out
    added = CodeUnit(id="python-function-new", path="python/new.x", name="brand_new",
                     type="function", language="python", content="x",
                     metadata=UnitMetadata(start_line=1, end_line=2))
    after_add = {u.id for u in sample_units([*units, added], strategy, size=30, seed=5)}
    assert len(after_add - before - {added.id}) == 0
    assert len(before - after_add) <= 1
    # remove one sampled unit: at most one other comes in
    after_remove = {u.id for u in sample_units([u for u in units if u.id != picked[3].id],
                                               strategy, size=30, seed=5)}
    assert picked[3].id not in after_remove
    assert len(after_remove - before) <= 1
    assert before - after_remove == {picked[3].id}
