"""The harness interface: what a benchmark hosted on summarybench uses of the session
(docs/harness.md).

A hosted benchmark is a pytest plugin of its own. Its tests record scores with the
``sb_record`` fixture; the controller hands every record of the session to the
``pytest_summarybench_terminal_summary`` hook, where the benchmark prints its tables and
writes its files. Everything else it needs of the run comes from :func:`harness`: the
session token, the output folder, the seed, the parallelism, the progress display, the
call scheduler (model calls made before the tests, at the session's limits, whose answers
the tests then read), and the store, through the few operations a benchmark needs of it.

Importing this module costs pytest and the standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pytest

if TYPE_CHECKING:
    from .core.progress import Progress
    from .llm import Completion, RetryPolicy
    from .llm.requests import ModelRequest
    from .plugin.state import SummaryBenchState
    from .store import Store

__all__ = ["PLUGIN", "Harness", "ProgressPhase", "harness", "load", "read_input", "table_lines"]

PLUGIN = "summarybench"
"""The harness's pytest plugin (entry point) name: ``-p summarybench``, ``-p no:...``."""


class ProgressPhase(Protocol):
    """One phase of the progress display (:meth:`Harness.progress`)."""

    def advance(self, n: int = 1, cost: float | None = 0.0) -> None:
        """Count ``n`` finished units of work (and what they cost, in USD)."""

    def close(self) -> None:
        """End the phase (its last line is printed)."""


def load(pluginmanager: pytest.PytestPluginManager) -> None:
    """Load the harness's plugin into this session, unless it is there already or the user
    blocked it (``-p no:summarybench``). Call it from a hosted benchmark's
    ``pytest_addhooks``, so that enabling the benchmark enables the harness (with
    ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` set, ``-p <benchmark>`` is then enough)."""
    from . import plugin

    if not (pluginmanager.is_registered(plugin) or pluginmanager.is_blocked(PLUGIN)):
        # Entry points only: without an installed distribution there is nothing to load
        # by that name, and importing a module named "summarybench" would fail.
        pluginmanager.load_setuptools_entrypoints("pytest11", name=PLUGIN)


def harness(config: pytest.Config) -> Harness | None:
    """The session's harness, or None when the summarybench plugin is not active (blocked,
    or not loaded)."""
    from .plugin import STATE_NAME

    state = config.pluginmanager.get_plugin(STATE_NAME)
    return None if state is None else Harness(state)


