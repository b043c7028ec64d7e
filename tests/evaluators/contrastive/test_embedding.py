"""contrastive/embedding: prepare on the controller, evaluate anywhere from the cache."""

from __future__ import annotations

import pytest

from pytest_summarybench.context import RunContext
from pytest_summarybench.evaluators import BUILTIN_EVALUATORS, EvaluationError, load_builtin
from pytest_summarybench.evaluators.contrastive.embedding import ContrastiveEmbedding
from tests.evaluators.synthetic import ContextFactory


def _scores(ctx: RunContext, ev: ContrastiveEmbedding) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for item in ev.items(ctx):
        (rec,) = ev.evaluate(item, ctx)
        out.setdefault(item.model_id, []).append(rec.metrics["correct"])
    return out


def test_good_summaries_beat_the_shuffled_control(make_context: ContextFactory) -> None:
    ctx = make_context()
    ev = ContrastiveEmbedding()
    ev.prepare(ctx)
    scores = _scores(ctx, ev)
    good = sum(scores["builtin/good"]) / len(scores["builtin/good"])
    shuffled = sum(scores["builtin/shuffled"]) / len(scores["builtin/shuffled"])
    assert good >= 0.75 and shuffled <= 0.25, (good, shuffled)


def test_record_shape(make_context: ContextFactory) -> None:
    ctx = make_context()
    ev = ContrastiveEmbedding()
    ev.prepare(ctx)
    item = next(i for i in ev.items(ctx) if i.model_id == "builtin/good")
    (rec,) = ev.evaluate(item, ctx)
    assert set(rec.metrics) == {"correct", "predicted_rank", "confidence_gap"}
    assert rec.metrics["correct"] in (0.0, 1.0)
    assert rec.metrics["predicted_rank"] >= 1.0
    assert rec.evaluator == "contrastive/embedding" and rec.unit_id == item.unit_id
    assert len(rec.details["distractorIds"]) == 9 == len(rec.details["tiers"])
    assert rec.details["options"] == 10
    assert rec.details["difficulty"] in {"easy", "medium", "hard"}
    assert rec.details["embeddingModel"] == "builtin/hashing"


def test_the_record_says_which_option_the_summary_came_nearest(
        make_context: ContextFactory) -> None:
    """What the explorer shows: the summary's cosine to each option (target first) and the
    option picked; a miss picked another option, a hit the target."""
    ctx = make_context()
    ev = ContrastiveEmbedding()
    ev.prepare(ctx)
    misses = 0
    for item in ev.items(ctx):
        (rec,) = ev.evaluate(item, ctx)
        d = rec.details
        options = [item.unit_id, *d["distractorIds"]]
        sims = d["summarySimilarities"]
        assert len(sims) == len(options) == d["options"]
        assert sims[0] == pytest.approx(d["targetSimilarity"], abs=1e-4)
        assert d["picked"] in options and max(sims) - sims[options.index(d["picked"])] <= 1e-4
        assert (d["picked"] == item.unit_id) == (rec.metrics["correct"] > 0)
        misses += d["picked"] != item.unit_id
    assert misses, "the shuffled control misses some units"


def test_worker_reads_what_the_controller_prepared(make_context: ContextFactory) -> None:
    ctx = make_context()
    controller = ContrastiveEmbedding()
    controller.prepare(ctx)
    expected = _scores(ctx, controller)
    # A worker: its own context and evaluator over the same store; nothing is embedded.
    worker_ctx = RunContext(ctx.settings, ctx.store, ctx.run_id)
    worker = ContrastiveEmbedding()
    assert _scores(worker_ctx, worker) == expected
    assert worker.embedder(worker_ctx).computed == 0


def test_missing_summary_is_an_evaluation_error(make_context: ContextFactory) -> None:
    ctx = make_context(missing=(("u03", "builtin/good"),))
    ev = ContrastiveEmbedding()
    ev.prepare(ctx)
    item = next(i for i in ev.items(ctx)
                if (i.unit_id, i.model_id) == ("u03", "builtin/good"))
    with pytest.raises(EvaluationError, match="the provider refused"):
        ev.evaluate(item, ctx)


@pytest.mark.parametrize("search", ["candidates", "exact"])
def test_a_distractor_with_the_target_s_code_is_never_offered(
        make_context: ContextFactory, search: str) -> None:
    """Issue 33: byte-identical code offered twice made the right answer a coin toss (it
    scored 0.5 as a tie); such a distractor is dropped whichever search selected the set,
    and an item left with no option to tell apart is an error saying so, not a score."""
    from tests.evaluators.synthetic import make_units

    units = make_units()
    target = units[0]
    # A copy in another file, and one that differs in whitespace only.
    units[1].content = target.content
    units[2].content = target.content.replace("    ", "\t").replace(" * ", "*")
    ctx = make_context(units=units, overrides={
        "evaluation.contrastive.distractors": 11,
        "evaluation.contrastive.distractorSearch": search})
    ev = ContrastiveEmbedding()
    ev.prepare(ctx)
    dset = ev.distractor_set(ctx, target.id)
    assert {units[1].id, units[2].id}.isdisjoint(dset.distractor_ids)
    assert len(dset.distractor_ids) == 9 == len(dset.tiers) == len(dset.similarities)
    item = next(i for i in ev.items(ctx) if i.unit_id == target.id)
    (rec,) = ev.evaluate(item, ctx)
    assert rec.details["distractorIds"] == dset.distractor_ids
    assert rec.metrics["correct"] in (0.0, 1.0)          # never a coin toss
    lone = make_context(units=units[:3], overrides={
        "evaluation.contrastive.distractors": 2,
        "evaluation.contrastive.distractorSearch": search})
    ev = ContrastiveEmbedding()
    ev.prepare(lone)
    item = next(i for i in ev.items(lone) if i.unit_id == target.id)
    with pytest.raises(EvaluationError, match="no option can be told apart"):
        ev.evaluate(item, lone)


def test_registered_and_skippable(make_context: ContextFactory) -> None:
    assert isinstance(load_builtin("contrastive/embedding"), ContrastiveEmbedding)
    assert "contrastive/embedding" in BUILTIN_EVALUATORS
    ctx = make_context(overrides={"evaluation.contrastive.methods": ["llm"]})
    assert "methods" in (ContrastiveEmbedding().skip_reason(ctx) or "")


def test_a_unit_with_no_candidate_is_no_item(make_context: ContextFactory) -> None:
    from tests.evaluators.synthetic import make_units

    units = make_units()
    lone = units[0].model_copy(update={"id": "lone", "language": "go"})
    ctx = make_context(units=[*units, lone])
    ids = {i.unit_id for i in ContrastiveEmbedding().items(ctx)}
    assert "lone" not in ids and ids == {u.id for u in units}
