"""Progress of the run's long phases: extraction, embedding, generation, model calls.

One ``Progress`` per run says where progress goes; each phase gets a handle from
``Progress.phase(name, total, costed=...)`` and counts finished work with
``advance(n, cost)``. Several phases may run at once (a scheduler reporting generation and
judge calls together): handles are independent and thread-safe, and ``advance`` never
blocks on more than a short lock, so it can be called from an asyncio loop.

What is shown, per phase: done of total, the rate, the time left and, for a costed phase,
the cost so far. The rate is that of the last ``RECENT`` steps of work, not of the phase
since it was announced: model calls announced early may wait for summaries before the
first answer, and a rate over that wait promised an hour for what took two minutes. The
time shown at the end is the phase's own, up to its last step, however long after it the
run closes the phase. On a terminal it is a tqdm bar on stderr; otherwise (CI logs, files) it is
a plain line, formatted by tqdm too, at most every ``interval_s`` seconds and once at the
end, never a carriage return. A phase over in under ``moment_s`` prints nothing at all.
Lines are written when work is counted: there is no timer thread (a thread would also stop
extraction from forking its workers, see ``extract/parallel.py``), so a phase shows nothing
new while no work finishes.

Inside pytest, ``Progress.for_pytest(config)`` writes through pytest's capture manager
(suspending capture for each write, as pytest's live logging does), so progress shows during
collection too, and xdist workers, whose stderr the controller's terminal shares, print
plain lines and never a bar.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import pytest

#: A phase over sooner than this (seconds) prints nothing.
MOMENT_S = 2.0
#: Seconds between two plain lines of one phase (not on a terminal).
INTERVAL_S = 5.0
#: Seconds between two redraws of a bar (on a terminal).
BAR_INTERVAL_S = 0.2
#: The rate and the time left are those of the last this many steps of work (``advance``).
RECENT = 30

Guard = Callable[[], AbstractContextManager[Any]]
"""Entered around every write (pytest: suspend output capture)."""


class _Output:
    """The stream phases write to, resolved at each write: inside pytest, ``sys.stderr`` is
    a capture buffer except while the guard holds capture off."""

    def __init__(self, stream: TextIO | None, guard: Guard | None) -> None:
        self._stream = stream
        self._guard = guard or contextlib.nullcontext
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def open(self) -> Iterator[TextIO]:
        with self._lock, self._guard():
            yield self._stream or sys.stderr

    def isatty(self) -> bool:
        with self.open() as stream:
            return bool(getattr(stream, "isatty", lambda: False)())

    def write_line(self, line: str) -> None:
        with self.open() as stream:
            stream.write(line + "\n")
            stream.flush()


class _BarFile:
    """What a tqdm bar writes to: the output, under its guard."""

    def __init__(self, output: _Output) -> None:
        self._output = output

    def write(self, text: str) -> int:
        with self._output.open() as stream:
            return stream.write(text)

    def flush(self) -> None:
        with self._output.open() as stream:
            stream.flush()

    def fileno(self) -> int:  # tqdm reads the terminal's width through it
        with self._output.open() as stream:
            return stream.fileno()


class Progress:
    """Where the phases of a run report, and how often."""

    def __init__(self, stream: TextIO | None = None, *, enabled: bool = True,
                 tty: bool | None = None, interval_s: float = INTERVAL_S,
                 moment_s: float = MOMENT_S, guard: Guard | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """
        :param stream: where to write; None: ``sys.stderr`` at the time of each write.
        :param enabled: False: phases count but print nothing.
        :param tty: draw bars (True) or plain lines (False); None: bars when the stream is
            a terminal.
        :param interval_s: seconds between plain lines of one phase.
        :param moment_s: a phase over in less prints nothing.
        :param guard: entered around every write (pytest's capture suspension).
        :param clock: seconds, monotonic (tests pass a fake one).
        """
        self.enabled = enabled
        self.interval_s = interval_s
        self.moment_s = moment_s
        self.clock = clock
        self._output = _Output(stream, guard)
        self._tty = tty

    @classmethod
    def off(cls) -> Progress:
        """Phases that count and print nothing."""
        return cls(enabled=False)

    @classmethod
    def for_pytest(cls, config: pytest.Config, stream: TextIO | None = None) -> Progress:
        """Progress on stderr (or ``stream``) inside a pytest run: written around pytest's
        output capture, and in plain lines from xdist workers (they share the
        controller's terminal, where bars from several processes would overwrite each
        other and pytest's lines)."""
        capman = config.pluginmanager.getplugin("capturemanager")
        guard = capman.global_and_fixture_disabled if capman is not None else None
        worker = hasattr(config, "workerinput")
        return cls(stream, guard=guard, tty=False if worker else None)

    def phase(self, name: str, total: int, *, unit: str = "item",
              costed: bool = False) -> Phase:
        """A phase of ``total`` units of work (``unit`` names one in the display).

        :param costed: show the cost so far (model calls with a price).
        """
        show = self.enabled and total > 0
        tty = show and (self._tty if self._tty is not None else self._output.isatty())
        return Phase(self, name, total, unit=unit, costed=costed, show=show, tty=tty)

    def write_line(self, line: str) -> None:
        """Write ``line`` (a phase's plain line) where the phases report."""
        if self.enabled:
            self._output.write_line(line)

    def bar_file(self) -> _BarFile:
        """The file a phase's tqdm bar writes to."""
        return _BarFile(self._output)


class Phase:
    """One phase's counts and display; ``advance`` and ``close`` are thread-safe."""

    def __init__(self, progress: Progress, name: str, total: int, *, unit: str,
                 costed: bool, show: bool, tty: bool) -> None:
        self.name = name
        self.total = total
        self.unit = unit
        self.costed = costed
        self.done = 0
        self.cost = 0.0
        """Known cost so far, in USD."""
        self.cost_unknown = False
        """Some counted work had no known price."""
        self.closed = False
        self._progress = progress
        self._clock = progress.clock
        self._started = self._clock()
        self._last_line: float | None = None
        self._last_done = -1
        self._steps: deque[tuple[float, int]] = deque(maxlen=RECENT + 1)
        """(when, done after it) of the last steps of work: what the rate is read from."""
        self._show = show
        self._lock = threading.Lock()
        self._bar: Any = _bar(progress, self, total, unit) if show and tty else None

    # -- counting -------------------------------------------------------------------------
    def advance(self, n: int = 1, cost: float | None = 0.0) -> None:
        """Count ``n`` finished units of work that cost ``cost`` USD (None: a price is
        unknown; the cost shown is then a lower bound). After ``close`` it only counts."""
        with self._lock:
            self.done += n
            self._steps.append((self._clock(), self.done))
            if cost is None:
                self.cost_unknown = True
            else:
                self.cost += cost
            if self.closed:
                return
            if self._bar is not None:
                if self.costed:
                    self._bar.set_postfix_str(self.cost_text(), refresh=False)
                self._bar.update(n)
            elif self._show:
                now = self._clock()
                if self._line_due(now):
                    self._write(now)

    def add_total(self, n: int) -> None:
        """``n`` more units of work than announced (a phase whose work arrives in parts,
        e.g. model calls declared evaluator by evaluator)."""
        with self._lock:
            self.total += n
            if self._bar is not None and not self.closed:
                self._bar.total = self.total
                self._bar.refresh()

    def close(self) -> None:
        """End the phase: a last line (or the finished bar) if anything was shown, or if
        the phase lasted longer than a moment; no line repeating the one before."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            if self._bar is not None:
                self._bar.close()  # tqdm prints nothing if its delay never passed
            elif self._show:
                now = self._clock()
                shown = self._last_line is not None
                if (shown and self._last_done != self.done) or (
                        not shown and now - self._started >= self._progress.moment_s):
                    self._write(now)

    def __enter__(self) -> Phase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def is_bar(self) -> bool:
        """Drawn as a bar (on a terminal), not as plain lines."""
        return self._bar is not None

    # -- arithmetic -----------------------------------------------------------------------
    def elapsed(self, now: float | None = None) -> float:
        """Seconds since the phase began; once closed, up to its last step of work (its
        own time, not the time until the run closed it)."""
        if self.closed and self._steps:
            return self._steps[-1][0] - self._started
        return (self._clock() if now is None else now) - self._started

    def rate(self, now: float | None = None) -> float | None:
        """Units per second over the last ``RECENT`` steps of work (None until two steps
        came at different times: one step says nothing of the pace)."""
        if len(self._steps) < 2:
            return None
        (first, done_then), (last, done_now) = self._steps[0], self._steps[-1]
        return (done_now - done_then) / (last - first) if last > first else None

    def remaining_s(self, now: float | None = None) -> float | None:
        """Seconds left at the recent rate (None while there is no rate, or it is 0)."""
        if self.done >= self.total:
            return 0.0
        rate = self.rate(now)
        if not rate:
            return None
        return (self.total - self.done) / rate

    def shown_rate(self, now: float | None = None) -> float:
        """The rate a display shows: the recent one; 0 ("?") while there is none, unless
        the phase is done (then its average, as there is nothing left to estimate)."""
        rate = self.rate(now)
        if rate is not None:
            return rate
        elapsed = self.elapsed(now)
        return self.done / elapsed if self.done >= self.total and elapsed > 0 else 0.0

    def cost_text(self) -> str:
        text = f"cost ${self.cost:.4f}"
        return text + " + unknown" if self.cost_unknown else text

    def line(self, now: float | None = None) -> str:
        """The plain progress line: name, done/total, elapsed<left, rate, cost."""
        from tqdm import tqdm

        return tqdm.format_meter(self.done, self.total, self.elapsed(now), ncols=0,
                                 prefix=self.name, unit=self.unit, rate=self.shown_rate(now),
                                 postfix=self.cost_text() if self.costed else None)

    # -- display --------------------------------------------------------------------------
    def _line_due(self, now: float) -> bool:
        if now - self._started < self._progress.moment_s:
            return False
        return self._last_line is None or now - self._last_line >= self._progress.interval_s

    def _write(self, now: float) -> None:
        self._last_line = now
        self._last_done = self.done
        self._progress.write_line(self.line(now))


@functools.cache
def _bar_class() -> type:
    from tqdm import tqdm

    class Bar(tqdm):  # type: ignore[type-arg]
        # No monitor thread: a running thread stops extraction from forking its workers.
        monitor_interval = 0
        phase: Phase | None = None

        @property
        def format_dict(self) -> dict[str, Any]:
            # The phase's rate (its recent steps) and elapsed time (its own, once closed),
            # not tqdm's: the same figures as the plain lines.
            shown = dict(super().format_dict)
            if self.phase is not None:
                shown["rate"] = self.phase.shown_rate()
                shown["elapsed"] = self.phase.elapsed()
            return shown

    return Bar


def _bar(progress: Progress, phase: Phase, total: int, unit: str) -> Any:
    # delay: a phase over before it prints nothing (tqdm's close keeps quiet too).
    bar = _bar_class()(total=total, desc=phase.name, unit=unit, file=progress.bar_file(),
                       delay=progress.moment_s, mininterval=BAR_INTERVAL_S,
                       dynamic_ncols=True, leave=True)
    bar.phase = phase
    return bar