class Harness:
    """What a hosted benchmark may use of the session; one per process (the controller
    and each xdist worker), all sharing one session token and one store.

    Reading a setting loads the session's settings (``summarybench.yaml``, ini keys,
    ``--sb-*`` options) if they were not yet: a bad value is a ``pytest.UsageError``
    naming it. A store that cannot be read or written is one too (``summarybench: ...``).
    """

    def __init__(self, state: SummaryBenchState) -> None:
        self._state = state

    @property
    def token(self) -> str:
        """The session token: one per session, the same in the controller and in every
        xdist worker; put it in a cache tag to keep answers for this session only."""
        return self._state.token

    @property
    def is_worker(self) -> bool:
        """Whether this process is an xdist worker (which runs tests but makes no calls
        ahead of them: the controller does, with :meth:`make_calls`)."""
        return self._state.is_worker

    @property
    def output_dir(self) -> Path:
        """The run's output folder (``--sb-output``; ``./summarybench-results``)."""
        return self._state.settings.output_dir

    @property
    def seed(self) -> int:
        """The run's seed (``--sb-seed``; sampling, shuffles, bootstrap intervals)."""
        return self._state.settings.evaluation.seed

    @property
    def parallel(self) -> int:
        """Concurrent model calls per model (``--sb-parallel``)."""
        return self._state.settings.evaluation.parallel

    def progress(self) -> Progress:
        """The session's progress display (stderr, around pytest's capture):
        ``progress().phase(name, total, unit="call")`` returns a :class:`ProgressPhase`."""
        return self._state.progress()

    # -- the call scheduler ---------------------------------------------------------------
    def make_calls(self, requests: Sequence[ModelRequest], *,
                   retry_policy: RetryPolicy | None = None) -> None:
        """Make ``requests`` now, on the controller, through one scheduler with the
        session's limits: ``parallel`` calls at once per model, each provider's rate
        limits and circuit breakers (the session's, which the code-summary benchmark's
        calls share), retries by ``retry_policy`` (default: the model layer's), each
        identical request once, progress per phase (``request.phase``). Answers go to the store's
        response cache and failures are recorded for the session; :meth:`answer` reads
        either back in any process. Nothing is raised for a failed call.
        """
        if not requests:
            return
        from .core.dependency_warnings import quiet
        from .llm.scheduler import Scheduler, run_coroutine, settle

        scheduler = Scheduler(self._store(), parallel=self.parallel,
                              retry_policy=retry_policy, session=self.token,
                              progress=self.progress(), endpoints=self._state.endpoints)
        phases: dict[str, int] = {}
        for request in requests:
            phases[request.phase] = phases.get(request.phase, 0) + 1
        for phase, n in phases.items():
            scheduler.expect(phase, n)
        try:
            with quiet():
                run_coroutine(lambda: settle([scheduler.call(r) for r in requests]))
        finally:
            scheduler.close()

    def answer(self, request: ModelRequest, *,
               retry_policy: RetryPolicy | None = None) -> Completion:
        """``request``'s answer in a test: the one :meth:`make_calls` fetched, the failure
        it recorded raised again (``ModelCallError``, without a second attempt), or, for
        a request the controller did not make (a test run on its own), the call made now
        with ``retry_policy``."""
        from .llm.scheduler import fetch

        return fetch(request, self._store(), self.token, retry_policy=retry_policy,
                     endpoints=self._state.endpoints)

    def forget_answers(self, tag: str) -> int:
        """Drop the answers cached under ``tag`` (answers kept for one session only, at
        its end); how many were dropped. A store that cannot be written keeps them, and
        says nothing: a later session never reads another session's tag."""
        from .store import StoreError

        try:
            return self._store().responses.forget_tag(tag)
        except StoreError:
            return 0

    # -- what an xdist worker tells the controller ------------------------------------------
    def share(self, scope: str, values: Iterable[str]) -> None:
        """From an xdist worker at collection, before xdist reports it finished: tell the
        controller ``values`` (e.g. the examples ``-k``/``-m`` left) under ``scope``, a
        name of the benchmark's own."""
        with _store_stops_session():
            self._store().selection.add(self.token, values, scope=self._scope(scope))

    def shared(self, scope: str) -> set[str]:
        """On the controller: every value the workers shared under ``scope``."""
        with _store_stops_session():
            return self._store().selection.of(self.token, scope=self._scope(scope))

    @staticmethod
    def _scope(scope: str) -> str:
        if not scope:
            raise ValueError("a scope names what is shared; the unnamed one is the "
                             "code-summary benchmark's")
        return scope

    def _store(self) -> Store:
        with _store_stops_session():
            return self._state.store


@contextmanager
def _store_stops_session() -> Iterator[None]:
    """A store that cannot be read or written stops the session with one line
    (``plugin/errors.py``), as the harness's own options do."""
    from .plugin.errors import usage_error
    from .store import StoreError

    try:
        yield
    except StoreError as exc:
        raise usage_error(exc, where="summarybench: ") from None


def read_input(path: str | Path, limit: int) -> bytes:
    """The bytes of an input file a user names (a dataset), read as the harness reads its
    own: a regular file only (a link to one is followed), at most ``limit`` bytes, the
    bound kept while reading. A FIFO, a device (a link to ``/dev/zero`` read 21.8 GB), a
    folder or a larger file raises ``OSError`` whose ``str`` says what it is
    (``not a regular file: a character device``, ``file too large: ...``), as does a
    file that cannot be opened."""
    from .core.regular import read_regular

    return read_regular(path, limit)


def table_lines(headers: Sequence[object], rows: Sequence[Sequence[object]],
                indent: str = "  ", *, rule: bool = False) -> list[str]:
    """The harness's terminal table: the first column left-aligned, the others
    right-aligned; with ``rule``, a line of dashes under the header."""
    from .report.wording import table_lines as lines

    return lines(headers, rows, indent, rule=rule)
