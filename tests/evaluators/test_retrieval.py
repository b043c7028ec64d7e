"""retrieval/embedding: a real chroma index per model, written by prepare, read anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_summarybench.context import RunContext
from pytest_summarybench.evaluators import EvaluationError, load_builtin
from pytest_summarybench.evaluators.retrieval.embedding import RetrievalEmbedding
from tests.evaluators.synthetic import CODE, ContextFactory

#: Two queries per unit, worded differently from the code and the summaries.
QUERIES = {
    "apply_discount": ["percentage off the price", "reduce cost by percent"],
    "add_sales_tax": ["tax added on top of price", "rate of sales tax"],
    "convert_currency": ["exchange rate conversion", "amount in another currency"],
    "hash_password": ["salted password hashing", "sha256 of a password"],
    "validate_email": ["check email address is valid", "email pattern match"],
    "lock_account": ["lock a user out with a reason", "account locked"],
    "evict_expired": ["drop expired entries from cache", "expired cache cleanup"],
    "cache_size_bytes": ["how many bytes the cache payload uses", "cache size"],
    "tokenize_query": ["split a query into lower-case words", "tokenize search input"],
    "rank_results": ["order search results by score", "sort results for a query"],
    "cancel_order": ["cancel an order and refund payment", "order refund"],
    "ship_order": ["shipping label from a carrier", "ship order to address"],
}


def write_queries(path: Path, skip: tuple[str, ...] = ()) -> Path:
    types = ["vague", "specific_behavior"]
    lines = [json.dumps({"path": file, "name": name, "type": types[i], "query": q})
             for file, name, *_ in CODE if name not in skip
             for i, q in enumerate(QUERIES[name])]
    lines.append(json.dumps({"path": "gone.py", "name": "nope", "type": "vague",
                             "query": "a unit that is not extracted"}))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def ctx(make_context: ContextFactory, tmp_path: Path) -> RunContext:
    queries = write_queries(tmp_path / "queries.jsonl", skip=("cache_size_bytes",))
    return make_context(overrides={"evaluation.retrieval.queriesFile": str(queries),
                                   "evaluation.retrieval.kValues": [1, 3, 5]})


def _means(ctx: RunContext, ev: RetrievalEmbedding, metric: str) -> dict[str, float]:
    sums: dict[str, list[float]] = {}
    for item in ev.items(ctx):
        (rec,) = ev.evaluate(item, ctx)
        sums.setdefault(item.model_id, []).append(rec.metrics[metric])
    return {m: sum(v) / len(v) for m, v in sums.items()}


def test_good_summaries_retrieve_better_than_the_shuffled_control(ctx: RunContext) -> None:
    ev = RetrievalEmbedding()
    ev.prepare(ctx)
    mrr = _means(ctx, ev, "reciprocal_rank")
    hit1 = _means(ctx, ev, "hit@1")
    assert mrr["builtin/good"] > 0.6 > 0.3 > mrr["builtin/shuffled"], mrr
    assert hit1["builtin/good"] > hit1["builtin/shuffled"]


def test_record_shape_and_items(ctx: RunContext) -> None:
    ev = RetrievalEmbedding()
    items = ev.items(ctx)
    # The unit without queries is no retrieval item.
    assert {i.unit_id for i in items} == {u.id for u in ctx.units if u.name != "cache_size_bytes"}
    ev.prepare(ctx)
    (rec,) = ev.evaluate(items[0], ctx)
    assert set(rec.metrics) == {"hit@1", "hit@3", "hit@5", "reciprocal_rank"}
    assert rec.metrics["hit@1"] <= rec.metrics["hit@3"] <= rec.metrics["hit@5"]
    assert rec.details["indexSize"] == 12
    assert [q["type"] for q in rec.details["queries"]] == ["vague", "specific_behavior"]
    for q in rec.details["queries"]:
        assert set(q) >= {"id", "type", "query", "rank", "hits", "reciprocalRank"}
        if q["rank"] is not None and float(q["rank"]).is_integer():
            assert q["reciprocalRank"] == pytest.approx(1 / q["rank"])


def test_worker_only_reads(ctx: RunContext) -> None:
    controller = RetrievalEmbedding()
    controller.prepare(ctx)
    expected = _means(ctx, controller, "reciprocal_rank")
    worker_ctx = RunContext(ctx.settings, ctx.store, ctx.run_id)
    worker = RetrievalEmbedding()
    assert _means(worker_ctx, worker, "reciprocal_rank") == expected
    assert worker.embedder(worker_ctx).computed == 0


def test_failed_summaries_stay_in_the_index_as_empty_documents(make_context: ContextFactory,
                                               tmp_path: Path) -> None:
    queries = write_queries(tmp_path / "q.jsonl")
    ctx = make_context(overrides={"evaluation.retrieval.queriesFile": str(queries)},
                       missing=(("u00", "builtin/good"),))
    ev = RetrievalEmbedding()
    ev.prepare(ctx)
    good = [i for i in ev.items(ctx) if i.model_id == "builtin/good"]
    with pytest.raises(EvaluationError, match="the provider refused"):
        ev.evaluate(good[0], ctx)
    (rec,) = ev.evaluate(good[1], ctx)
    # Every model's index holds all 12 sampled units, whatever failed.
    assert rec.details["indexSize"] == 12
    bad = [i for i in ev.items(ctx) if i.model_id != "builtin/good"]
    assert ev.evaluate(bad[1], ctx)[0].details["indexSize"] == 12
    stored = ev._collection(ctx, "builtin/good").get(ids=["u00"], include=["documents",
                                                                          "metadatas"])
    assert stored["documents"] == [""] and stored["metadatas"][0]["missing"] is True


def test_without_prepare_the_error_says_so(ctx: RunContext) -> None:
    ev = RetrievalEmbedding()
    with pytest.raises(EvaluationError, match="prepare"):
        ev.evaluate(ev.items(ctx)[0], ctx)


def test_summarize_is_spec_7_2_with_query_types(ctx: RunContext) -> None:
    ev = RetrievalEmbedding()
    ev.prepare(ctx)
    records = [r for item in ev.items(ctx) for r in ev.evaluate(item, ctx)]
    out = ev.summarize(records, ctx)
    good = out["overall"]["builtin/good"]
    assert set(good) == {"precision@1", "precision@3", "precision@5", "mrr", "queries"}
    assert good["queries"] == 22
    assert set(out["byQueryType"]) == {f"{m} / {t}" for m in ("builtin/good", "builtin/shuffled")
                                       for t in ("vague", "specific_behavior")}
    per_unit = [r.metrics["reciprocal_rank"] for r in records if r.model_id == "builtin/good"]
    # Every unit has two queries, so the mean of unit means is the mean over queries.
    assert good["mrr"] == pytest.approx(sum(per_unit) / len(per_unit))
    vague = out["byQueryType"]["builtin/good / vague"]
    assert vague["queries"] == 11 and 0.0 <= vague["precision@1"] <= 1.0


def test_skip_reason_without_queries(make_context: ContextFactory) -> None:
    ctx = make_context()
    reason = load_builtin("retrieval/embedding").skip_reason(ctx)
    assert reason is not None and "queriesFile" in reason and "models.judge" in reason


def test_skip_reason_with_a_judge_of_a_tested_family_says_why_it_cannot_write(
        make_context: ContextFactory) -> None:
    # A new user's pass: a judge was configured, only of the wrong family, and the line
    # still said to "configure a judge model under models.judge".
    judge = {"provider": "local", "model": "j", "apiEndpoint": "http://127.0.0.1:9/v1",
             "family": "builtin"}
    ctx = make_context(overrides={"models.judge": [judge]})
    reason = load_builtin("retrieval/embedding").skip_reason(ctx) or ""
    assert "configure a judge model" not in reason
    assert "local/j: same family as builtin/good (builtin)" in reason
    assert "add a judge of another family" in reason
