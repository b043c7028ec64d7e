"""Distractor selection: the tiers of docs/methods.md#distractor-tiers, the candidate filter,
reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_summarybench.embeddings import get_embedder
from pytest_summarybench.evaluators.contrastive import distractors
from pytest_summarybench.evaluators.contrastive.distractors import (
    EXACT_LIMIT,
    CandidatePool,
    difficulty,
    signature_similarity,
)
from pytest_summarybench.evaluators.contrastive.sets import (
    ensure_distractor_sets,
    load_distractor_sets,
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


def _big_group(n: int, seed: int = 0) -> tuple[list[CodeUnit], np.ndarray]:
    """``n`` functions in 100 files with two signature shapes and clustered vectors (so
    the semantic band has members)."""
    rng = np.random.default_rng(seed)
    units = [_unit(f"x{i:05d}", path=f"f{i % 100}.py", signature=f"def x{i}(a, b):",
                   params=[("a", None), ("b", "int" if i % 3 else None)]) for i in range(n)]
    centres = rng.normal(size=(n // 20, 64))
    vectors = centres[rng.integers(0, len(centres), n)] + 0.6 * rng.normal(size=(n, 64))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return units, vectors.astype(np.float32)


def test_large_groups_use_the_index_reproducibly_and_agree_with_exact_scoring(
        make_context: ContextFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    n = EXACT_LIMIT + 500
    units, vectors = _big_group(n)
    ctx = make_context()
    targets = units[::25]
    indexed = CandidatePool(units, vectors).select_many(targets, 9, ctx)
    assert CandidatePool(units, vectors).select_many(targets, 9, ctx) == indexed
    # One target alone gets the set it gets in a batch.
    assert CandidatePool(units, vectors).select(targets[3], 9, ctx) == indexed[targets[3].id]
    tiers = [t for s in indexed.values() for t in s.tiers]
    assert tiers.count(3) > len(targets)  # the band is populated: the index path is used
    for dset in indexed.values():
        assert len(dset.distractor_ids) == 9 == len(set(dset.distractor_ids))
        assert dset.target_id not in dset.distractor_ids
        band = [s for s, t in zip(dset.similarities, dset.tiers, strict=True) if t == 3]
        assert all(0.5 < s < 0.95 for s in band) and band == sorted(band, reverse=True)
    monkeypatch.setattr(distractors, "EXACT_LIMIT", n)
    exact = CandidatePool(units, vectors).select_many(targets, 9, ctx)
    same = sum(exact[t.id] == indexed[t.id] for t in targets)
    assert same >= 0.9 * len(targets), (same, len(targets))


def test_draws_from_large_pools_are_uniform_and_skip_taken_units() -> None:
    from random import Random

    from scipy.stats import chisquare

    taken = {0, 5, 17}
    counts = np.zeros(400)
    rng = Random(1)
    for _ in range(4000):
        picks = distractors._sample_range(400, 3, rng, taken)
        assert len(set(picks)) == 3 and not taken & set(picks)
        counts[picks] += 1
    free = [i for i in range(400) if i not in taken]
    assert chisquare(counts[free]).pvalue > 0.001
    parts, totals = [[1, 3, 5], list(range(100, 400))], [3, 303]
    for _ in range(200):
        picks = distractors._sample_union(parts, totals, 3, rng, {3})
        assert len(set(picks)) == 3 and all(p in {1, 5} or 100 <= p < 400 for p in picks)


def test_signature_tier_draws_only_similar_signatures(make_context: ContextFactory) -> None:
    ctx = make_context()
    units = [_unit(f"s{i:04d}", path=f"p{i}.py", signature=f"def s{i}(a: int, b: int):",
                   params=[("a", "int"), ("b", "int")]) for i in range(600)]
    units += [_unit(f"o{i:04d}", path=f"q{i}.py", signature=f"def o{i}(c: str):",
                    params=[("c", "str")]) for i in range(600)]
    vectors = np.eye(1200, 8, dtype=np.float32)[:, :8] + 0.0
    vectors[8:] = np.array([0, 0, 0, 0, 0, 0, 0, 1], dtype=np.float32)  # no band at all
    sets = CandidatePool(units, vectors).select_many(units[::50], 9, ctx)
    for uid, dset in sets.items():
        for did, tier in zip(dset.distractor_ids, dset.tiers, strict=True):
            if tier == 2:
                assert did[0] == uid[0]
        assert dset.tiers.count(2) == 3


def _topic_units(n: int) -> list[CodeUnit]:
    """``n`` functions over a few topics and files, each with its own seeded mix of its
    topic's words (so the semantic band has members and cosines rarely tie)."""
    import random

    rng = random.Random(7)
    topics = [("price discount tax total amount rate currency round", "pricing.py"),
              ("password hash salt user login token secret verify", "auth.py"),
              ("cache evict expire entry size bytes key store", "cache.py"),
              ("query token rank score result search index match", "search.py")]
    out = []
    for i in range(n):
        words, path = topics[i % len(topics)]
        w = words.split()
        body = " + ".join(rng.choice(w) for _ in range(rng.randint(3, 9)))
        name = f"{rng.choice(w)}_{rng.choice(w)}_{i}"
        out.append(CodeUnit(
            id=f"t{i:03d}", path=f"{i % 7}/{path}", name=name, type="function",
            language="python",
            content=f"def {name}(value, other):\n    return {body}\n",
            metadata=UnitMetadata(start_line=1, end_line=2,
                                  signature=f"def {name}(value, other):",
                                  parameters=[Parameter(name="value"),
                                              Parameter(name="other")])))
    return out


