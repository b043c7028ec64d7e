"""The shared progress display: plain lines in logs, a bar on a terminal, silence for short
phases, the rate and time-left arithmetic, and counting from many threads at once."""

from __future__ import annotations

import asyncio
import io
import threading

import pytest

from pytest_summarybench.core.progress import Progress

pytest_plugins = "pytester"


class Clock:
    """A hand-driven monotonic clock."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class TtyStream(io.StringIO):
    def isatty(self) -> bool:
        return True


def plain(clock: Clock, **kwargs: float) -> tuple[Progress, io.StringIO]:
    stream = io.StringIO()
    options = {"interval_s": 5.0, "moment_s": 2.0, **kwargs}
    return Progress(stream, clock=clock, **options), stream


def test_log_lines_every_interval_not_every_item() -> None:
    clock = Clock()
    progress, stream = plain(clock)
    phase = progress.phase("summarybench embedding code", 100, unit="text")
    for _ in range(100):
        clock.now += 0.25  # 25 s in all, one item every quarter second
        phase.advance()
    phase.close()
    lines = stream.getvalue().splitlines()
    # First line once a moment (2 s) has passed, then at most one per 5 s, then the end.
    assert 5 <= len(lines) <= 7, lines
    assert "\r" not in stream.getvalue()
    assert all(line.startswith("summarybench embedding code: ") for line in lines)
    assert "100/100" in lines[-1] and "4.00text/s" in lines[-1]


def test_short_phase_prints_nothing() -> None:
    clock = Clock()
    progress, stream = plain(clock)
    with progress.phase("summarybench embedding queries", 500) as phase:
        for _ in range(500):
            clock.now += 0.003  # 1.5 s in all: under the 2 s moment
            phase.advance()
    assert stream.getvalue() == ""
    assert phase.done == 500


def test_slow_phase_with_one_step_prints_one_line() -> None:
    clock = Clock()
    progress, stream = plain(clock)
    phase = progress.phase("summarybench extraction", 1, unit="file")
    clock.now += 30.0
    phase.advance()
    phase.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and "1/1" in lines[0]  # not repeated by close


def test_phase_over_a_moment_without_a_line_still_gets_a_final_one() -> None:
    clock = Clock()
    progress, stream = plain(clock, interval_s=60.0)
    phase = progress.phase("summarybench generation", 4, unit="call")
    phase.advance(4)  # all done at once, immediately
    clock.now += 3.0  # ... but the phase ends after the moment
    phase.close()
    assert len(stream.getvalue().splitlines()) == 1


def test_rate_and_time_left_arithmetic() -> None:
    clock = Clock()
    progress, _ = plain(clock)
    phase = progress.phase("summarybench generation", 200, unit="call", costed=True)
    assert phase.rate() is None and phase.remaining_s() is None  # no time has passed
    clock.now += 10.0
    assert phase.rate() is None and phase.remaining_s() is None  # nothing done yet
    phase.advance(50, cost=0.25)
    assert phase.rate() is None  # one step says nothing of the pace
    clock.now += 15.0
    phase.advance(25, cost=0.125)
    # 25 calls in the 15 s since the last step: 1.67 calls/s; 125 left: 75 s
    assert phase.rate() == pytest.approx(25 / 15)
    assert phase.remaining_s() == pytest.approx(75.0)
    assert phase.cost == pytest.approx(0.375)
    line = phase.line()
    assert "75/200" in line and "1.67call/s" in line and "[00:25<01:15" in line
    assert "cost $0.3750" in line
    phase.advance(1, cost=None)  # a price nobody knows: the cost shown is a lower bound
    assert phase.cost_unknown and "cost $0.3750 + unknown" in phase.line()
    # Past the total (a retried unit counted twice): no negative time left.
    phase.advance(500)
    assert phase.remaining_s() == 0.0


def test_time_left_is_read_from_recent_calls_not_from_the_wait_before_them() -> None:
    """Issue 33: calls announced early waited 34 s for the summaries they judge, and the
    first answer promised 1:13:23 for 130 calls answered at one a second."""
    clock = Clock()
    progress, _ = plain(clock)
    phase = progress.phase("summarybench judge/pointwise", 130, unit="call")
    clock.now += 34.0
    phase.advance()
    assert phase.remaining_s() is None and "1/130 [00:34<?" in phase.line()
    for _ in range(9):
        clock.now += 1.0
        phase.advance()
    assert phase.rate() == pytest.approx(1.0)
    assert phase.remaining_s() == pytest.approx(120.0)
    # Slower now: the estimate follows the recent calls, the early fast ones drop out.
    for _ in range(60):
        clock.now += 2.0
        phase.advance()
    assert phase.rate() == pytest.approx(0.5)
    assert phase.remaining_s() == pytest.approx(60 / 0.5)


def test_the_last_line_shows_the_phase_s_own_time() -> None:
    """Issue 33: a phase closed at the end of the run showed 2:42 for calls done at 0:44."""
    clock = Clock()
    progress, stream = plain(clock)
    phase = progress.phase("summarybench judge/pointwise", 4, unit="call")
    for _ in range(4):
        clock.now += 1.0            # one line at the moment (2 s), none in the interval
        phase.advance()
    clock.now += 118.0              # other phases go on; this one is closed with the run
    phase.close()
    assert "4/4 [00:04<00:00" in stream.getvalue().splitlines()[-1]
    # The bar on a terminal says the same at its end.
    stream = TtyStream()
    bar_progress = Progress(stream, clock=clock, moment_s=0.0, interval_s=5.0)
    bar = bar_progress.phase("summarybench judge/pointwise", 4, unit="call")
    assert bar.is_bar
    for _ in range(4):
        clock.now += 11.0
        bar.advance()
    clock.now += 118.0
    bar.close()
    assert "4/4 [00:44<00:00" in stream.getvalue().split("\r")[-1]


def test_uncosted_phase_shows_no_cost() -> None:
    clock = Clock()
    progress, _ = plain(clock)
    phase = progress.phase("summarybench embedding code", 10, unit="text")
    clock.now += 1.0
    phase.advance(5)
    assert "cost" not in phase.line() and "5/10" in phase.line()


def test_terminal_gets_a_bar_and_short_phases_leave_no_trace() -> None:
    stream = TtyStream()
    progress = Progress(stream, moment_s=0.0)
    with progress.phase("summarybench generation", 3, unit="call", costed=True) as phase:
        for _ in range(3):
            phase.advance(1, cost=0.01)
    text = stream.getvalue()
    assert "\r" in text and "3/3" in text and "cost $0.0300" in text
    assert "summarybench generation" in text and "call/s" in text
    quiet = TtyStream()
    with Progress(quiet, moment_s=60.0).phase("summarybench extraction", 3) as phase:
        phase.advance(3)
    assert quiet.getvalue() == ""


def test_disabled_progress_counts_and_prints_nothing() -> None:
    stream = io.StringIO()
    progress = Progress(stream, enabled=False, moment_s=0.0, interval_s=0.0)
    with progress.phase("summarybench generation", 2, costed=True) as phase:
        phase.advance(2, cost=1.0)
    assert stream.getvalue() == "" and phase.done == 2 and phase.cost == 1.0
    assert Progress.off().phase("x", 5).line().startswith("x: ")


def test_counts_from_many_threads_and_an_event_loop_add_up() -> None:
    stream = io.StringIO()
    progress = Progress(stream, tty=False, moment_s=0.0, interval_s=0.0)
    # Several phases at once, as a scheduler reporting generation and judge calls does.
    generation = progress.phase("summarybench generation", 8 * 500, unit="call", costed=True)
    judge = progress.phase("summarybench judge pointwise", 8 * 500, unit="call", costed=True)
    start = threading.Barrier(8)

    def work() -> None:
        start.wait()
        for _ in range(500):
            generation.advance(1, cost=0.001)
            judge.advance(1, cost=0.002)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()

    async def from_the_loop() -> None:
        for _ in range(100):
            judge.advance(0)
            await asyncio.sleep(0)

    asyncio.run(from_the_loop())
    for t in threads:
        t.join()
    generation.close()
    judge.close()
    assert generation.done == judge.done == 4000
    assert generation.cost == pytest.approx(4.0) and judge.cost == pytest.approx(8.0)
    # Every line whole: writes of concurrent phases never interleave within a line.
    for line in stream.getvalue().splitlines():
        assert line.startswith(("summarybench generation: ", "summarybench judge pointwise: "))
        assert line.count("summarybench") == 1
    assert "4000/4000" in stream.getvalue()


def test_a_bar_starts_no_thread() -> None:
    # A thread would stop extraction from forking its workers (extract/parallel.py).
    before = threading.active_count()
    with Progress(TtyStream(), moment_s=0.0).phase("summarybench extraction", 2) as phase:
        phase.advance()
        assert threading.active_count() == before
        phase.advance()


def test_inside_pytest_lines_pass_the_capture(pytester: pytest.Pytester) -> None:
    """Written during a test (output captured at the fd level), the lines still reach the
    real stderr, and pytest's own output is whole."""
    pytester.makeconftest("""
        import pytest
        from pytest_summarybench.core.progress import Progress

        @pytest.fixture
        def progress(request):
            return Progress.for_pytest(request.config)
    """)
    pytester.makepyfile("""
        import sys

        def test_phase(progress):
            progress.moment_s = 0.0
            progress.interval_s = 0.0
            print("captured stdout")
            with progress.phase("summarybench embedding code", 3, unit="text") as phase:
                for _ in range(3):
                    phase.advance()
            sys.stderr.write("captured stderr\\n")
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "summarybench embedding code: 100% 3/3" in result.stderr.str()
    assert "captured" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("mode", [["-n", "2"], ["-p", "no:xdist"]])
def test_xdist_workers_print_plain_lines(pytester: pytest.Pytester, mode: list[str]) -> None:
    """On a terminal the controller draws bars; a worker, which shares that terminal with
    the controller and the other workers, prints plain lines."""
    if mode[0] == "-n":
        pytest.importorskip("xdist")
    pytester.makeconftest("""
        import io
        import pytest
        from pytest_summarybench.core.progress import Progress

        class Tty(io.StringIO):
            def isatty(self):
                return True

        @pytest.fixture
        def progress(request):
            return Progress.for_pytest(request.config, Tty())
    """)
    pytester.makepyfile("""
        import os

        def test_phase(progress):
            worker = "PYTEST_XDIST_WORKER" in os.environ
            assert progress.phase("x", 1).is_bar is not worker
    """)
    result = pytester.runpytest_subprocess(*mode, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_work_announced_in_parts_grows_the_total() -> None:
    # The call scheduler announces a phase's calls evaluator by evaluator.
    clock = Clock()
    progress, stream = plain(clock, interval_s=0.0)
    phase = progress.phase("summarybench judge calls", 3, unit="call")
    phase.add_total(5)
    clock.now += 3.0
    phase.advance(4)
    assert phase.total == 8 and "4/8" in stream.getvalue().splitlines()[-1]
    phase.close()
