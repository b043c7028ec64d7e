"""The LLM paths: contrastive/llm and query generation, against a local fake
OpenAI-compatible server (real HTTP through litellm, no network)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pytest_summarybench.context import RunContext
from pytest_summarybench.embeddings.hashing import subwords
from pytest_summarybench.evaluators import EvaluationError, load_builtin
from pytest_summarybench.evaluators.contrastive.llm import (
    CONTRASTIVE_LLM_PROMPT,
    ContrastiveLLM,
    parse_selection,
)
from pytest_summarybench.evaluators.retrieval.embedding import RetrievalEmbedding
from pytest_summarybench.evaluators.retrieval.queries import (
    QUERY_TYPES,
    ensure_queries,
    generation_prompt,
    query_requests,
    query_source,
)
from pytest_summarybench.llm.requests import ModelRequest
from pytest_summarybench.llm.scheduler import Scheduler, run_coroutine, settle
from tests.evaluators.synthetic import ContextFactory
from tests.fakes.openai_server import FakeOpenAIServer


def lexical_judge(body: dict[str, Any]) -> str:
    """Pick the option sharing the most sub-words with the summary (a fair, dumb judge)."""
    prompt = body["messages"][-1]["content"]
    summary = prompt.split("## Summary\n", 1)[1].split("\n\n## Code Options", 1)[0]
    options = re.findall(r"### Option (\d+)\n```\w+\n(.*?)\n```", prompt, re.DOTALL)
    words = set(subwords(summary))
    best = max(options, key=lambda o: (len(words & set(subwords(o[1]))), -int(o[0])))
    return json.dumps({"selected": int(best[0]), "confidence": "high", "reasoning": "words"})


def query_writer(body: dict[str, Any]) -> str:
    """Five queries made of the unit's name, one of each type."""
    prompt = body["messages"][-1]["content"]
    name = re.search(r"Function/Class: (.+)", prompt).group(1)  # type: ignore[union-attr]
    words = " ".join(subwords(name))
    return "Here you go:\n```json\n" + json.dumps(
        {"queries": [{"type": t, "query": f"{words} {t}"} for t in QUERY_TYPES]}) + "\n```"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    prompts: list[str] = []

    def respond(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        prompts.append(prompt)
        if prompt.startswith("Given a code summary"):
            return lexical_judge(body)
        return query_writer(body)

    with FakeOpenAIServer(respond=respond).start() as fake:
        fake.prompts = prompts  # type: ignore[attr-defined]
        yield fake


def judge_context(make_context: ContextFactory, server: FakeOpenAIServer,
                  **overrides: Any) -> RunContext:
    return make_context(overrides={
        "models.judge": [{"provider": "local", "model": "judge", "apiEndpoint":
                          server.base_url}],
        "evaluation.contrastive.methods": ["embedding", "llm"], **overrides})


def test_contrastive_llm_scores_and_records_the_shuffle(make_context: ContextFactory,
                                                        server: FakeOpenAIServer) -> None:
    ctx = judge_context(make_context, server)
    ev = load_builtin("contrastive/llm")
    assert isinstance(ev, ContrastiveLLM) and ev.skip_reason(ctx) is None
    ev.prepare(ctx)
    scores: dict[str, list[float]] = {}
    positions = set()
    for item in ev.items(ctx):
        (rec,) = ev.evaluate(item, ctx)
        scores.setdefault(item.model_id, []).append(rec.metrics["correct"])
        d = rec.details
        assert d["optionIds"][d["targetPosition"] - 1] == item.unit_id
        assert sorted(d["optionIds"]) == sorted([item.unit_id, *d["distractorIds"]])
        positions.add(d["targetPosition"])
        assert rec.metrics["predicted_rank"] == (1.0 if rec.metrics["correct"] else 2.0)
    assert len(positions) > 3  # the target is not always in the same place
    good = sum(scores["builtin/good"]) / len(scores["builtin/good"])
    shuffled = sum(scores["builtin/shuffled"]) / len(scores["builtin/shuffled"])
    assert good > 0.7 > 0.3 > shuffled
    prompt = server.prompts[0]  # type: ignore[attr-defined]
    assert prompt.startswith(CONTRASTIVE_LLM_PROMPT.split("{summary}")[0])
    assert "{n}" not in prompt and "Which code option (1-10)" in prompt
    assert '"selected": <number 1-10>' in prompt
    # Answers are cached: evaluating again makes no call.
    calls = server.chat_requests
    for item in ev.items(ctx)[:3]:
        ev.evaluate(item, ctx)
    assert server.chat_requests == calls


def test_unparseable_answer_is_an_error_with_the_answer(make_context: ContextFactory) -> None:
    with FakeOpenAIServer(respond=lambda body: "I think it is the second one.").start() as fake:
        ctx = judge_context(make_context, fake)
        ev = ContrastiveLLM()
        ev.prepare(ctx)
        with pytest.raises(EvaluationError, match="unparseable answer.*second one"):
            ev.evaluate(ev.items(ctx)[0], ctx)


@pytest.mark.parametrize("answer, error", [
    ('{"selected": 11}', "outside 1-10"),
    ('{"selected": "two"}', "not an option number"),
    ('{"confidence": "high"}', "not an option number"),
    ("no json here", "no JSON object"),
])
def test_parse_selection_rejects(answer: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_selection(answer, 10)


def test_parse_selection_accepts_fenced_and_string_numbers() -> None:
    assert parse_selection('```json\n{"selected": "3", "confidence": "low"}\n```', 5)[:2] == (
        3, "low")


def test_skip_reasons(make_context: ContextFactory) -> None:
    ev = ContrastiveLLM()
    assert "methods" in (ev.skip_reason(make_context()) or "")
    ctx = make_context(overrides={"evaluation.contrastive.methods": ["llm"]})
    assert "models.judge" in (ev.skip_reason(ctx) or "")


def test_generated_queries_drive_retrieval(make_context: ContextFactory,
                                           server: FakeOpenAIServer) -> None:
    ctx = judge_context(make_context, server, **{"evaluation.retrieval.queriesPerUnit": 3})
    source = query_source(ctx)
    assert source is not None and source.kind == "llm"
    ev = RetrievalEmbedding()
    ev.prepare(ctx)
    queries = ensure_queries(ctx)
    assert all(isinstance(q, list) and len(q) == 3 for q in queries.values())
    assert [q.type for q in queries["u00"]] == list(QUERY_TYPES[:3])  # type: ignore[union-attr]
    prompts = server.prompts  # type: ignore[attr-defined]
    assert generation_prompt(ctx.unit("u00")) in prompts
    calls = server.chat_requests
    records = [r for item in ev.items(ctx) for r in ev.evaluate(item, ctx)]
    assert server.chat_requests == calls  # evaluation reads stored queries
    assert len(records) == 24 and all(r.error is None for r in records)


def test_failed_generation_is_the_units_error(make_context: ContextFactory) -> None:
    with FakeOpenAIServer(respond=lambda body: '{"queries": []}').start() as fake:
        ctx = judge_context(make_context, fake)
        ev = RetrievalEmbedding()
        ev.prepare(ctx)
        with pytest.raises(EvaluationError, match="query generation by local/judge failed"):
            ev.evaluate(ev.items(ctx)[0], ctx)


def test_contrastive_llm_asks_for_its_schema_where_supported() -> None:
    from pytest_summarybench.evaluators.contrastive.llm import selection_schema
    from pytest_summarybench.evaluators.judge.calling import response_format
    from pytest_summarybench.schemas import ModelConfig

    schema = selection_schema(10)
    assert schema["properties"]["selected"]["enum"] == list(range(1, 11))
    hosted = response_format(ModelConfig.parse("openai/gpt-4o"), "auto", "selection", schema)
    assert hosted is not None and hosted["type"] == "json_schema"
    assert hosted["json_schema"]["schema"] == schema
    gguf = response_format(ModelConfig.parse("local/smollm2-135m-instruct"), "auto",
                           "selection", schema)
    assert gguf is not None and gguf["type"] == "json_object" and "schema" in gguf
    assert response_format(ModelConfig.parse("openai/gpt-4o"), "off", "s", schema) is None


class Mending:
    """A helper that answers with chatter instead of JSON while ``broken`` (for the
    prompts ``garbles`` picks), as the user's endpoint did before they fixed it; each
    prompt it was sent, in order, is in ``asked``."""

    CHATTER = "Sure! Happy to help with that."

    def __init__(self, garbles: Callable[[str], bool]) -> None:
        self.broken = True
        self.garbles = garbles
        self.asked: list[str] = []

    def __call__(self, body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        self.asked.append(prompt)
        if self.broken and self.garbles(prompt):
            return self.CHATTER
        return lexical_judge(body) if prompt.startswith("Given a code summary") \
            else query_writer(body)

    def take(self) -> list[str]:
        asked, self.asked = self.asked, []
        return asked


def _controller_calls(ctx: RunContext, requests: list[ModelRequest]) -> None:
    """Make ``requests`` as the controller does ahead of the tests, in ``ctx``'s session."""
    scheduler = Scheduler(ctx.store, session=ctx.session, endpoints=ctx.endpoints)
    run_coroutine(lambda: settle([scheduler.call(r) for r in requests]))


def test_unreadable_queries_are_asked_again_by_a_later_session(
        make_context: ContextFactory) -> None:
    """The helper's unreadable queries fail their units in the session that got them
    (read there without a second call); the next session asks for exactly those again,
    and usable queries are never asked for again."""
    garbled = ("validate_email", "rank_results")
    helper = Mending(lambda p: any(f"Function/Class: {n}\n" in p for n in garbled))
    with FakeOpenAIServer(respond=helper).start() as fake:
        ctx = judge_context(make_context, fake)
        first = dataclasses.replace(ctx, session="session-1")
        _controller_calls(first, query_requests(first))
        assert len(helper.take()) == 12
        queries = ensure_queries(first)
        failed = {u.name for u in ctx.units if isinstance(queries[u.id], str)}
        assert failed == set(garbled)
        assert all("failed: no JSON object in the answer: 'Sure!" in queries[u.id]
                   for u in ctx.units if u.name in garbled)
        assert ensure_queries(first) == queries and helper.take() == []

        helper.broken = False
        second = dataclasses.replace(ctx, session="session-2")
        _controller_calls(second, query_requests(second))
        assert sorted(helper.take()) == sorted(generation_prompt(u) for u in ctx.units
                                               if u.name in garbled)
        assert all(isinstance(q, list) and q for q in ensure_queries(second).values())
        assert helper.take() == []

        third = dataclasses.replace(ctx, session="session-3")
        _controller_calls(third, query_requests(third))
        assert query_requests(third) == [] and helper.take() == []


def test_an_unreadable_pick_is_asked_again_by_a_later_session(
        make_context: ContextFactory) -> None:
    """contrastive/llm: the helper's unreadable pick fails the item; the same session
    reads it again without a call, a later session asks again and scores the item, and
    then the pick is cached for good."""
    helper = Mending(lambda p: p.startswith("Given a code summary"))
    with FakeOpenAIServer(respond=helper).start() as fake:
        ctx = judge_context(make_context, fake)
        ev = ContrastiveLLM()
        ev.prepare(ctx)
        item = ev.items(ctx)[0]
        first = dataclasses.replace(ctx, session="session-1")
        for _ in range(2):
            with pytest.raises(EvaluationError, match="unparseable answer.*Sure!"):
                ev.evaluate(item, first)
        assert len(helper.take()) == 1

        helper.broken = False
        for session in ("session-2", "session-3"):
            records = ev.evaluate(item, dataclasses.replace(ctx, session=session))
            assert records[0].error is None
        assert len(helper.take()) == 1
