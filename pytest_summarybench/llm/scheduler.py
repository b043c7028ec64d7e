"""The session's call scheduler: every model call of every phase, concurrently, at each
model's limit.

One ``Scheduler`` runs on the controller for the whole session. ``call`` takes a
``ModelRequest`` and returns its completion: an answer the response cache holds costs
nothing and waits for nothing; otherwise the call waits for one of the model's
``parallel`` slots (``--sb-parallel``: concurrent calls per model, in every phase), then
goes through the model layer (in-flight de-duplication, rate limits, retries, answer
checks, pricing, cache). Calls of one model never hold up another model's.

Around the model layer the scheduler keeps what belongs to the session rather than to one
call: the cost cap (no new paid call once ``max_cost_usd`` is spent), the session's rate
limiters and the breakers that stop calling a dead endpoint after a few failures in a
row (``endpoints``: ``llm/endpoints.py``, the run context's when the engine makes it), the
tally of calls per phase and model (what the terminal, the report and the dry-run
comparison show) and the failures, which it records in the store so that the tests, in
whichever process they run, fail with the reason instead of calling again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .requests import ModelRequest
from .types import Completion, ModelCallError

if TYPE_CHECKING:
    from ..store import Store
    from .endpoints import Endpoints
    from .retry import RetryPolicy

T = TypeVar("T")


class PhaseProgress(Protocol):
    """What the scheduler tells a progress display about one phase."""

    def advance(self, n: int = 1, cost: float | None = 0.0) -> None: ...

    def add_total(self, n: int) -> None: ...

    def close(self) -> None: ...


class ProgressBoard(Protocol):
    """Where phases show their progress (``progress.Progress``)."""

    def phase(self, name: str, total: int, *, unit: str = "item",
              costed: bool = False) -> PhaseProgress: ...


class BudgetExhausted(ModelCallError):
    """The session's cost cap is spent: no new paid call starts."""


