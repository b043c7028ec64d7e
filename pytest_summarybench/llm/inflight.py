"""In-flight de-duplication: a request that is being made is not made a second time.

The response cache stops a request from being paid twice once it has an answer; this
module stops it while the answer is on its way. Requests are identified by their cache
key. ``single_flight`` (threads) and ``asingle_flight`` (coroutines) run ``call`` for a
key at most once at a time across

- one process: the first caller leads; concurrent callers (threads on an event,
  coroutines on a future of their own loop) wait for it, then read the answer with
  ``lookup`` (the response cache, where the leader's answer now is);
- processes sharing a store (xdist workers, two sessions on one output folder): the
  leader holds a claim row in the store's ``llm_inflight`` table, refreshed every
  ``HEARTBEAT_S`` by a background thread; other processes poll ``lookup`` until the claim
  is released, and take it over when it goes stale: no heartbeat for ``STALE_AFTER_S``,
  or an owner process on this host that no longer exists (a killed owner blocks nobody
  for more than a poll or two).

A failed call caches nothing and releases its claim; the waiters then make their own
attempt, one at a time. The calls themselves (retries, cache writes) are the caller's:
this module only decides who makes them. ``lookup`` must return the answer once ``call``
succeeded (the model layer's ``call`` writes the cache before returning).
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ..store import Store
from ..store.tables import ClaimRow

T = TypeVar("T")

#: Seconds between two refreshes of the claims a process holds.
HEARTBEAT_S = 1.0
#: A claim not refreshed for this long belongs to a dead (or frozen) owner.
STALE_AFTER_S = 15.0
#: How often a waiter looks at the cache and the claim: first, and at most.
POLL_FIRST_S = 0.05
POLL_MAX_S = 0.5

_HOST = socket.gethostname()
#: This process's name in claim rows (a pid alone can be reused).
_OWNER = f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class Claim:
    """A claim row: who is making the call for a key, and when it last said so."""

    owner: str
    host: str
    pid: int
    heartbeat: float

    def stale(self, now: float, stale_after_s: float) -> bool:
        """Whether the owner is gone: silent too long, or a process of this host that
        no longer exists."""
        if now - self.heartbeat > stale_after_s:
            return True
        return self.host == _HOST and self.pid != os.getpid() and not _alive(self.pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: it exists, as someone else's
        return True
    return True


def current_claim(store: Store, key: str) -> Claim | None:
    """The claim on ``key``, if anyone holds one."""
    row = store.inflight.get(key)
    return Claim(*row) if row else None


def try_claim(store: Store, key: str, *, stale_after_s: float = STALE_AFTER_S) -> bool:
    """Claim ``key`` for this process unless a live owner holds it; True when claimed."""
    held = current_claim(store, key)  # a read first: waiters poll, and writes queue
    if held is not None and held.owner != _OWNER and not held.stale(time.time(),
                                                                   stale_after_s):
        return False

    def decide(row: ClaimRow | None) -> ClaimRow | None:
        now = time.time()
        if row is not None and row[0] != _OWNER and not Claim(*row).stale(now, stale_after_s):
            return None
        return (_OWNER, _HOST, os.getpid(), now)

    if not store.inflight.take(key, decide):
        return False
    _heartbeat.hold(store, key)
    return True


def release(store: Store, key: str) -> None:
    """Give up this process's claim on ``key`` (the answer is cached, or the call failed)."""
    _heartbeat.drop(store, key)
    store.inflight.release(key, _OWNER)


