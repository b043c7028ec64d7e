"""``engine.plan``: what a selection needs of the models (``plan_calls``) and the run that
makes it (``CallRun``) with the real scheduler against the fake server, no pytest session.

Orders are asserted with events (a request that waits until another has arrived), never
with durations, so the claims hold on a loaded machine."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from pytest_summarybench.engine.plan import CallPlan, CallRun, plan_calls, start_calls
from pytest_summarybench.evaluators import MatrixItem
from pytest_summarybench.generate.report import GenerationReport
from pytest_summarybench.llm.scheduler import Scheduler
from tests.engine.toy import PHASE, PREPARE_PHASE, CodeOnly, Log, Toy, phase_of, served
from tests.fakes.openai_server import FakeOpenAIServer

#: Bound on any wait for an event that the code under test must cause; reached only when
#: the engine is wrong (then the test fails saying so), never on a slow machine's normal
#: path, where events come in well under a second.
EVENT_WAIT_S = 60.0


def _items(ev: Toy, ctx: Any) -> list[MatrixItem]:
    return ev.items(ctx)


def test_the_plan_holds_the_selected_items_summaries_and_evaluators(make_run) -> None:
    ctx = make_run()
    log = Log()
    toy, code = Toy(log), CodeOnly(log)
    selected = [i for i in toy.items(ctx) if i.model_id == "builtin/docstring"][:2]
    selected += code.items(ctx)[:1]
    plan = plan_calls(ctx, {toy.name: toy}, selected)  # toy/code is not active: left out
    assert list(plan.evaluators) == ["toy/echo"]
    assert plan.items == [(toy, item) for item in selected[:2]]
    assert list(plan.summaries) == [(i.unit_id, "builtin/docstring") for i in selected[:2]]
    assert plan.units_of("builtin/docstring") == [i.unit_id for i in selected[:2]]
    assert plan.units_of("builtin/identifiers") == []


def test_an_evaluator_without_calls_is_planned_for_its_summaries_only(make_run) -> None:
    ctx = make_run()
    code = CodeOnly(Log())
    plan = plan_calls(ctx, {code.name: code}, code.items(ctx))
    assert plan.items == [] and list(plan.evaluators) == ["toy/code"]
    assert len(plan.summaries) == len(ctx.units) * len(ctx.models)


def test_summaries_of_models_outside_the_context_are_not_planned(make_run) -> None:
    ctx = make_run().restricted(["builtin/identifiers"])
    toy = Toy(Log())
    item = MatrixItem(toy.name, toy.family, ctx.units[0].id,
                      ("builtin/docstring", "builtin/identifiers"))
    plan = plan_calls(ctx, {toy.name: toy}, [item])
    assert list(plan.summaries) == [(ctx.units[0].id, "builtin/identifiers")]


def _run(ctx: Any, evaluators: dict[str, Any], items: list[MatrixItem],
         parallel: int = 4) -> CallRun:
    plan = plan_calls(ctx, evaluators, items)
    scheduler = Scheduler(ctx.store, parallel=parallel, session="engine-test")
    return CallRun(plan, scheduler, GenerationReport(models={})).start()


def test_every_call_is_made_once_each_item_after_its_summaries(make_run) -> None:
    arrived: list[tuple[str, str]] = []
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> str:
        with lock:
            arrived.append((phase_of(body), str(body["messages"][-1]["content"])))
        return "yes" if phase_of(body) != "generation" else "Adds tax and splits bills."

    with FakeOpenAIServer(respond=respond) as server:
        ctx = make_run(test=[served(server, "alpha"), served(server, "beta")],
                       judges=[served(server, "gamma")])
        toy = Toy(Log(), setup_calls=2)
        items = toy.items(ctx)
        run = _run(ctx, {toy.name: toy}, items)
        run.join()
    phases = [p for p, _ in arrived]
    assert phases.count("generation") == len(ctx.units) * 2
    assert phases.count(PHASE) == len(items)
    assert phases.count(PREPARE_PHASE) == 2
    assert set(server.successes_by_fingerprint.values()) == {1}  # none paid twice
    assert run.summaries_ready.is_set() and run.prepared["toy/echo"].is_set()
    assert len(run.fresh) == len(ctx.units) * 2
    # An item's question quotes its summary: it can only have been asked once written.
    for phase, text in arrived:
        if phase == PHASE:
            assert "(none)" not in text, text
    totals = run.scheduler.totals()
    assert totals[PHASE].calls == len(items) and totals[PREPARE_PHASE].calls == 2


def test_judging_starts_while_summaries_are_still_being_written(make_run) -> None:
    """The last summary is held back until a toy question has arrived: if the run waited
    for every summary before asking, the question would never come and the summary's
    answer would report the wait as failed."""
    question = threading.Event()
    held: list[bool] = []

    def respond(body: dict[str, Any]) -> str:
        phase = phase_of(body)
        text = str(body["messages"][-1]["content"])
        if phase == PHASE:
            question.set()
            return "yes"
        if phase == "generation" and "late_fee" in text and "beta" in body["model"]:
            held.append(question.wait(EVENT_WAIT_S))
        return "Computes invoice amounts."

    with FakeOpenAIServer(respond=respond) as server:
        # beta writes one summary at a time, late_fee last (the units' order)
        ctx = make_run(test=[served(server, "alpha"), served(server, "beta")],
                       judges=[served(server, "gamma")])
        toy = Toy(Log())
        items = [i for i in toy.items(ctx) if i.model_id == "local/alpha"]
        items += [i for i in toy.items(ctx) if i.model_id == "local/beta"]
        run = _run(ctx, {toy.name: toy}, items, parallel=1)
        run.join()
    assert held == [True]


def test_an_item_asks_again_until_it_has_what_it_needs(make_run, server) -> None:
    ctx = make_run(judges=[served(server, "gamma")])
    toy = Toy(Log(), rounds=3)
    items = toy.items(ctx)[:2]
    _run(ctx, {toy.name: toy}, items).join()
    assert server.chat_requests == 3 * len(items)
    # the tests read every round's answer from the cache, with no new call
    records = [r for item in items for r in toy.evaluate(item, ctx.refreshed())]
    assert [r.metrics["match"] for r in records] == [1.0, 1.0]
    assert server.chat_requests == 3 * len(items)


def test_calls_that_read_artefacts_wait_until_they_are_built(make_run, server) -> None:
    ctx = make_run(judges=[served(server, "gamma")])

    class NeedsIndex(Toy):
        requests_need_prepare = True

    toy = NeedsIndex(Log())
    run = _run(ctx, {toy.name: toy}, toy.items(ctx))
    assert run.summaries_ready.wait(EVENT_WAIT_S)
    assert run.prepared[toy.name].wait(EVENT_WAIT_S)
    assert server.chat_requests == 0  # nothing asked before the artefacts exist
    run.built(toy.name)
    run.join()
    assert server.chat_requests == len(toy.items(ctx))


def test_an_item_whose_part_is_published_is_asked_before_the_artefacts_are_built(
        make_run) -> None:
    """``requests_read``: an item goes once the warm-up published what it reads; the
    others still wait for ``built``."""
    from pytest_summarybench.engine.warmup import Published

    asked: list[str] = []
    first = threading.Event()

    def respond(body: dict[str, Any]) -> str:
        if phase_of(body) == PHASE:
            asked.append(str(body["messages"][-1]["content"]))
            first.set()
            return "yes"
        return "Adds tax and splits bills."

    class ReadsParts(Toy):
        requests_need_prepare = True

        def requests_read(self, item: MatrixItem, ctx: Any) -> str:
            return f"part {item.unit_id}"

    with FakeOpenAIServer(respond=respond) as server:
        ctx = make_run(judges=[served(server, "gamma")])
        toy = ReadsParts(Log())
        items = [i for i in toy.items(ctx) if i.model_id == "builtin/docstring"]
        published = Published()
        plan = plan_calls(ctx, {toy.name: toy}, items)
        run = CallRun(plan, Scheduler(ctx.store, session="engine-test"),
                      GenerationReport(models={}), published).start()
        assert run.prepared[toy.name].wait(EVENT_WAIT_S)
        published.add([f"part {items[0].unit_id}"])
        assert first.wait(EVENT_WAIT_S)
        early = list(asked)
        run.built(toy.name)  # the rest go once the artefacts are all built
        run.join()
    # only the published item was asked before ``built``; then every other one
    assert len(early) == 1 and f"TOY ITEM {items[0].unit_id} " in early[0]
    assert len(asked) == len(items) >= 2


def test_built_after_every_item_went_on_published_parts_is_harmless(make_run,
                                                                     server) -> None:
    """Every item's part published: the run ends before ``prepare`` says it built the
    artefacts, and saying so then (to a closed event loop) is no error."""
    from pytest_summarybench.engine.warmup import Published

    class ReadsParts(Toy):
        requests_need_prepare = True

        def requests_read(self, item: MatrixItem, ctx: Any) -> str:
            return f"part {item.unit_id}"

    ctx = make_run(judges=[served(server, "gamma")])
    toy = ReadsParts(Log())
    published = Published()
    published.add([f"part {u.id}" for u in ctx.units])
    run = CallRun(plan_calls(ctx, {toy.name: toy}, toy.items(ctx)),
                  Scheduler(ctx.store, session="engine-test"), GenerationReport(models={}),
                  published).start()
    run.join()
    assert server.chat_requests == len(toy.items(ctx))
    run.built(toy.name)


def test_stop_abandons_the_calls_on_their_way_and_starts_no_new_one(make_run) -> None:
    release = threading.Event()
    first = threading.Event()

    def respond(body: dict[str, Any]) -> str:
        if phase_of(body) == PHASE:
            first.set()
            release.wait(EVENT_WAIT_S)
        return "yes"

    with FakeOpenAIServer(respond=respond) as server:
        ctx = make_run(judges=[served(server, "gamma")])
        toy = Toy(Log())
        run = _run(ctx, {toy.name: toy}, toy.items(ctx), parallel=1)
        assert first.wait(EVENT_WAIT_S)
        run.stop()
        # the run's thread has unwound: stop waits for it (up to its grace) and the
        # cancelled call ends at once
        assert run._thread is not None and not run._thread.is_alive()
        asked = server.chat_requests
        release.set()
    assert asked == 1  # parallel=1: the others never started


def test_start_calls_takes_the_scheduler_from_the_settings(make_run, server) -> None:
    ctx = make_run(judges=[served(server, "gamma")], **{"evaluation.parallel": 2})
    toy = Toy(Log())
    plan = plan_calls(ctx, {toy.name: toy}, toy.items(ctx))
    run = start_calls(plan, GenerationReport(models={}), progress=None)
    run.join()
    assert run.scheduler.parallel == 2
    assert server.chat_requests == len(toy.items(ctx))


def test_an_empty_plan_finishes_at_once(make_run) -> None:
    ctx = make_run()
    plan = CallPlan(ctx=ctx, items=[], evaluators={})
    run = CallRun(plan, Scheduler(ctx.store), GenerationReport(models={})).start()
    run.join()
    assert run.summaries_ready.is_set() and run.fresh == {}


@pytest.mark.parametrize("when", ["before start", "after join"])
def test_stop_is_harmless_before_the_loop_runs_and_after_the_end(make_run, when: str) -> None:
    ctx = make_run()
    plan = CallPlan(ctx=ctx, items=[], evaluators={})
    run = CallRun(plan, Scheduler(ctx.store), GenerationReport(models={}))
    if when == "before start":
        run.stop()
        run.start().join()
    else:
        run.start().join()
        run.stop()
    assert run.summaries_ready.is_set()
