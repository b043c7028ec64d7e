"""Client-side rate limits per model: requests and tokens per minute, paced adaptively.

A provider that enforces its limit over a strict window (at most N requests in any one
second) answers 429 to a request that arrives in a full window, even when requests were
sent at exactly N a second: they never arrive exactly evenly spaced. So requests are
paced evenly (no burst) a little under the configured limit (``Pacing.headroom``), and at
the moment of sending the actual send times are checked too: at most one window's worth
of requests in any ``window_s / headroom`` seconds, so that a send delayed by a busy event
loop does not make the following ones arrive in a clump. The pace adapts to the
provider's answers (AIMD): a 429 multiplies it by ``decrease``, once per congestion event
(429s to requests sent before the last decrease do not decrease it again), and good
answers add it back gradually, over about ``recovery_s`` of good answers, up to the
starting pace, never above the configured limit. A 429's Retry-After pauses every caller
of the limiter, also those already holding a slot: they get a new, evenly spaced slot
after the pause, so the pause does not end in a burst. Without a configured limit each
429 estimates the limit from the requests the provider accepted in the last window, the
pace stays below that estimate as below a configured limit, and climbs past it to find a
higher limit: quickly while the estimate rests on one refused request (a transient 429
would otherwise hold the run near the pace it came at), slowly once a limit showed itself
(several refused in one window, or a second congestion event).

Tokens use a bucket of one minute's allowance, reserved with an estimate before the call
and settled with the reported count after.

Callers: ``acquire`` (threads) or ``aacquire`` (asyncio) waits for a slot and returns a
``Slot``; the answer is reported with ``succeeded(slot, used_tokens)`` or
``rate_limited(slot, retry_after_s)``. ``reserve`` then ``admit`` are the same two steps
without the sleeping, for a scheduler that waits by itself. Every method is thread-safe
and only holds a lock for a few instructions.

A session keeps one limiter per model endpoint and limits (``endpoints.py``): a rate
limit belongs to the provider account, shared by every caller of the session
(generation, judges, downstream tasks), not to one of them.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ..schemas import ModelConfig
from .providers import endpoint


@dataclass(frozen=True)
class Pacing:
    """How requests are paced under a requests-per-minute limit."""

    headroom: float = 0.95
    """The fastest pace, as a fraction of the configured limit; also the starting pace."""
    adaptive: bool = True
    """Slow down on 429 and recover on good answers, re-slot callers held by a
    Retry-After; False: a fixed pace (the behaviour before adaptive pacing)."""
    decrease: float = 0.9
    """A 429 that asks for a wait of a whole window (or says nothing) multiplies the pace
    by this; a shorter Retry-After by proportionally less (see ``RateLimiter.rate_limited``)."""
    recovery_s: float = 3.0
    """Seconds of good answers that climb back from one decrease."""
    min_fraction: float = 0.05
    """The pace never drops below this fraction of the limit."""
    window_s: float | None = 1.0
    """The provider's window assumed at the moment of sending (None: not checked)."""
    first_probe: float | None = 0.5
    """Without a configured limit: how much the pace grows per window of good answers
    past an estimate that rests on one refused request (None: as slowly as past any
    other). One 429 is one sample, and a transient one (a provider's brief overload) would
    otherwise hold the whole run near the pace it happened at; several refused in one
    window, or a second congestion event, show a limit, and probing slows down (see
    ``RateLimiter.succeeded``)."""

    def __post_init__(self) -> None:
        if not 0 < self.headroom <= 1 or not 0 < self.decrease < 1 or \
                not 0 < self.min_fraction <= self.headroom or self.recovery_s <= 0 or \
                (self.window_s is not None and self.window_s <= 0) or \
                (self.first_probe is not None and self.first_probe <= 0):
            raise ValueError(f"invalid pacing {self}: need 0 < min_fraction <= headroom "
                             "<= 1, 0 < decrease < 1, recovery_s > 0, window_s > 0, "
                             "first_probe > 0")


DEFAULT_PACING = Pacing()
#: Evenly at exactly the limit, nothing adaptive: the pacing before adaptive pacing, kept
#: for comparisons (``benchmarks/perf/rate_limits.py``).
EXACT_PACING = Pacing(headroom=1.0, adaptive=False, window_s=None)


@dataclass(frozen=True)
class Slot:
    """One admitted request: when it left, and the tokens booked for it."""

    sent_at: float
    tokens: int = 0


