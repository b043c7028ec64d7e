"""``engine.prepare.prepare_run``: what the controller does between collection and the
first test, without a pytest session: the dry run (priced, nothing called), generation
only, and the evaluation's preparation (warm-up joined first, artefacts from the code while
summaries are written, one evaluator's failure costing nothing else)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_summarybench.engine.prepare import Prepared, calls_lines, prepare_run
from pytest_summarybench.engine.warmup import WarmUp
from tests.engine.toy import PHASE, CodeOnly, Log, Toy, served
from tests.fakes.openai_server import FakeOpenAIServer


class Said:
    """``say``: the lines the preparation printed, and which were red."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.red: list[str] = []

    def __call__(self, line: str, **markup: Any) -> None:
        self.lines.append(line)
        if markup.get("red"):
            self.red.append(line)


def _prepare(ctx: Any, evaluators: list[Any], **kwargs: Any) -> tuple[Prepared, Said]:
    said = Said()
    active = {ev.name: ev for ev in evaluators}
    selected = [item for ev in evaluators for item in ev.items(ctx)]
    warm = kwargs.pop("warm_up", None) or WarmUp()
    return prepare_run(ctx, active, selected, warm_up=warm, say=said, **kwargs), said


def test_the_dry_run_prices_the_plan_and_calls_nothing(make_run, server) -> None:
    ctx = make_run(test=[served(server, "alpha")], judges=[served(server, "gamma")])
    before: list[str] = []
    prepared, said = _prepare(ctx, [Toy(Log(), setup_calls=1)], dry_run=True,
                              before_evaluation=lambda: before.append("evaluation"))
    assert server.chat_requests == 0 and before == []
    assert prepared.dry_run and prepared.ctx is None
    assert prepared.finished_early == ("summarybench dry run: no model was called", 0)
    assert said.lines[0].startswith("summarybench dry run: nothing is called")
    rows = {line.split()[0]: line.split() for line in said.lines[2:]}
    n = len(ctx.units)
    assert rows["generation"][3] == str(n)   # calls column: one summary per unit
    assert rows[PHASE][3] == str(n)          # one question per item
    assert rows["toy/setup"][3] == "1"
    assert rows["total"][1] == str(2 * n + 1)  # (its model and role columns are empty)


def test_generate_only_writes_the_summaries_and_asks_nothing_else(make_run, server) -> None:
    ctx = make_run(test=[served(server, "alpha")], judges=[served(server, "gamma")])
    log = Log()
    prepared, said = _prepare(ctx, [Toy(log, setup_calls=1)], generate_only=True)
    assert set(server.respond.phases) == {"generation"}
    assert server.chat_requests == len(ctx.units)
    assert log.events == []  # no prepare
    assert prepared.finished_early is not None and prepared.finished_early[1] == 0
    assert "--sb-generate-only" in prepared.finished_early[0]
    assert said.lines == prepared.lines
    assert prepared.lines[0].startswith(f"summarybench generation: {len(ctx.units)} generated")


def test_generate_only_ends_with_code_1_when_a_summary_failed(make_run) -> None:
    def respond(body: dict[str, Any]) -> Any:
        from tests.fakes.openai_server import Reply

        if "late_fee" in str(body["messages"][-1]["content"]):
            return Reply("the model is not loaded", status=400)
        return "Computes invoice amounts."

    with FakeOpenAIServer(respond=respond) as server:
        ctx = make_run(test=[served(server, "alpha")])
        prepared, _ = _prepare(ctx, [CodeOnly(Log())], generate_only=True)
    assert prepared.finished_early is not None and prepared.finished_early[1] == 1
    assert " 1 errors" in prepared.lines[0]


