"""P@K, hit@K and MRR against trec_eval (pytrec_eval), and the tie rule by enumeration."""

from __future__ import annotations

import itertools
import random

import pytest

from pytest_summarybench.stats.ir import (
    QueryResult,
    Ranking,
    aggregate,
    mean_metric,
    target_ranking,
)


def _random_runs(seed: int, queries: int = 40, docs: int = 30
                 ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    """Rankings with distinct scores and 1-3 relevant documents per query (some none)."""
    rng = random.Random(seed)
    runs: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(queries):
        scores = rng.sample(range(1, 10_000), docs)
        runs[f"q{q}"] = {f"d{d}": s / 997.0 for d, s in enumerate(scores)}
        relevant = rng.sample(range(docs), rng.choice([1, 1, 1, 2, 3]))
        # trec_eval needs at least one judged document; a query with only a non-relevant
        # judgement has RR 0.
        qrels[f"q{q}"] = ({f"d{d}": 1 for d in relevant} if q % 7 else {"d0": 0})
    return runs, qrels


@pytest.mark.parametrize("seed", range(20))
def test_distinct_scores_equal_trec_eval(seed: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    runs, qrels = _random_runs(seed)
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {"P.1,3,5,10", "success.1,5,10", "recip_rank"})
    reference = evaluator.evaluate(runs)
    relevant = {q: {d for d, r in j.items() if r > 0} for q, j in qrels.items()}

    def trec_mean(measure: str) -> float:
        return sum(reference[q][measure] for q in runs) / len(runs)

    for k in (1, 3, 5, 10):
        assert mean_metric(runs, relevant, "precision", k) == pytest.approx(
            trec_mean(f"P_{k}"), abs=1e-9)
    for k in (1, 5, 10):
        assert mean_metric(runs, relevant, "hit", k) == pytest.approx(
            trec_mean(f"success_{k}"), abs=1e-9)
    assert mean_metric(runs, relevant, "rr") == pytest.approx(trec_mean("recip_rank"),
                                                               abs=1e-9)


def test_reciprocal_rank_cutoff_equals_trec_eval_on_truncated_runs() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    runs, qrels = _random_runs(7)
    relevant = {q: {d for d, r in j.items() if r > 0} for q, j in qrels.items()}
    for k in (1, 3, 10):
        top = {q: dict(sorted(s.items(), key=lambda kv: -kv[1])[:k]) for q, s in runs.items()}
        reference = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top)
        expected = sum(reference[q]["recip_rank"] for q in runs) / len(runs)
        assert mean_metric(runs, relevant, "rr", k) == pytest.approx(expected, abs=1e-9)


def _by_enumeration(scores: dict[str, float], relevant: set[str], k: int
                    ) -> tuple[float, float, float]:
    """hit@k, precision@k and RR averaged over every order of the tied documents."""
    groups: dict[float, list[str]] = {}
    for doc, s in scores.items():
        groups.setdefault(s, []).append(doc)
    ordered = [groups[s] for s in sorted(groups, reverse=True)]
    totals = [0.0, 0.0, 0.0]
    count = 0
    for perms in itertools.product(*(itertools.permutations(g) for g in ordered)):
        ranking = [d for p in perms for d in p]
        top = ranking[:k]
        totals[0] += float(any(d in relevant for d in top))
        totals[1] += sum(d in relevant for d in top) / k
        first = next((i + 1 for i, d in enumerate(ranking) if d in relevant), None)
        totals[2] += 1.0 / first if first else 0.0
        count += 1
    return totals[0] / count, totals[1] / count, totals[2] / count


@pytest.mark.parametrize("case", [
    ({"a": 0.9, "t": 0.9, "b": 0.1}, {"t"}),
    ({"a": 0.9, "b": 0.5, "t": 0.5, "c": 0.5, "d": 0.1}, {"t"}),
    ({"a": 0.5, "b": 0.5, "t": 0.5, "u": 0.5, "c": 0.2}, {"t", "u"}),
    ({"a": 0.7, "t": 0.3, "b": 0.3, "u": 0.1}, {"t", "u"}),
])
def test_tie_rule_is_the_expectation_over_tie_orders(
        case: tuple[dict[str, float], set[str]]) -> None:
    scores, relevant = case
    ranking = Ranking.from_scores(scores, relevant)
    for k in (1, 2, 3):
        hit, precision, rr = _by_enumeration(scores, relevant, k)
        assert ranking.hit_at(k) == pytest.approx(hit, abs=1e-12)
        assert ranking.precision_at(k) == pytest.approx(precision, abs=1e-12)
        assert ranking.reciprocal_rank() == pytest.approx(rr, abs=1e-12)


def test_tie_rule_hand_computed() -> None:
    # The target tied with one other at the top: hit@1 = 1/2, RR = (1 + 1/2) / 2.
    ranking = target_ranking(0.8, [0.8, 0.2, 0.1])
    assert ranking.hit_at(1) == 0.5
    assert ranking.hit_at(2) == 1.0
    assert ranking.reciprocal_rank() == 0.75
    assert ranking.expected_rank() == 1.5
    # Tied with two others after one better: ranks 2, 3 or 4 equally likely.
    ranking = target_ranking(0.5, [0.9, 0.5, 0.5, 0.1])
    assert ranking.hit_at(2) == pytest.approx(1 / 3)
    assert ranking.reciprocal_rank() == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert ranking.reciprocal_rank(cutoff=3) == pytest.approx((1 / 2 + 1 / 3) / 3)
    assert ranking.expected_rank() == 3.0


def test_tolerance_merges_float32_noise_into_a_tie() -> None:
    assert target_ranking(0.5, [0.5 + 1e-8], tolerance=1e-6).hit_at(1) == 0.5
    assert target_ranking(0.5, [0.5 + 1e-8]).hit_at(1) == 0.0
    assert target_ranking(0.5, [0.5 - 1e-8]).hit_at(1) == 1.0


def test_no_relevant_document_scores_zero() -> None:
    ranking = Ranking.from_scores({"a": 1.0, "b": 0.5}, set())
    assert (ranking.hit_at(1), ranking.reciprocal_rank(), ranking.expected_rank()) == (
        0.0, 0.0, None)


def test_aggregate_by_query_type_follows_spec_7_2() -> None:
    results = [QueryResult("vague", {1: 1.0, 5: 1.0}, 1.0),
               QueryResult("vague", {1: 0.0, 5: 1.0}, 0.25),
               QueryResult("integration", {1: 0.0, 5: 0.0}, 0.0)]
    out = aggregate(results, [1, 5])
    assert out["precision"] == {1: pytest.approx(1 / 3), 5: pytest.approx(2 / 3)}
    assert out["mrr"] == pytest.approx(1.25 / 3)
    assert out["byQueryType"] == {
        "integration": {"precision": {1: 0.0, 5: 0.0}, "mrr": 0.0, "count": 1},
        "vague": {"precision": {1: 0.5, 5: 1.0}, "mrr": 0.625, "count": 2}}