def test_candidate_search_with_every_unit_shortlisted_equals_the_exact_method(
        make_context: ContextFactory) -> None:
    """The candidates method differs from the exact one only in which units the model
    scores for the semantic tier: with a shortlist as long as the group, the sets are
    the exact method's, tier by tier."""
    units = _topic_units(40)
    exact_ctx = make_context(units=units, overrides={
        "evaluation.contrastive.distractorSearch": "exact"})
    exact = ensure_distractor_sets(exact_ctx, get_embedder("builtin/hashing", exact_ctx.store))
    cand_ctx = make_context(units=units, overrides={
        "evaluation.contrastive.candidatesPerTarget": 100})
    cand = ensure_distractor_sets(cand_ctx, get_embedder("builtin/hashing", cand_ctx.store))
    assert any(3 in s.tiers for s in exact.values())
    assert cand.keys() == exact.keys()
    for uid, dset in exact.items():
        assert cand[uid].distractor_ids == dset.distractor_ids
        assert cand[uid].tiers == dset.tiers
        assert cand[uid].similarities == pytest.approx(dset.similarities, abs=1e-6)


def test_candidate_search_embeds_the_sample_not_the_codebase(
        make_context: ContextFactory) -> None:
    """The evaluation model sees the targets, their shortlists and the drawn distractors
    only: a sample of 4 out of 120 units with shortlists of 5 embeds at most
    4 x (1 + 5 + 9) texts, and the sets are stored for the workers."""
    units = _topic_units(120)
    ctx = make_context(units=units, overrides={
        "evaluation.contrastive.candidatesPerTarget": 5})
    targets = units[:4]
    ctx = ctx.with_units(targets)
    embedder = get_embedder("builtin/hashing", ctx.store)
    sets = ensure_distractor_sets(ctx, embedder)
    assert set(sets) == {u.id for u in targets}
    assert all(len(s.distractor_ids) == 9 for s in sets.values())
    assert 0 < embedder.computed <= 4 * (1 + 5 + 9)
    assert load_distractor_sets(ctx, embedder.backend.cache_key) == sets


def centered(cheap: np.ndarray) -> np.ndarray:
    """Static vectors as the shortlist compares them: less the group's mean, unit length
    (the brute force, in float64)."""
    out = cheap.astype(np.float64)
    out -= out.mean(axis=0)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_the_shortlist_compared_in_slices_is_the_brute_force_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_summarybench.evaluators.contrastive import candidates

    rng = np.random.default_rng(3)
    cheap = rng.normal(size=(300, 16)).astype(np.float16)
    rows = [0, 7, 150, 299]
    monkeypatch.setattr(candidates, "_COLUMNS", 37)
    monkeypatch.setattr(candidates, "_BLOCK", 3)
    monkeypatch.setattr(candidates, "_CAST", 5, raising=False)
    sliced = candidates._shortlist(cheap, rows, 12)
    full = centered(cheap) @ centered(cheap).T
    for pos in rows:
        sims = full[pos].copy()
        sims[pos] = -np.inf
        expected = [int(p) for p in np.lexsort((np.arange(300), -sims))[:12]]
        assert sliced[pos] == expected