class _Heartbeat:
    """One daemon thread per process refreshing every claim the process holds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[Store, set[str]] = {}
        self._thread: threading.Thread | None = None

    def hold(self, store: Store, key: str) -> None:
        with self._lock:
            self._held.setdefault(store, set()).add(key)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="summarybench-inflight-heartbeat")
                self._thread.start()

    def drop(self, store: Store, key: str) -> None:
        with self._lock:
            keys = self._held.get(store)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._held[store]

    def _run(self) -> None:
        while True:
            time.sleep(HEARTBEAT_S)
            with self._lock:
                held = {store: sorted(keys) for store, keys in self._held.items()}
                if not held:
                    self._thread = None
                    return
            for store, keys in held.items():
                try:
                    store.inflight.beat(keys, _OWNER, time.time())
                except Exception:  # noqa: BLE001 - a busy or closed store: try next beat
                    continue


_heartbeat = _Heartbeat()


@dataclass
class _Flight:
    """One key being called in this process, and who waits for it here."""

    thread: int = field(default_factory=threading.get_ident)
    """The thread of the leader: a blocking wait there would wait for itself."""
    done: threading.Event = field(default_factory=threading.Event)
    futures: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = field(
        default_factory=list)

    def finish(self) -> None:
        with _flights_lock:
            self.done.set()
            waiting, self.futures = self.futures, []
        for loop, future in waiting:
            try:
                loop.call_soon_threadsafe(_resolve, future)
            except RuntimeError:  # that loop is closed: nobody waits there any more
                pass


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


# The process's side of the store's claims, which name the process (``_OWNER``): two
# sessions of one process making the same request must wait for each other as two
# processes do, so this is process-wide. It holds nothing between calls: a flight is
# removed when its call lands.
_flights: dict[tuple[str, str], _Flight] = {}
_flights_lock = threading.Lock()


def _lead(store: Store, key: str) -> tuple[_Flight, bool]:
    """This process's flight for ``key`` and whether the caller leads it."""
    name = (str(store.path), key)
    with _flights_lock:
        flight = _flights.get(name)
        if flight is not None:
            return flight, False
        flight = _flights[name] = _Flight()
        return flight, True


def _land(store: Store, key: str, flight: _Flight) -> None:
    with _flights_lock:
        if _flights.get((str(store.path), key)) is flight:
            del _flights[(str(store.path), key)]
    flight.finish()


class _Turn(Generic[T]):
    """A leader waiting for its turn at a key across processes: until it holds the claim,
    or the owner's answer is there (``hit``)."""

    def __init__(self, store: Store, key: str, lookup: Callable[[], T | None],
                 stale_after_s: float) -> None:
        self.store, self.key, self.lookup = store, key, lookup
        self.stale_after_s = stale_after_s
        self.hit: T | None = None
        self._poll = 0.0

    def wait(self) -> float | None:
        """Seconds to wait before trying again; None once claimed or answered."""
        if self._poll:
            self.hit = self.lookup()
            if self.hit is not None:
                return None
        if try_claim(self.store, self.key, stale_after_s=self.stale_after_s):
            return None
        self._poll = min(POLL_MAX_S, self._poll * 1.5) if self._poll else POLL_FIRST_S
        return self._poll


def single_flight(store: Store, key: str, call: Callable[[], T],
                  lookup: Callable[[], T | None], *,
                  stale_after_s: float = STALE_AFTER_S) -> T:
    """``lookup()`` if it has the answer, else ``call()`` made by exactly one caller at a
    time across threads and processes (see the module docstring). Exceptions of ``call``
    reach only the caller that made it."""
    while True:
        hit = lookup()
        if hit is not None:
            return hit
        flight, leader = _lead(store, key)
        if not leader:
            if flight.thread == threading.get_ident():
                # The leader is a coroutine of this very thread's loop, waiting for us to
                # return: calling is the only way forward.
                return call()
            flight.done.wait()
            continue
        try:
            turn = _Turn(store, key, lookup, stale_after_s)
            while (delay := turn.wait()) is not None:
                time.sleep(delay)
            if turn.hit is not None:
                return turn.hit
            try:
                return call()
            finally:
                release(store, key)
        finally:
            _land(store, key, flight)


async def asingle_flight(store: Store, key: str, call: Callable[[], Awaitable[T]],
                         lookup: Callable[[], T | None], *,
                         stale_after_s: float = STALE_AFTER_S) -> T:
    """The asyncio twin of ``single_flight``: waiting never blocks the event loop."""
    while True:
        hit = lookup()
        if hit is not None:
            return hit
        flight, leader = _lead(store, key)
        if not leader:
            loop = asyncio.get_running_loop()
            future: asyncio.Future[None] = loop.create_future()
            with _flights_lock:
                if flight.done.is_set():
                    continue
                flight.futures.append((loop, future))
            await future
            continue
        try:
            turn = _Turn(store, key, lookup, stale_after_s)
            while (delay := turn.wait()) is not None:
                await asyncio.sleep(delay)
            if turn.hit is not None:
                return turn.hit
            try:
                return await call()
            finally:
                release(store, key)
        finally:
            _land(store, key, flight)
