"""Normalization and weighting (docs/methods.md#aggregation), checked against hand
computations."""

from __future__ import annotations

import pytest

from pytest_summarybench.aggregate import family_scores, rank_models
from pytest_summarybench.aggregate.scoring import builtin_scoring
from pytest_summarybench.schemas import BenchmarkConfig, ScoreRecord


def rec(model: str, evaluator: str, unit: str = "u", error: str | None = None,
        **metrics: float) -> ScoreRecord:
    return ScoreRecord(unit_id=unit, model_id=model, evaluator=evaluator, error=error,
                       nodeid=f"{unit}-{model}-{evaluator}",
                       metrics={k.replace("_at_", "@"): v for k, v in metrics.items()})


def test_all_four_families_with_spec_default_weights() -> None:
    records = [
        rec("a", "judge/pointwise", weighted_average=4.0),      # (4-1)/4 = 0.75
        rec("a", "judge/pairwise", win=0.5),
        rec("a", "contrastive/embedding", correct=1.0),
        rec("a", "contrastive/llm", correct=0.0),
        rec("a", "retrieval/embedding", hit_at_1=0.2, hit_at_5=0.6, reciprocal_rank=0.4),
        rec("a", "downstream/completion", pass_rate=0.5),
        rec("a", "downstream/bug_localisation", success=1.0),
        rec("a", "downstream/function_selection", success=0.0),
    ]
    fb = family_scores(records, builtin_scoring(BenchmarkConfig()), ["a"])["a"]
    judge = 0.4 * 0.75 + 0.6 * 0.5
    contrastive = 0.5 * 1.0 + 0.5 * 0.0
    retrieval = 0.3 * 0.2 + 0.4 * 0.6 + 0.3 * 0.4
    downstream = 0.4 * 0.5 + 0.3 * 1.0 + 0.3 * 0.0
    assert fb.families == pytest.approx({"judge": judge, "contrastive": contrastive,
                                         "retrieval": retrieval, "downstream": downstream})
    assert fb.overall == pytest.approx(0.30 * judge + 0.25 * contrastive + 0.25 * retrieval
                                       + 0.20 * downstream)


def test_missing_families_and_components_are_renormalized() -> None:
    records = [
        rec("a", "contrastive/embedding", unit="u1", correct=1.0),
        rec("a", "contrastive/embedding", unit="u2", correct=0.0),
        rec("a", "retrieval/embedding", hit_at_1=0.0, hit_at_5=1.0, reciprocal_rank=0.25),
    ]
    fb = family_scores(records, builtin_scoring(BenchmarkConfig()), ["a"])["a"]
    # contrastive: only the embedding component ran, so it carries the whole family.
    assert fb.families["contrastive"] == pytest.approx(0.5)
    retrieval = 0.3 * 0.0 + 0.4 * 1.0 + 0.3 * 0.25
    assert fb.families["retrieval"] == pytest.approx(retrieval)
    # overall: judge and downstream did not run; 0.25 and 0.25 renormalize to halves.
    assert fb.overall == pytest.approx(0.5 * 0.5 + 0.5 * retrieval)


def test_errors_are_counted_not_scored() -> None:
    records = [rec("a", "contrastive/embedding", unit="u1", correct=1.0),
               rec("a", "contrastive/embedding", unit="u2", error="judge said nonsense")]
    fb = family_scores(records, builtin_scoring(BenchmarkConfig()), ["a"])["a"]
    assert (fb.items, fb.errors, fb.families["contrastive"]) == (1, 1, 1.0)


def test_custom_weights_apply() -> None:
    cfg = BenchmarkConfig.model_validate({"weights": {"contrastive": 1, "retrieval": 3},
                                          "scoring": {"contrastiveWeights": {"embedding": 1}}})
    records = [rec("a", "contrastive/embedding", correct=1.0),
               rec("a", "retrieval/embedding", hit_at_1=0, hit_at_5=0, reciprocal_rank=0)]
    assert family_scores(records, builtin_scoring(cfg), ["a"])["a"].overall == pytest.approx(0.25)


def test_ranking_orders_and_shares_ranks_on_ties() -> None:
    records = [rec("b", "contrastive/embedding", correct=1.0),
               rec("a", "contrastive/embedding", correct=1.0),
               rec("c", "contrastive/embedding", correct=0.0)]
    ranks = rank_models(family_scores(records, builtin_scoring(BenchmarkConfig()),
                                      ["a", "b", "c", "d"]))
    assert [(r.rank, r.model_id) for r in ranks] == [(1, "a"), (1, "b"), (3, "c"), (4, "d")]
    assert ranks[-1].scores.get("contrastive") is None


def test_per_unit_scores_weigh_each_unit_like_the_run() -> None:
    from pytest_summarybench.aggregate import unit_breakdowns

    records = [rec("a", "contrastive/embedding", unit="u1", correct=1.0),
               rec("a", "retrieval/embedding", unit="u1", hit_at_1=0, hit_at_5=1,
                   reciprocal_rank=0.5),
               rec("a", "contrastive/embedding", unit="u2", correct=0.0),
               rec("b", "contrastive/embedding", unit="u2", correct=1.0)]
    per_unit = unit_breakdowns(records, builtin_scoring(BenchmarkConfig()), ["a", "b"])
    retrieval = 0.4 * 1 + 0.3 * 0.5
    assert per_unit["a"]["u1"].overall == pytest.approx(0.5 * 1.0 + 0.5 * retrieval)
    # u2 has only contrastive: renormalized within the unit, as for the run.
    assert per_unit["a"]["u2"].overall == 0.0 and per_unit["b"]["u2"].overall == 1.0
    assert set(per_unit["b"]) == {"u2"}  # no score on u1, so no pair there