def test_the_shortlist_holds_no_float32_copy_of_a_slice() -> None:
    """Issue 34 (the hostile pass's R9: 682 MB for a sample of 3 out of 200,000 units):
    the static stage compared a group's float16 vectors 16,384 units at a time, each
    slice copied whole to float32 (25 MB, more than the group's own vectors here). Now a
    few columns at a time: the product's memory is a fraction of the group's vectors."""
    import tracemalloc

    from pytest_summarybench.evaluators.contrastive import candidates

    rng = np.random.default_rng(5)
    cheap = rng.normal(size=(20_000, 384)).astype(np.float16)  # 15.4 MB
    rows = [3, 9_999, 19_000]
    tracemalloc.start()
    try:
        found = candidates._shortlist(cheap, rows, 50)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < cheap.nbytes / 3, (peak, cheap.nbytes)  # 35 MB before
    full = centered(cheap)[rows] @ centered(cheap).T
    for i, pos in enumerate(rows):
        sims = full[i].copy()
        sims[pos] = -np.inf
        assert found[pos] == [int(p) for p in np.lexsort((np.arange(20_000), -sims))[:50]]


def _three_groups() -> list[CodeUnit]:
    """Topic units in three groups (language, type) of 24, 10 and 6 units."""
    units = _topic_units(40)
    return [u.model_copy(update={"type": "method"}) if 24 <= i < 34
            else u.model_copy(update={"language": "javascript"}) if i >= 34 else u
            for i, u in enumerate(units)]


def test_sets_searched_group_by_group_are_those_of_one_search(
        make_context: ContextFactory) -> None:
    """Issue 32: the warm-up stores and publishes the sets in steps of whole groups,
    cheapest per target first (here a group a step); a set depends on its target only,
    so they are the sets of one search over every group (today's), and a search stopped
    after a step and taken up again by a later session ends with the same sets."""
    import threading

    from pytest_summarybench.evaluators.contrastive.candidates import select_sampled
    from pytest_summarybench.evaluators.contrastive.sets import embed_codebase, set_name

    overrides = {"evaluation.contrastive.candidatesPerTarget": 8}
    units = _three_groups()
    # 12 of the 24 python functions (24 texts for 12 sets), 1 of the 10 methods (10 texts
    # for 1), the 6 javascript functions (6 for 6): javascript first, methods last
    sample = [*units[0:24:2], units[24], *units[34:]]
    one_ctx = make_context(units=units, overrides=overrides).with_units(sample)
    one = select_sampled(one_ctx, get_embedder("builtin/hashing", one_ctx.store),
                         list(one_ctx.units), 9, 8)
    assert one is not None and len({(u.language, u.type) for u in one_ctx.units}) == 3

    ctx = make_context(units=units, overrides=overrides).with_units(sample)
    embedder = get_embedder("builtin/hashing", ctx.store)
    stop = threading.Event()
    published: list[list[str]] = []

    def publish_once(names: list[str]) -> None:  # the session stops after one step
        published.append(list(names))
        if names:
            stop.set()

    embed_codebase(ctx, embedder, stop, publish_once)
    stored = load_distractor_sets(ctx, embedder.backend.cache_key)
    # nothing was stored at first; then the group cheapest per target, not the first one
    # of the sample
    assert published[0] == [] and len(published) == 2
    assert {u.id for u in units[34:]} == set(stored)
    assert published[1] == [set_name(uid) for uid in stored]

    resumed: list[str] = []
    embed_codebase(ctx, embedder, threading.Event(), resumed.extend)
    assert sorted(resumed) == sorted(set_name(u.id) for u in ctx.units)
    groups = [n.split()[-1] for n in resumed[len(stored):]]  # after the stored ones
    assert groups == [u.id for u in sample[:12]] + [units[24].id]
    again = load_distractor_sets(ctx, embedder.backend.cache_key)
    assert again.keys() == one.keys()
    for uid, dset in one.items():
        assert again[uid] == dset


def test_many_small_groups_are_searched_in_a_few_steps_of_whole_groups() -> None:
    """``groups_in_order``: 40 groups of 3 units (2 targets each) are about ``STEPS``
    searches, not 40; every step holds whole groups, and a group that costs more per
    target (here 10 units for 1 target) comes last."""
    from types import SimpleNamespace

    from pytest_summarybench.evaluators.contrastive.sets import STEPS, groups_in_order

    targets = [SimpleNamespace(id=f"{g}-{i}", language="python", type=f"t{g}")
               for g in range(40) for i in range(2)]
    big = SimpleNamespace(id="big-0", language="python", type="big")
    ctx = SimpleNamespace(unit_groups={**{("python", f"t{g}"): 3 for g in range(40)},
                                       ("python", "big"): 10})
    steps = groups_in_order(ctx, [big, *targets], 50)  # type: ignore[arg-type]
    assert STEPS - 1 <= len(steps) <= STEPS + 1
    assert [t.id for step in steps for t in step] == [t.id for t in [*targets, big]]
    assert all(len({t.type for t in step}) * 2 == len(step) for step in steps[:-1])
    assert steps[-1][-1] is big