@dataclass
class PhaseTally:
    """What one phase asked of one model."""

    calls: int = 0
    """Paid calls made (one per request, whatever its retries)."""
    cached: int = 0
    """Requests the response cache answered."""
    failed: int = 0
    skipped: int = 0
    """Requests not made because the cost cap was reached."""
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    cost_unknown: bool = False
    first_start: float | None = None
    """``time.monotonic()`` when the phase's first request of this model was asked for."""
    last_end: float | None = None
    """When its last request ended (answered, failed or refused)."""

    @property
    def span_s(self) -> float:
        """The phase's own time: from its first request to the end of its last (the other
        phases it overlapped are not in it, nor the waits before it started)."""
        if self.first_start is None or self.last_end is None:
            return 0.0
        return max(0.0, self.last_end - self.first_start)

    def merge(self, other: PhaseTally) -> None:
        """Add ``other``'s counts and widen the span to cover it."""
        for name in ("calls", "cached", "failed", "skipped", "input_tokens",
                     "output_tokens"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.cost += other.cost
        self.cost_unknown = self.cost_unknown or other.cost_unknown
        starts = [t for t in (self.first_start, other.first_start) if t is not None]
        ends = [t for t in (self.last_end, other.last_end) if t is not None]
        self.first_start = min(starts) if starts else None
        self.last_end = max(ends) if ends else None

    def add(self, completion: Completion) -> None:
        if completion.cached:
            self.cached += 1
            return
        self.calls += 1
        self.input_tokens += completion.input_tokens
        self.output_tokens += completion.output_tokens
        if completion.cost is None:
            self.cost_unknown = True
        else:
            self.cost += completion.cost


@dataclass
class Budget:
    """The cost cap: known spending so far, and whether new calls may start."""

    cap_usd: float | None
    spent_usd: float = 0.0
    unknown_priced: set[str] = field(default_factory=set)

    def add(self, completion: Completion, model_id: str) -> bool:
        """Count a call's cost; True when this call reached the cap."""
        if completion.cached:
            return False
        if completion.cost is None:
            self.unknown_priced.add(model_id)
            return False
        was = self.exhausted
        self.spent_usd += completion.cost
        return self.exhausted and not was

    @property
    def exhausted(self) -> bool:
        return self.cap_usd is not None and self.spent_usd >= self.cap_usd


class Scheduler:
    """Runs ``ModelRequest``s for one session (see the module docstring)."""

    def __init__(self, store: Store | None, *, parallel: int = 4,
                 max_cost_usd: float | None = None, retry_policy: RetryPolicy | None = None,
                 progress: ProgressBoard | None = None, session: str = "",
                 on_cap: Callable[[Budget], None] | None = None,
                 endpoints: Endpoints | None = None) -> None:
        from .endpoints import Endpoints

        self.store = store
        self.parallel = max(1, parallel)
        self.retry_policy = retry_policy
        self.progress = progress
        self.session = session
        """The session token under which failures are recorded for the tests; the cached
        answers a session could not use are read again by that session alone."""
        self.endpoints = endpoints or Endpoints()
        """The session's rate limiters, breakers and Routers (its own when given none)."""
        self.budget = Budget(max_cost_usd)
        self.tally: dict[tuple[str, str], PhaseTally] = defaultdict(PhaseTally)
        """(phase, model id) -> what was asked."""
        self._gates: dict[str, asyncio.Semaphore] = {}
        self._inflight: dict[str, asyncio.Future[Completion]] = {}
        self._phases: dict[str, PhaseProgress] = {}
        self._on_cap = on_cap
        self._lock = threading.Lock()

    # -- progress ---------------------------------------------------------------------------
    def expect(self, phase: str, n: int) -> None:
        """Announce ``n`` more requests of ``phase`` (the progress display's total)."""
        if self.progress is None or n <= 0:
            return
        with self._lock:
            handle = self._phases.get(phase)
            if handle is None:
                self._phases[phase] = self.progress.phase(
                    f"summarybench {phase} calls", n, unit="call", costed=True)
            else:
                handle.add_total(n)

    def _advance(self, phase: str, completion: Completion | None) -> None:
        handle = self._phases.get(phase)
        if handle is not None:
            handle.advance(1, None if completion is None else
                           (0.0 if completion.cached else completion.cost))

    # -- calling ----------------------------------------------------------------------------
    def _gate(self, request: ModelRequest) -> asyncio.Semaphore:
        model = request.model
        gate = self._gates.get(model.id)
        if gate is None:
            deployments = len(getattr(model, "deployments", None) or ()) or 1
            gate = asyncio.Semaphore(self.parallel * deployments)
            self._gates[model.id] = gate
        return gate

    async def call(self, request: ModelRequest) -> Completion:
        """The completion of ``request`` (see the module docstring); ``ModelCallError``
        when it fails for good, ``BudgetExhausted`` when the cost cap stops it.

        Calls wait for their model's slots in order of arrival. (Follow-up calls, such as
        a pairwise comparison's second order, were once let ahead of first calls: the
        judge's calls per second fell from 0.95 to 0.88 of the limit in
        ``benchmarks/perf/eval_throughput.py``, so they queue like the others.)
        """
        tally = self.tally[(request.phase, request.model.id)]
        if tally.first_start is None:
            tally.first_start = time.monotonic()
        try:
            return await self._call(request, tally)
        finally:
            tally.last_end = time.monotonic()

    async def _call(self, request: ModelRequest, tally: PhaseTally) -> Completion:
        from .client import cached_completion

        kwargs: dict[str, Any] = dict(cache_tag=request.tag, response_format=request.format,
                                      session=self.session, **request.overrides)
        if self.store is not None:
            hit = cached_completion(request.model, request.chat_messages, cache=self.store,
                                    **kwargs)
            if hit is not None:
                tally.add(hit)
                self._advance(request.phase, hit)
                return hit
        leader = self._inflight.get(request.key)
        if leader is not None:
            # The same request is already on its way: wait for its answer without taking
            # one of the model's slots.
            completion = dataclasses.replace(await asyncio.shield(leader), cached=True,
                                             attempts=0)
            tally.add(completion)
            self._advance(request.phase, completion)
            return completion
        mine: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        mine.add_done_callback(lambda f: f.cancelled() or f.exception())  # read once
        self._inflight[request.key] = mine
        try:
            completion = await self._make(request, tally, kwargs)
        except BaseException as exc:
            if not mine.done():
                mine.set_exception(exc)
            raise
        else:
            mine.set_result(completion)
        finally:
            del self._inflight[request.key]
        return completion

    async def _make(self, request: ModelRequest, tally: PhaseTally,
                    kwargs: dict[str, Any]) -> Completion:
        from .client import acomplete

        try:
            async with self._gate(request):
                # Checked once the call has its slot: the calls ahead of it may have spent
                # the rest of the budget while it waited.
                if self.budget.exhausted:
                    tally.skipped += 1
                    raise BudgetExhausted(request.model.id, f"the cost cap of "
                                          f"${self.budget.cap_usd:.2f} is reached; no new "
                                          "call was started")
                completion = await acomplete(request.model, request.chat_messages,
                                             cache=self.store, retry_policy=self.retry_policy,
                                             timeout=request.timeout_s,
                                             endpoints=self.endpoints, **kwargs)
        except ModelCallError as exc:
            if not isinstance(exc, BudgetExhausted):
                tally.failed += 1
            self._record_failure(request, exc)
            self._advance(request.phase, None)
            raise
        tally.add(completion)
        if self.budget.add(completion, request.model.id) and self._on_cap is not None:
            self._on_cap(self.budget)
        self._advance(request.phase, completion)
        return completion

    def _record_failure(self, request: ModelRequest, exc: ModelCallError) -> None:
        if self.store is not None and self.session:
            self.store.call_failures.record(self.session, request.key, exc.reason,
                                            exc.status)

    # -- running ----------------------------------------------------------------------------
    def close(self) -> None:
        """End the progress display of every phase."""
        with self._lock:
            phases, self._phases = list(self._phases.values()), {}
        for handle in phases:
            handle.close()

    def totals(self) -> dict[str, PhaseTally]:
        """Per phase, summed over models."""
        out: dict[str, PhaseTally] = defaultdict(PhaseTally)
        for (phase, _model), t in self.tally.items():
            out[phase].merge(t)
        return dict(out)


def run_coroutine(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``asyncio.run`` the coroutine ``make()`` builds, also when this thread already runs
    a loop (then in a thread of its own)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    result: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result.append(asyncio.run(make()))
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=target, name="summarybench-calls")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0]


