"""``engine.warmup.WarmUp`` beyond the order of its warm-ups (``tests/plugin/test_warm_up.py``):
started once per session, joined at once when never started, stopped only when no
evaluator that warms up is selected, and a warm-up that reads the run's real units."""

from __future__ import annotations

import threading
from typing import Any

from pytest_summarybench.engine.warmup import WarmUp
from tests.engine.toy import Log, Toy, served


class Waiting:
    """A warm-up that runs until told to stop (or ``release`` is set)."""

    name = "toy/waiting"

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.saw_stop: bool | None = None

    def warm_up(self, ctx: Any, stop: threading.Event, publish: Any) -> None:
        self.started.set()
        while not stop.is_set() and not self.release.is_set():
            stop.wait(0.01)
        self.saw_stop = stop.is_set()


def test_join_without_start_returns_at_once() -> None:
    warm = WarmUp()
    assert not warm.started
    warm.join()
    warm.keep_for(set())  # nothing started: nothing to stop, no error
    assert warm.names == []


def test_a_second_start_is_ignored(make_run) -> None:
    ctx = make_run()
    log = Log()
    warm = WarmUp()
    warm.start(ctx, [Toy(log, warm=True)])
    warm.start(ctx, [Toy(log, warm=True), Toy(log, warm=True)])
    warm.join()
    assert warm.started and log.events == ["toy/echo warm-up"]


def test_a_selected_warm_up_runs_to_its_end_a_deselected_one_is_stopped() -> None:
    kept, dropped = Waiting(), Waiting()
    warm = WarmUp()
    warm.start(None, [kept])  # type: ignore[arg-type]
    assert kept.started.wait(60)
    warm.keep_for({"toy/waiting", "judge/pointwise"})
    kept.release.set()
    warm.join()
    assert kept.saw_stop is False

    other = WarmUp()
    other.start(None, [dropped])  # type: ignore[arg-type]
    assert dropped.started.wait(60)
    other.keep_for({"judge/pointwise"})
    other.join()
    assert dropped.saw_stop is True


def test_the_warm_up_thread_reads_the_run_s_units(make_run) -> None:
    ctx = make_run()
    seen: list[int] = []

    class Counting:
        name = "toy/count"

        def warm_up(self, ctx: Any, stop: threading.Event, publish: Any) -> None:
            seen.append(len(ctx.all_units))

    warm = WarmUp()
    warm.start(ctx, [Counting()])  # type: ignore[list-item]
    warm.join()
    assert seen == [len(ctx.all_units)] and seen[0] >= 3


def test_the_model_layer_is_imported_ahead_only_for_models_that_call(make_run, server
                                                                      ) -> None:
    import sys

    from pytest_summarybench.engine.warmup import import_model_layer

    assert import_model_layer(make_run().settings) is None  # built-in models: no litellm
    ctx = make_run(test=[served(server, "alpha")])
    thread = import_model_layer(ctx.settings)
    assert thread is not None and thread.name == "summarybench-import-litellm"
    thread.join()
    assert "litellm" in sys.modules


def test_published_names_wake_their_waiters_and_only_theirs() -> None:
    """``Published``: a name published before the wait returns at once, one published
    later (from another thread) wakes its waiter, and a name never published keeps its
    waiter waiting."""
    import asyncio

    from pytest_summarybench.engine.warmup import Published

    board = Published()
    board.add(["set a"])
    assert "set a" in board and "set b" not in board

    async def scenario() -> tuple[bool, bool]:
        await asyncio.wait_for(board.wait("set a"), 60)
        later = asyncio.ensure_future(board.wait("set b"))
        never = asyncio.ensure_future(board.wait("set c"))
        threading.Thread(target=board.add, args=(["set b"],)).start()
        await asyncio.wait_for(later, 60)
        done = never.done()
        never.cancel()
        return later.done(), done

    assert asyncio.run(scenario()) == (True, False)
    board.add(["set c"])  # its waiter was cancelled with its loop: nothing to wake
