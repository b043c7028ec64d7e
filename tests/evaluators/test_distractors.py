"""Distractor selection: the tiers of spec 6.1, the candidate filter, reproducibility."""

from __future__ import annotations

import time

import numpy as np
import pytest

from pytest_summarybench.embeddings import get_embedder
from pytest_summarybench.evaluators.distractors import (
    CandidatePool,
    difficulty,
    ensure_distractor_sets,
    load_distractor_sets,
    signature_similarity,
)
from pytest_summarybench.schemas import CodeUnit
from pytest_summarybench.schemas.units import Parameter, UnitMetadata
from tests.evaluators.synthetic import ContextFactory, make_units


def _unit(uid: str, *, path: str = "a.py", language: str = "python", type_: str = "function",
          signature: str | None = None, params: list[tuple[str, str | None]] | None = None,
          returns: str | None = None) -> CodeUnit:
    return CodeUnit(
        id=uid, path=path, name=uid, type=type_, language=language,  # type: ignore[arg-type]
        content=f"def {uid}(): pass",
        metadata=UnitMetadata(
            start_line=1, end_line=1, signature=signature, return_type=returns,
            parameters=None if params is None else [Parameter(name=n, type=t)
                                                    for n, t in params]))


def test_signature_similarity_follows_spec_formula() -> None:
    a = _unit("a", signature="f(x: int, y: str) -> bool",
              params=[("x", "int"), ("y", "str")], returns="bool")
    b = _unit("b", signature="g(p: int, q: str) -> bool",
              params=[("p", "int"), ("q", "str")], returns="bool")
    c = _unit("c", signature="h(p: int) -> None", params=[("p", "int")], returns="None")
    assert signature_similarity(a, b) == 1.0
    # count 1 - 1/2 = 0.5; types {int#1} vs {int#1, str#1, ->bool} plus ->none: 1/4.
    assert signature_similarity(a, c) == pytest.approx((0.5 + 0.25) / 2)
    # Without parsed parameters, arity comes from the signature text.
    d = _unit("d", signature="class D(Base, Mixin[int, str]):")
    e = _unit("e", signature="class E(Other, Thing):")
    assert signature_similarity(d, e) == 1.0


def _pool_with_cosines(cosines: list[float]) -> tuple[CandidatePool, list[CodeUnit]]:
    """A target (id t) and one candidate per cosine, each in its own file, no signature."""
    units = [_unit("t", path="t.py")] + [_unit(f"c{i}", path=f"c{i}.py")
                                         for i in range(len(cosines))]
    vectors = [np.array([1.0, 0.0], dtype=np.float32)]
    for c in cosines:
        vectors.append(np.array([c, np.sqrt(1 - c * c)], dtype=np.float32))
    return CandidatePool(units, np.stack(vectors)), units


def test_semantic_tier_takes_the_band_in_descending_order_then_pads(
        make_context: ContextFactory) -> None:
    ctx = make_context()
    pool, units = _pool_with_cosines([0.99, 0.9, 0.7, 0.3, 0.55])
    picked = pool.select(units[0], 3, ctx)
    assert picked.distractor_ids == ["c1", "c2", "c4"]
    assert picked.tiers == [3, 3, 3]
    padded = pool.select(units[0], 5, ctx)
    assert padded.distractor_ids[:3] == ["c1", "c2", "c4"]
    assert sorted(padded.distractor_ids[3:]) == ["c0", "c3"]
    assert padded.tiers == [3, 3, 3, 4, 4]


def test_tiers_filter_and_reproducibility(make_context: ContextFactory) -> None:
    units = make_units() + [
        _unit("go1", language="go", path="shop/pricing.py"),
        _unit("cls1", type_="class", path="shop/pricing.py"),
    ]
    ctx = make_context(units=units)
    embedder = get_embedder("builtin/hashing", ctx.store)
    sets = ensure_distractor_sets(ctx, embedder)
    assert set(sets) == {u.id for u in units}
    by_id = {u.id: u for u in units}
    for uid, dset in sets.items():
        target = by_id[uid]
        assert uid not in dset.distractor_ids
        assert len(set(dset.distractor_ids)) == len(dset.distractor_ids)
        for did, tier in zip(dset.distractor_ids, dset.tiers, strict=True):
            assert (by_id[did].language, by_id[did].type) == (target.language, target.type)
            if tier == 1:
                assert by_id[did].path == target.path
        assert dset.tiers == sorted(dset.tiers)
        assert dset.difficulty in {"easy", "medium", "hard"}
    # 12 same-kind units: 9 distractors each; the lone go function and class have none.
    assert len(sets["u00"].distractor_ids) == 9
    assert sets["go1"].distractor_ids == [] and sets["cls1"].distractor_ids == []
    # Tier 1 takes the other units of the same file first.
    assert sets["u00"].tiers[:2] == [1, 1]
    assert set(sets["u00"].distractor_ids[:2]) == {"u01", "u02"}
    # Stored, then read back identically; selecting again (fresh run) gives the same sets.
    assert load_distractor_sets(ctx, embedder.backend.cache_key) == sets
    ctx.store.execute("SELECT 1")
    with ctx.store.transaction() as conn:
        conn.execute("DELETE FROM distractor_sets")
    assert ensure_distractor_sets(ctx, embedder) == sets


def test_another_seed_gives_other_sets(make_context: ContextFactory) -> None:
    a = ensure_distractor_sets(make_context(), get_embedder("builtin/hashing"))
    b_ctx = make_context(overrides={"evaluation.seed": 99})
    b = ensure_distractor_sets(b_ctx, get_embedder("builtin/hashing"))
    assert [s.distractor_ids for s in a.values()] != [s.distractor_ids for s in b.values()]


def test_difficulty_label_from_nearest_distractors() -> None:
    assert difficulty([0.9, 0.8, 0.7, 0.1]) == "hard"
    assert difficulty([0.7, 0.6, 0.55]) == "medium"
    assert difficulty([0.3, 0.2]) == "easy"
    assert difficulty([]) == "easy"


def test_selection_scales_without_pairwise_loops(make_context: ContextFactory) -> None:
    rng = np.random.default_rng(0)
    n = 4000
    units = [_unit(f"x{i:05d}", path=f"f{i % 400}.py", signature=f"def x{i}(a, b):",
                   params=[("a", None), ("b", "int" if i % 3 else None)]) for i in range(n)]
    vectors = rng.normal(size=(n, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ctx = make_context()
    start = time.perf_counter()
    pool = CandidatePool(units, vectors)
    for target in units[:50]:
        assert len(pool.select(target, 9, ctx).distractor_ids) == 9
    assert time.perf_counter() - start < 5.0