def test_the_evaluation_is_prepared_in_order(make_run, server) -> None:
    """Warm-up joined before any prepare; an evaluator that reads only the code prepared
    before the summaries' evaluator; ``before_evaluation`` once, first; every context
    handed to ``bind`` and the final one read the summaries written meanwhile."""
    ctx = make_run(test=[served(server, "alpha")], judges=[served(server, "gamma")])
    log = Log()
    toy, code = Toy(log, warm=True), CodeOnly(log)
    warm = WarmUp()
    warm.start(ctx, [toy])
    bound: list[Any] = []
    prepared, said = _prepare(ctx, [toy, code], warm_up=warm,
                              before_evaluation=lambda: log.add("before evaluation"),
                              bind=bound.append)
    assert log.events == ["toy/echo warm-up", "before evaluation", "toy/code prepare",
                          "toy/echo prepare"]
    assert prepared.finished_early is None and not prepared.dry_run
    assert prepared.ctx is not None and bound and bound[-1] is prepared.ctx
    assert all(prepared.ctx.summary(u.id, "local/alpha") is not None for u in ctx.units)
    assert prepared.lines[0].startswith("summarybench generation:")
    # the fake's models have no price; the phase's own time ends the line
    assert any(line.startswith(f"summarybench {PHASE}: {len(ctx.units)} calls, 0 from cache, "
                               "0 failed, cost unknown, in ") for line in prepared.lines)
    assert said.red == []
    # the tests then score from the cache: no call of their own
    calls = server.chat_requests
    records = [r for item in toy.items(prepared.ctx)
               for r in toy.evaluate(item, prepared.ctx)]
    assert server.chat_requests == calls and {r.metrics["match"] for r in records} == {1.0}


def test_one_evaluator_that_cannot_prepare_costs_nothing_else(make_run, server) -> None:
    ctx = make_run(judges=[served(server, "gamma")])
    log = Log()

    class Broken(CodeOnly):
        name = "toy/broken"

    prepared, said = _prepare(ctx, [Broken(log, fail_prepare=True), Toy(log)])
    line = "summarybench: toy/broken could not prepare: RuntimeError: the index could not be built"
    assert said.red == [line] and prepared.lines[-1] == line
    assert log.events == ["toy/broken prepare", "toy/echo prepare"]
    assert server.chat_requests == len(ctx.units) * len(ctx.models)


def test_a_store_failure_in_prepare_stops_the_preparation(make_run) -> None:
    from pytest_summarybench.store import StoreError

    ctx = make_run()

    class StoreGone(CodeOnly):
        def prepare(self, ctx: Any) -> None:
            raise StoreError("store out/store.sqlite: disk I/O error")

    with pytest.raises(StoreError, match="disk I/O error"):
        _prepare(ctx, [StoreGone(Log())])


def test_an_interrupt_while_preparing_stops_the_calls_and_propagates(make_run) -> None:
    import threading

    release = threading.Event()

    def respond(body: dict[str, Any]) -> str:
        release.wait(60)  # held: only ``CallRun.stop`` ends the run before this
        return "yes"

    with FakeOpenAIServer(respond=respond) as server:
        ctx = make_run(test=[served(server, "alpha")])

        def interrupt() -> None:
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            _prepare(ctx, [Toy(Log())], before_evaluation=interrupt)
        release.set()
    names = {t.name for t in threading.enumerate()}
    assert "summarybench-calls" not in names


def test_calls_lines_leave_generation_to_its_own_line() -> None:
    from pytest_summarybench.llm.scheduler import PhaseTally

    totals = {"generation": PhaseTally(calls=3),
              "judge/pointwise": PhaseTally(calls=4, cached=1, failed=1, cost=0.0123),
              "retrieval/queries": PhaseTally(calls=2, skipped=5, cost_unknown=True)}

    class Tallied:
        def totals(self) -> dict[str, PhaseTally]:
            return totals

    assert calls_lines(Tallied()) == [
        "summarybench judge/pointwise: 4 calls, 1 from cache, 1 failed, cost $0.0123, in 0.0s",
        "summarybench retrieval/queries: 2 calls, 0 from cache, 0 failed, 5 over the cost "
        "cap, cost unknown, in 0.0s"]
