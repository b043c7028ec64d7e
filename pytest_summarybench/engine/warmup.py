"""Evaluators' warm-up: work that reads only the code, started while pytest still collects.

Some of what an evaluator's ``prepare`` builds depends on nothing but the extracted units
(contrastive's distractor sets: the candidate stage over the sampled units' groups and the
model's vectors of their candidates, or with the exact search every unit's code embedded;
CPU work of seconds to minutes on a 2-CPU machine, and the contrastive-LLM calls wait for
it). ``Evaluator.warm_up`` lets an evaluator start that
work in a thread the moment the units exist, before the selection is known and before the
first model call, so it overlaps collection and the start of the calls instead of
following them.

One thread runs the warm-ups one after another (two evaluators warming the same cache,
such as both contrastive methods, then do the work once: the second finds it cached). It
is told to stop only when none of the evaluators that warm up has a selected item
(``-k``/``-m``/deselection, ``--sb-generate-only``, the dry run): then nothing it makes
would be read. Otherwise it runs to the end, so that what it caches is exactly what
``prepare`` would have computed (the same batches of the same texts). ``prepare`` of any
evaluator runs only after ``join``: an evaluator must not compute concurrently what its
warm-up is computing.

A warm-up may publish what it has stored as it goes (``Published``: names such as one
unit's distractor set), so that the calls that read it start then instead of after every
``prepare`` (``Evaluator.requests_read``, ``plan.CallRun``).

A warm-up that fails is not reported here: its evaluator's ``prepare`` meets the same
cause and reports it with the evaluator's name.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..context import RunContext
    from ..evaluators.base import Evaluator
    from ..settings import Settings


class Published:
    """Names of what the warm-ups have stored so far (thread-safe): published from the
    warm-up thread, awaited in the call engine's event loop."""

    def __init__(self) -> None:
        self._names: set[str] = set()
        self._lock = threading.Lock()
        self._waiting: dict[str, list[tuple[asyncio.AbstractEventLoop,
                                             asyncio.Future[None]]]] = {}

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._names

    def add(self, names: Iterable[str]) -> None:
        """``names`` are stored: wake whoever waits for one of them."""
        woken = []
        with self._lock:
            for name in names:
                if name not in self._names:
                    self._names.add(name)
                    woken += self._waiting.pop(name, [])
        for loop, future in woken:
            try:
                loop.call_soon_threadsafe(_settle, future)
            except RuntimeError:  # its loop is closed: the call run has ended
                pass

    async def wait(self, name: str) -> None:
        """Return once ``name`` is published (at once if it is)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if name in self._names:
                return
            future: asyncio.Future[None] = loop.create_future()
            self._waiting.setdefault(name, []).append((loop, future))
        await future


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():  # not cancelled meanwhile
        future.set_result(None)


class WarmUp:
    """The warm-up thread of one session (controller only)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.published = Published()
        """What the warm-ups have stored so far, by name (``Evaluator.requests_read``)."""
        self.names: list[str] = []
        """The evaluators whose warm-up was started, in order."""
        self.failed: dict[str, Exception] = {}
        """Warm-ups that raised (their evaluators' ``prepare`` reports the cause)."""
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        """Set when ``_run`` returned: what ``join`` waits on (see there)."""

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self, ctx: RunContext, evaluators: Iterable[Evaluator]) -> None:
        """Start the warm-ups of ``evaluators`` that have one (once per session)."""
        if self._thread is not None:
            return
        work = [ev for ev in evaluators if callable(getattr(ev, "warm_up", None))]
        self.names = [ev.name for ev in work]
        self._thread = threading.Thread(target=self._run, args=(ctx, work),
                                        name="summarybench-warm-up", daemon=True)
        self._thread.start()

    def keep_for(self, selected: set[str]) -> None:
        """The selection is known: stop unless an evaluator that warms up is in it."""
        if not selected.intersection(self.names):
            self.stop.set()

    def join(self) -> None:
        """Wait until the warm-ups returned (at once when none was started).

        It waits on an event the thread sets, not on ``Thread.join``: a ``Thread.join``
        that a Ctrl-C interrupts (Python 3.11) marks the thread as ended while it still
        runs, so the session's last ``join`` returned at once and the interpreter shut
        down with the thread inside onnxruntime, which then died by abort ("terminate
        called without an active exception", signal 6) instead of exiting as
        interrupted. The thread stops between two batches once ``stop`` is set."""
        if self._thread is not None:
            self._done.wait()

    def _run(self, ctx: RunContext, work: list[Evaluator]) -> None:
        try:
            for ev in work:
                if self.stop.is_set():
                    return
                try:
                    ev.warm_up(ctx, self.stop, self.published.add)  # type: ignore[attr-defined]
                except Exception as exc:  # noqa: BLE001 - prepare meets and reports it
                    self.failed[ev.name] = exc
        finally:
            self._done.set()


def import_model_layer(settings: Settings) -> threading.Thread | None:
    """Import litellm in a thread of its own when a configured model will call through it
    (started once the units exist: a running thread stops extraction from forking its
    workers). Its import takes seconds of CPU; begun here it overlaps the rest of
    collection and planning instead of delaying the first request, which waits for it
    only if it is not done by then (``llm.providers.litellm`` holds the import lock)."""
    models = [*settings.test_models(), *settings.judge_models()]
    if all(m.provider == "builtin" for m in models):
        return None
    from ..llm.providers import litellm

    thread = threading.Thread(target=litellm, name="summarybench-import-litellm",
                              daemon=True)
    thread.start()
    return thread