async def settle(awaitables: list[Awaitable[T]]) -> list[T | BaseException]:
    """Wait for all of ``awaitables``; each result or the exception it raised."""
    return list(await asyncio.gather(*awaitables, return_exceptions=True))


def fetch(request: ModelRequest, store: Store | None, session: str = "", *,
          retry_policy: RetryPolicy | None = None,
          endpoints: Endpoints | None = None) -> Completion:
    """``request``'s completion in a test: the answer the scheduler already fetched (the
    response cache), the failure it recorded for this session (raised again, without a
    second attempt), or else the call, made now (an item the controller did not prepare,
    e.g. when a test is run on its own) with ``retry_policy`` under the session's
    ``endpoints`` (``ctx.endpoints``)."""
    from .client import cached_completion, complete

    kwargs: dict[str, Any] = dict(cache_tag=request.tag, response_format=request.format,
                                  session=session, **request.overrides)
    if store is not None:
        hit = cached_completion(request.model, request.chat_messages, cache=store, **kwargs)
        if hit is not None:
            return hit
        if session:
            recorded = store.call_failures.reason(session, request.key)
            if recorded is not None:
                reason, status = recorded
                raise ModelCallError(request.model.id, reason, status=status)
    return complete(request.model, request.chat_messages, cache=store,
                    retry_policy=retry_policy, timeout=request.timeout_s, endpoints=endpoints,
                    **kwargs)
