"""Ranking metrics for retrieval and contrastive matching: hit@K, precision@K, reciprocal
rank, with one stated rule for tied scores.

Tie rule: documents whose scores are tied are in an unknown order, and a metric is its
expected value over all orders of each tied group, every order equally likely (McSherry and
Najork, "Computing information retrieval performance measures efficiently in the presence
of tied scores", ECIR 2008). A target tied with one other document at the top therefore has
hit@1 = 1/2 and reciprocal rank (1/1 + 1/2) / 2 = 3/4: neither the optimistic 1 nor the
pessimistic 1/2, and independent of document ids, so an index that returns tied documents
in some arbitrary order cannot change a score. With distinct scores this is the usual
definition, and equals trec_eval's (pytrec_eval) to the last bit.

hit@K (``precision[K]`` in results.json, docs/methods.md#retrieval-metrics; success@K in
trec_eval) is 1 when a relevant document is among the top K; precision@K is the fraction of the top
K that is relevant. With one relevant document per query, precision@K = hit@K / K.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from math import comb


@dataclass(frozen=True)
class Ranking:
    """A ranking as groups of tied documents, best first: ``(size, relevant in it)``."""

    groups: tuple[tuple[int, int], ...]

    @classmethod
    def from_scores(cls, scores: Mapping[str, float], relevant: Collection[str]) -> Ranking:
        """Group documents with exactly equal scores (higher is better)."""
        ordered = sorted(scores.items(), key=lambda kv: -kv[1])
        groups: list[tuple[int, int]] = []
        last: float | None = None
        for doc, score in ordered:
            hit = int(doc in relevant)
            if last is not None and score == last:
                size, rel = groups[-1]
                groups[-1] = (size + 1, rel + hit)
            else:
                groups.append((1, hit))
            last = score
        return cls(tuple(groups))

    @classmethod
    def for_target(cls, better: int, tied: int, worse: int = 0) -> Ranking:
        """One relevant document with ``better`` documents scored above it and ``tied``
        others scored the same (``worse`` below it only matters for completeness)."""
        groups = [(1, 0)] * better + [(tied + 1, 1)] + [(1, 0)] * worse
        return cls(tuple(groups))

    def _first_relevant(self) -> tuple[int, int, int] | None:
        """(documents before the group, group size, relevant in it) of the first group
        holding a relevant document."""
        before = 0
        for size, rel in self.groups:
            if rel:
                return before, size, rel
            before += size
        return None

    def hit_at(self, k: int) -> float:
        """Probability that a relevant document is in the top ``k``."""
        first = self._first_relevant()
        if first is None:
            return 0.0
        before, size, rel = first
        if before >= k:
            return 0.0
        slots = k - before
        if slots >= size:
            return 1.0
        return 1.0 - comb(size - rel, slots) / comb(size, slots)

    def precision_at(self, k: int) -> float:
        """Expected fraction of the top ``k`` that is relevant."""
        before = 0
        found = 0.0
        for size, rel in self.groups:
            if before >= k:
                break
            slots = min(size, k - before)
            found += rel * slots / size
            before += size
        return found / k

    def _first_rank_distribution(self) -> list[tuple[int, float]]:
        """(rank, probability) of the first relevant document."""
        first = self._first_relevant()
        if first is None:
            return []
        before, size, rel = first
        total = comb(size, rel)
        return [(before + j, comb(size - j, rel - 1) / total) for j in range(1, size - rel + 2)]

    def reciprocal_rank(self, cutoff: int | None = None) -> float:
        """Expected 1/rank of the first relevant document (0 beyond ``cutoff``)."""
        return sum(p / r for r, p in self._first_rank_distribution()
                   if cutoff is None or r <= cutoff)

    def expected_rank(self) -> float | None:
        """Expected rank of the first relevant document (None when none is ranked)."""
        dist = self._first_rank_distribution()
        return sum(r * p for r, p in dist) if dist else None


def target_ranking(target: float, others: Iterable[float], tolerance: float = 0.0) -> Ranking:
    """The ranking of one target among ``others`` (higher is better), counting scores within
    ``tolerance`` of the target's as tied with it (for float32 indexes, where the same cosine
    can come back one ulp apart)."""
    better = tied = worse = 0
    for score in others:
        if score > target + tolerance:
            better += 1
        elif score >= target - tolerance:
            tied += 1
        else:
            worse += 1
    return Ranking.for_target(better, tied, worse)


@dataclass(frozen=True)
class QueryResult:
    """One query's outcome: hit@K per K and the reciprocal rank."""

    query_type: str
    hits: dict[int, float]
    reciprocal_rank: float


def aggregate(results: Sequence[QueryResult], k_values: Sequence[int]) -> dict[str, object]:
    """Mean hit@K (``precision``) and MRR, overall and by query type
    (docs/methods.md#retrieval-metrics)."""

    def summarize(rows: Sequence[QueryResult]) -> dict[str, object]:
        n = len(rows)
        return {"precision": {k: sum(r.hits[k] for r in rows) / n for k in k_values},
                "mrr": sum(r.reciprocal_rank for r in rows) / n, "count": n}

    if not results:
        return {"precision": {k: 0.0 for k in k_values}, "mrr": 0.0, "count": 0,
                "byQueryType": {}}
    by_type: dict[str, list[QueryResult]] = {}
    for r in results:
        by_type.setdefault(r.query_type, []).append(r)
    out = summarize(results)
    out["byQueryType"] = {t: summarize(rows) for t, rows in sorted(by_type.items())}
    return out


def mean_metric(runs: Mapping[str, Mapping[str, float]],
                qrels: Mapping[str, Collection[str]], metric: str, k: int | None = None
                ) -> float:
    """Mean over queries of ``metric`` (``hit``, ``precision``, ``rr``) at ``k`` for scored
    runs (query -> doc -> score) against relevance sets (query -> relevant docs)."""
    values: list[float] = []
    for query, scores in runs.items():
        ranking = Ranking.from_scores(scores, qrels.get(query, ()))
        if metric == "hit":
            values.append(ranking.hit_at(_need(k)))
        elif metric == "precision":
            values.append(ranking.precision_at(_need(k)))
        elif metric == "rr":
            values.append(ranking.reciprocal_rank(k))
        else:
            raise ValueError(f"unknown metric {metric!r}: use hit, precision or rr")
    return sum(values) / len(values) if values else 0.0


def _need(k: int | None) -> int:
    if k is None or k <= 0:
        raise ValueError(f"this metric needs a positive k, got {k!r}")
    return k
