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


def test_a_query_that_missed_names_what_it_found_first(ctx: RunContext) -> None:
    ev = RetrievalEmbedding()
    ev.prepare(ctx)
    units = {u.id for u in ctx.units}
    missed = 0
    for item in ev.items(ctx):
        (rec,) = ev.evaluate(item, ctx)
        for q in rec.details["queries"]:
            if q["rank"] == 1:
                assert q["topId"] is None
            else:
                assert q["topId"] in units and q["topId"] != item.unit_id
                missed += 1
    assert missed, "the shuffled control's queries miss"


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


def test_reference_rows_search_the_code_with_the_same_queries(ctx: RunContext) -> None:
    import numpy as np

    from pytest_summarybench.evaluators.retrieval import references

    ev = RetrievalEmbedding()
    ev.prepare(ctx)
    records = {(r.unit_id, r.model_id): r for item in ev.items(ctx)
               for r in ev.evaluate(item, ctx)}
    rec = records[(ctx.units[0].id, "builtin/good")]
    # Reported beside the metrics, never among them: the ranking reads only metrics.
    assert set(rec.metrics) == {"hit@1", "hit@3", "hit@5", "reciprocal_rank"}
    refs = rec.details["references"]
    assert set(refs) == {"code", "code+summary"}
    assert all(len(refs[k]) == len(rec.details["queries"]) for k in refs)
    # The code index is the same for every model.
    other = records[(ctx.units[0].id, "builtin/shuffled")].details["references"]
    assert other["code"] == refs["code"]
    # What code + summary keeps as its document (for a reader of the index; it is
    # searched by the fused vector): the model's summary above the code.
    summary = ctx.summary(ctx.units[0].id, "builtin/good")
    assert summary is not None
    stored = ev._collection(ctx, references.index_key("code+summary", "builtin/good")).get(
        ids=[ctx.units[0].id], include=["documents"])
    assert stored["documents"] == [f"{summary.summary}\n\n{ctx.units[0].content}"]
    # The code row's reciprocal ranks, by brute-force cosine over every sampled unit's code.
    embedder = ev.embedder(ctx)
    code = embedder.embed([u.content for u in ctx.units])
    checked = 0
    for (unit_id, model_id), r in records.items():
        if model_id != "builtin/good":
            continue
        target = [u.id for u in ctx.units].index(unit_id)
        for q, ref in zip(r.details["queries"], r.details["references"]["code"], strict=True):
            scores = code @ embedder.embed([q["query"]])[0]
            if np.sum(np.abs(scores - scores[target]) <= 1e-6) > 1:
                continue  # a tie: stats/ir.py's expected rank, checked in test_ir.py
            rank = 1 + int(np.sum(scores > scores[target]))
            assert ref["reciprocalRank"] == pytest.approx(1 / rank if rank <= 5 else 0.0)
            checked += 1
    assert checked >= 10


def test_summarize_pairs_each_model_with_the_code_row(ctx: RunContext) -> None:
    import numpy as np
    from scipy import stats

    ev = RetrievalEmbedding()
    ev.prepare(ctx)
    records = [r for item in ev.items(ctx) for r in ev.evaluate(item, ctx)]
    refs = ev.summarize(records, ctx)["references"]
    assert refs["code"]["units"] == 11 and refs["code"]["queries"] == 22
    assert set(refs["code+summary"]) == {"builtin/good", "builtin/shuffled"}
    good = [r for r in records if r.model_id == "builtin/good"]
    code_rr = [np.mean([q["reciprocalRank"] for q in r.details["references"]["code"]])
               for r in good]
    own_rr = [r.metrics["reciprocal_rank"] for r in good]
    versus = refs["versusCode"]["builtin/good"]["summary"]
    assert versus["mrrDifference"] == pytest.approx(np.mean(own_rr) - np.mean(code_rr))
    assert versus["pValue"] == pytest.approx(stats.ttest_rel(own_rr, code_rr).pvalue)
    low, high = versus["interval"]
    assert low <= versus["mrrDifference"] <= high and versus["units"] == 11
    # Another unit's summary fused with the code pulls it away from its queries: worse
    # than the code alone.
    shuffled = refs["versusCode"]["builtin/shuffled"]["code+summary"]
    assert shuffled["mrrDifference"] < 0
    assert refs["code+summary"]["builtin/shuffled"]["mrr"] < refs["code"]["mrr"]


def test_ladder_models_get_no_reference_rows() -> None:
    from pytest_summarybench.evaluators.retrieval.references import has_references

    assert has_references("builtin/docstring") and has_references("openai/gpt-4o")
    assert not has_references("validate/l1-docstring")