def test_pairwise_record_counts_judge_verdicts_once() -> None:
    from pytest_summarybench.aggregate.pairs import judge_record

    def verdict(model: str, opponent: str, win: float) -> ScoreRecord:
        r = rec(model, "judge/pairwise", win=win)
        r.details["opponent"] = opponent
        return r

    records = [verdict("a", "b", 1.0), verdict("b", "a", 0.0),
               verdict("a", "b", 0.5), verdict("b", "a", 0.5),
               verdict("a", "b", 0.0), verdict("b", "a", 1.0),
               verdict("a", "c", 1.0), verdict("c", "a", 0.0)]
    record = judge_record(records, "a", "b")
    assert record is not None
    assert (record.a_wins, record.b_wins, record.ties) == (1, 1, 1)
    assert judge_record(records, "b", "c") is None


def test_overall_interval_resamples_the_ranked_statistic() -> None:
    import numpy as np

    from pytest_summarybench.aggregate.intervals import (
        _unit_matrices,
        overall_interval,
        overall_scores,
    )

    rng = np.random.default_rng(0)
    records = []
    for u in range(40):
        records.append(rec("a", "contrastive/embedding", unit=f"u{u}",
                           correct=float(rng.random() < 0.7)))
        if u % 3 == 0:  # retrieval only on some units, as real runs have
            rank = int(rng.integers(1, 8))
            records.append(rec("a", "retrieval/embedding", unit=f"u{u}",
                               hit_at_1=float(rank == 1), hit_at_5=float(rank <= 5),
                               reciprocal_rank=1 / rank))
        records.append(rec("a", "judge/pointwise", unit=f"u{u}",
                           weighted_average=float(rng.integers(1, 6))))
    cfg = builtin_scoring(BenchmarkConfig())
    expected = family_scores(records, cfg, ["a"])["a"].overall
    _, sums, counts = _unit_matrices(records, "a", cfg)
    # Every unit drawn once: the same number family_scores ranks by.
    value, has = overall_scores(sums.sum(axis=0, keepdims=True),
                                counts.sum(axis=0, keepdims=True), cfg)
    assert has[0] and value[0] == pytest.approx(expected)
    low, high = overall_interval(records, cfg, "a", seed=1)
    assert low < expected < high and high - low < 0.3
    assert overall_interval(records, cfg, "a", seed=1) == (low, high)
    assert overall_interval(records, cfg, "nobody", seed=1) is None


def test_overall_uses_only_families_every_model_has() -> None:
    # b had no eligible judge: a's judge score must not make the two incomparable.
    records = [rec("a", "judge/pointwise", weighted_average=5.0),
               rec("a", "contrastive/embedding", correct=0.5),
               rec("b", "contrastive/embedding", correct=0.75)]
    fbs = family_scores(records, builtin_scoring(BenchmarkConfig()), ["a", "b"])
    assert fbs["a"].families == {"judge": 1.0, "contrastive": 0.5}
    assert (fbs["a"].overall, fbs["b"].overall) == (0.5, 0.75)
    assert [r.model_id for r in rank_models(fbs)] == ["b", "a"]


def test_the_interval_is_of_the_overall_score_as_ranked() -> None:
    """A family scored for only some models is left out of every overall score (a partial
    run's pairwise-only model, say); the interval must be of that same score. A new
    user's partial run showed overall 0.142 with a 95% interval of 0.50-0.62."""
    import dataclasses

    from pytest_summarybench.aggregate import build_report
    from pytest_summarybench.aggregate.intervals import overall_interval
    from pytest_summarybench.aggregate.ranking import pair_seed
    from tests.report.synthetic_report import make_inputs

    inputs = make_inputs(n_units=30)
    records = [r for r in inputs.records  # gamma has no retrieval score
               if not (r.model_id == "local/gamma" and r.evaluator.startswith("retrieval"))]
    report = build_report(dataclasses.replace(inputs, records=records))
    assert "retrieval in overall" in report.metadata.families_skipped
    spec = builtin_scoring(inputs.config)
    without = dataclasses.replace(spec, components=tuple(
        c for c in spec.components if c.family != "retrieval"))
    for ranking in report.rankings:
        low, high = ranking.confidence_interval
        assert low <= ranking.overall_score <= high, ranking.model_id
        mine = [r for r in records if r.model_id == ranking.model_id]
        assert (low, high) == overall_interval(
            mine, without, ranking.model_id,
            seed=pair_seed(inputs.config.seed, "overall", ranking.model_id))


def test_a_failure_s_issue_says_a_repeated_finding_once_with_its_count() -> None:
    # A new user's pass: a pairwise item's four records and a panel's verdicts repeated
    # "judge/pairwise win=0.00; judge/pairwise win=0.00; ..." over 15 lines of a row.
    from pytest_summarybench.aggregate.failures import issue_of

    spec = builtin_scoring(BenchmarkConfig())
    records = [ScoreRecord(unit_id="u", model_id="a", evaluator="judge/pairwise",
                           nodeid=f"n{i}", metrics={"win": 0.0},
                           details={"reasoning": "Longer is more informative."})
               for i in range(4)]
    records.append(rec("a", "contrastive/embedding", correct=0.0))
    assert issue_of(records, spec) == (
        "contrastive/embedding correct=0.00; judge/pairwise win=0.00 (x4); "
        "judge: Longer is more informative. (x4)")
