"""The validity analysis against hand computation and scipy: Kendall's tau of the ladder,
Holm-corrected paired tests of each step, the A/A rate, and the judge checks (a judge that
ignores content is flagged, a competent one is not)."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.schemas import ScoreRecord
from pytest_summarybench.settings import load_settings
from pytest_summarybench.validity import LEVEL_IDS, TWIN
from pytest_summarybench.validity.analysis import (
    AA_RESEEDS,
    aa_rate,
    analyze,
    family_validity,
    ladder_tau,
)

L1, L2, L3, L4 = LEVEL_IDS
MODELS = (*LEVEL_IDS, TWIN[0])
UNITS = [f"u{i:02d}" for i in range(12)]


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return load_settings(None, base_dir=Path(tmp_path_factory.mktemp("cfg")),
                         families=BUILTIN_FAMILIES).benchmark_config()


def test_ladder_tau_by_hand() -> None:
    assert ladder_tau([0.9, 0.6, 0.3, 0.1]) == pytest.approx(1.0)
    # one adjacent swap: 5 concordant, 1 discordant pair of 6
    assert ladder_tau([0.9, 0.6, 0.1, 0.3]) == pytest.approx(4 / 6)
    assert ladder_tau([0.1, 0.3, 0.6, 0.9]) == pytest.approx(-1.0)
    assert ladder_tau([0.5, 0.5, 0.5, 0.5]) is None


def _scores(rng: np.random.Generator, means: dict[str, float],
            noise: float = 0.05) -> dict[str, dict[str, float]]:
    base = {u: rng.normal(0, noise) for u in UNITS}
    return {m: {u: float(np.clip(mu + base[u] + rng.normal(0, noise), 0, 1)) for u in UNITS}
            for m, mu in means.items()}


def test_a_family_that_orders_the_ladder(config) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    scores = _scores(rng, {L1: 0.9, L2: 0.6, L3: 0.35, L4: 0.1})
    scores[TWIN[0]] = dict(scores[L1])
    out = family_validity("contrastive", scores, seed=0)
    assert out is not None
    assert out.kendall_tau == pytest.approx(1.0) and out.status == "valid"
    assert not out.flagged and out.units == len(UNITS)
    assert out.measured_order == list(LEVEL_IDS)
    # each step: scipy's paired t-test, then Holm over the three steps by hand
    raw = [stats.ttest_rel([scores[a][u] for u in UNITS], [scores[b][u] for u in UNITS]).pvalue
           for a, b in zip(LEVEL_IDS, LEVEL_IDS[1:], strict=False)]
    order = np.argsort(raw)
    holm = np.empty(3)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (3 - rank) * raw[i]))
        holm[i] = running
    for step, p, adj in zip(out.steps, raw, holm, strict=True):
        assert step.p_value == pytest.approx(p, rel=1e-9)
        assert step.p_adjusted == pytest.approx(adj, rel=1e-9)
        assert step.significant
    assert out.aa_mean_difference == 0.0 and out.aa_significant_rate == 0.0
    assert out.aa_reseeds == AA_RESEEDS


def test_swapped_levels_and_flat_scores_are_flagged() -> None:
    rng = np.random.default_rng(2)
    swapped = family_validity("retrieval", _scores(rng, {L1: 0.9, L2: 0.6, L3: 0.1, L4: 0.3}),
                              seed=0)
    assert swapped is not None and swapped.flagged and swapped.status == "partial order"
    assert swapped.kendall_tau == pytest.approx(4 / 6)
    assert "l4-other > l3-boilerplate" in swapped.note
    flat = family_validity("judge", {m: {u: 0.5 for u in UNITS} for m in LEVEL_IDS}, seed=0)
    assert flat is not None and flat.flagged and flat.status == "cannot order"
    assert flat.kendall_tau is None and flat.note == "scored every level the same"


def test_ordered_but_unresolved_steps_are_low_resolution() -> None:
    rng = np.random.default_rng(3)
    scores = _scores(rng, {L1: 0.9, L2: 0.6, L3: 0.35})
    # level 4 a hair below level 3 on average, with a spread that hides the step
    scores[L4] = {u: scores[L3][u] - (0.1 if i % 2 else -0.09) for i, u in enumerate(UNITS)}
    out = family_validity("contrastive", scores, seed=0)
    assert out is not None and out.kendall_tau == pytest.approx(1.0)
    assert out.status == "low resolution" and not out.flagged
    assert not out.steps[-1].significant and "l3-boilerplate > l4-other" in out.note


def test_aa_rate_counts_significant_reseeds() -> None:
    same = [0.1, 0.5, 0.9, 0.3, 0.7]
    assert aa_rate(same, same, seed=0) == 0.0
    shifted = [x + 0.2 + 0.01 * i for i, x in enumerate(same)]
    assert aa_rate(shifted, same, seed=0) == 1.0
    assert aa_rate([0.1], [0.2], seed=0) is None
    rng = np.random.default_rng(4)
    a, b = list(rng.normal(0, 1, 40)), list(rng.normal(0, 1, 40))
    rate = aa_rate(a, b, seed=1)
    assert rate is not None and rate <= 0.5
    assert aa_rate(a, b, seed=1) == rate


def _judge_records(judge: str, honest: bool) -> list[ScoreRecord]:
    """Pointwise and both-order pairwise records of one judge on the ladder; an honest
    judge scores by level, a content-ignoring one gives 3 and prefers position A."""
    quality = {L1: 5, TWIN[0]: 5, L2: 4, L3: 2, L4: 1}
    out = []
    for u in UNITS:
        for m in MODELS:
            score = float(quality[m] if honest else 3)
            out.append(ScoreRecord(unit_id=u, model_id=m, evaluator="judge/pointwise",
                                   metrics={"weighted_average": score},
                                   details={"judge": judge}))
        for a, b in combinations(sorted(MODELS), 2):
            for first, second in ((a, b), (b, a)):
                if honest:
                    win = 0.5 if quality[first] == quality[second] else float(
                        quality[first] > quality[second])
                else:
                    win = 1.0
                for model, pos, score in ((first, "A", win), (second, "B", 1 - win)):
                    out.append(ScoreRecord(
                        unit_id=u, model_id=model, evaluator="judge/pairwise",
                        metrics={"win": score},
                        details={"judge": judge, "position": pos,
                                 "opponent": second if model == first else first,
                                 "length": 10, "opponentLength": 10}))
    return out


def test_a_content_ignoring_judge_is_flagged(config) -> None:  # type: ignore[no-untyped-def]
    section = analyze(_judge_records("local/ignores-content", honest=False), config, 12)
    (family,) = section.families
    assert family.family == "judge" and family.flagged and family.kendall_tau is None
    (judge,) = section.judges
    assert judge.flagged and judge.flip_rate == 1.0 and judge.pointwise_tau is None
    assert judge.swapped_pairs == len(UNITS) * 10
    assert any(msg.startswith("judge:") for msg in section.flagged)
    assert any(msg.startswith("judge local/ignores-content:") for msg in section.flagged)


def test_a_competent_judge_passes_and_judges_agree(config) -> None:  # type: ignore[no-untyped-def]
    records = (_judge_records("local/a", honest=True)
               + _judge_records("local/b", honest=True))
    section = analyze(records, config, 12)
    (family,) = section.families
    assert family.kendall_tau == pytest.approx(1.0) and not family.flagged
    assert section.flagged == []
    assert [j.flip_rate for j in section.judges] == [0.0, 0.0]
    assert [j.pointwise_tau for j in section.judges] == [pytest.approx(1.0)] * 2
    assert section.judge_agreement["rubric"]["cohen"][0]["kappa"] == pytest.approx(1.0)
    assert section.judge_agreement["pairwise"]["cohen"][0]["kappa"] == pytest.approx(1.0)


def test_a_tie_or_a_reversal_within_noise_is_low_resolution_not_distrust() -> None:
    """A small codebase's ladder often ties boilerplate and another unit's docstring at 0
    (tau < 1); only a step reversed significantly makes the family one to distrust."""
    rng = np.random.default_rng(4)
    scores = _scores(rng, {L1: 0.9, L2: 0.6})
    scores[L3] = {u: 0.0 for u in UNITS}
    scores[L4] = {u: 0.0 for u in UNITS}
    tied = family_validity("contrastive", scores, seed=0)
    assert tied is not None and tied.kendall_tau is not None and tied.kendall_tau < 1.0
    assert tied.status == "low resolution" and not tied.flagged
    assert "l3-boilerplate > l4-other" in tied.note