class _Bucket:
    """A token bucket that may go into debt: a reservation larger than what is left is
    granted and paid back by waiting."""

    def __init__(self, per_second: float, capacity: float, now: float) -> None:
        self.per_second = per_second
        self.capacity = capacity
        self.level = capacity
        self.updated = now

    def _refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.updated) * self.per_second)
        self.updated = now

    def take(self, amount: float, now: float) -> float:
        """Book ``amount`` and return the seconds until it is covered."""
        self._refill(now)
        self.level -= amount
        return 0.0 if self.level >= 0 else -self.level / self.per_second

    def give_back(self, amount: float, now: float) -> None:
        self._refill(now)
        self.level = min(self.capacity, self.level + amount)


class RateLimiter:
    """Requests-per-minute and tokens-per-minute limits for one model (see the module
    docstring; thread-safe)."""

    def __init__(self, requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 pacing: Pacing = DEFAULT_PACING) -> None:
        self.pacing = pacing
        self._clock = clock
        self._lock = threading.Lock()
        now = clock()
        self.limit = requests_per_minute / 60.0 if requests_per_minute else None
        """The configured limit in requests per second (None: not configured)."""
        # The pace in requests per second (None: unpaced) and its bounds.
        self._ceiling = self.limit * pacing.headroom if self.limit else None
        self._rate = self._ceiling
        # The pace whose (1 - decrease) share is recovered in recovery_s: the ceiling, or
        # without a configured limit the limit estimated at the last 429.
        self._reference = self._ceiling
        # The "theoretical arrival time" of the next request (GCRA), one interval after
        # the previous one, so requests leave evenly spaced.
        self._next_request = now
        self._tokens = (_Bucket(tokens_per_minute / 60.0, tokens_per_minute, now)
                        if tokens_per_minute else None)
        self._paused_until = 0.0
        self._last_decrease = -math.inf
        # Without a configured limit: requests sent in the window of the last slow-down,
        # and how many of them the provider refused.
        self._event_sent = 0
        self._event_rejected = 0
        # Without a configured limit: congestion events that set an estimate so far.
        self._events = 0
        # Send times within the last span, for the window check and the rate estimate.
        self._span = pacing.window_s / pacing.headroom if pacing.window_s else None
        self._cap = (max(1, math.floor(self.limit * pacing.window_s + 1e-9))
                     if self.limit and pacing.window_s else None)
        self._sent: deque[float] = deque()
        self.sent = 0
        """Requests admitted so far."""
        self.rate_limits = 0
        """429 answers reported so far."""

    @property
    def rate(self) -> float | None:
        """The current pace in requests per second (None: unpaced)."""
        with self._lock:
            return self._rate

    # -- before a call -------------------------------------------------------------------
    def _book(self, now: float) -> float:
        """The start of the next request slot (booked), not before a pause ends."""
        start = max(now, self._paused_until)
        if self._rate is not None:
            start = max(start, self._next_request)
            self._next_request = start + 1.0 / self._rate
        return start

    def reserve(self, tokens: int = 0) -> float:
        """Book one request of about ``tokens`` tokens; return the seconds to wait before
        ``admit``."""
        with self._lock:
            now = self._clock()
            wait = self._book(now) - now
            if self._tokens is not None and tokens > 0:
                wait = max(wait, self._tokens.take(float(tokens), now))
            return wait

    def admit(self) -> float:
        """At the moment of sending: 0.0 when the request may go now (it is counted as
        sent), otherwise the seconds to wait before calling ``admit`` again (a
        Retry-After pause began after the slot was booked, or the last window is full)."""
        return self._admit()[0]

    def _admit(self) -> tuple[float, float]:
        """``admit``'s wait, and the time it was decided at."""
        with self._lock:
            now = self._clock()
            if self.pacing.adaptive and now < self._paused_until:
                return self._book(now) - now, now
            if self._span is not None:
                while self._sent and self._sent[0] <= now - self._span:
                    self._sent.popleft()
                if self._cap is not None and len(self._sent) >= self._cap:
                    return self._sent[0] + self._span - now, now
                self._sent.append(now)
            self.sent += 1
            return 0.0, now

    def acquire(self, tokens: int = 0) -> Slot:
        """Wait (blocking this thread) until a request of ``tokens`` may be sent."""
        time.sleep(self.reserve(tokens))
        while True:
            wait, now = self._admit()
            if wait <= 0:
                return Slot(now, tokens)
            time.sleep(wait)

    async def aacquire(self, tokens: int = 0) -> Slot:
        """The asyncio twin of ``acquire``."""
        await asyncio.sleep(self.reserve(tokens))
        while True:
            wait, now = self._admit()
            if wait <= 0:
                return Slot(now, tokens)
            await asyncio.sleep(wait)

    # -- after a call --------------------------------------------------------------------
    def succeeded(self, slot: Slot | None = None, used_tokens: int | None = None) -> None:
        """A good answer: recover some pace, and settle the slot's token reservation."""
        if slot is not None and used_tokens is not None:
            self.settle(slot.tokens, used_tokens)
        if not self.pacing.adaptive:
            return
        with self._lock:
            rate, top, reference = self._rate, self._ceiling, self._reference
            if rate is None or reference is None or (top is not None and rate >= top):
                return
            # (1 - decrease) of the reference pace per recovery_s, at one answer per slot.
            step = reference * (1 - self.pacing.decrease) / (self.pacing.recovery_s * rate)
            if top is None and rate >= reference * self.pacing.headroom:
                # No configured limit: past the estimated limit (less the headroom) the
                # pace goes on climbing to find out whether the limit is higher. While the
                # estimate rests on one refused request (one 429 may be a transient's)
                # it grows by first_probe per window; once a limit showed itself (several
                # refused in one window, or a second congestion event), ten times slower
                # than the recovery, since each probe that fails costs a 429.
                probe, window = self.pacing.first_probe, self.pacing.window_s
                if self._events <= 1 and self._event_rejected <= 1 and \
                        probe is not None and window is not None:
                    # rate answers a second, each adding this: x(1 + probe) per window.
                    step = math.log1p(probe) / window
                else:
                    step /= 10
            self._rate = min(top, rate + step) if top is not None else rate + step

    def rate_limited(self, slot: Slot | None, retry_after_s: float | None = None) -> None:
        """A 429: pause everyone for ``retry_after_s`` and slow down (once for all the
        requests sent before the last slow-down)."""
        with self._lock:
            now = self._clock()
            self.rate_limits += 1
            if retry_after_s:
                self._paused_until = max(self._paused_until, now + retry_after_s)
            if not self.pacing.adaptive:
                return
            if slot is not None and slot.sent_at <= self._last_decrease:
                if self.limit is None and self._event_sent:
                    # Another 429 to a request sent before the slow-down: the provider
                    # accepted one request fewer of the last window than counted.
                    self._event_rejected += 1
                    self._estimate(retry_after_s)
                return
            self._last_decrease = now
            if self.limit is None:
                if self._span is not None and self._sent:
                    self._event_sent, self._event_rejected = len(self._sent), 1
                    self._events += 1
                    self._estimate(retry_after_s)
                return
            floor = self.limit * self.pacing.min_fraction
            self._rate = max(floor, (self._rate or floor) * self._factor(retry_after_s))

    def _estimate(self, retry_after_s: float | None) -> None:
        """No configured limit: take the requests the provider accepted in the last window
        (those sent in it, less those it refused) for its limit, and pace below it as
        below a configured one."""
        assert self.pacing.window_s is not None
        accepted = max(1, self._event_sent - self._event_rejected)
        self._reference = accepted / self.pacing.window_s
        rate = self._reference * self.pacing.headroom * self._factor(retry_after_s)
        self._rate = rate if self._rate is None else min(self._rate, rate)

    def _factor(self, retry_after_s: float | None) -> float:
        """How much one 429 slows the pace. A Retry-After of a whole window or more (or
        none) means the pace is over the limit: the full ``decrease``. A short one (the
        window has room again in 40 ms) means a request arrived a little early, most
        often because requests arrive less evenly than they were sent; slowing the pace
        much for it would cost more than the 429 did, so the decrease is in proportion."""
        window = self.pacing.window_s
        if retry_after_s is None or window is None:
            return self.pacing.decrease
        return 1 - (1 - self.pacing.decrease) * min(1.0, retry_after_s / window)

    def settle(self, reserved_tokens: int, used_tokens: int) -> None:
        """Correct a token reservation with the count the provider reported."""
        if self._tokens is None or reserved_tokens == used_tokens:
            return
        with self._lock:
            now = self._clock()
            if used_tokens < reserved_tokens:
                self._tokens.give_back(float(reserved_tokens - used_tokens), now)
            else:
                self._tokens.take(float(used_tokens - reserved_tokens), now)

    def pause(self, seconds: float) -> None:
        """Hold every new request for ``seconds`` (the provider said Retry-After)."""
        with self._lock:
            self._paused_until = max(self._paused_until, self._clock() + seconds)


def endpoint_key(model: ModelConfig) -> tuple[object, ...]:
    """What identifies where ``model``'s calls go: provider, model name, endpoint."""
    return (model.provider, model.model_name, endpoint(model))

