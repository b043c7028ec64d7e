"""Client-side rate limits per model: requests and tokens per minute.

A limiter hands out reservations: ``reserve`` returns how long the caller must wait
before sending, and books the slot at once, so concurrent callers (coroutines of one
event loop, or threads each running their own) queue up in order instead of racing.
Requests are paced evenly (no burst), which keeps a provider's sliding one-second or
one-minute window under its limit; tokens use a bucket of one minute's allowance,
reserved with an estimate before the call and settled with the reported count after.
A 429 from the provider pauses every caller of that model for its Retry-After.

The limiters live in a process-wide registry keyed by the model's endpoint and limits:
a rate limit belongs to the provider account, shared by every caller in the process
(generation, judges, downstream tasks), not to one of them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ..schemas import ModelConfig
from .providers import endpoint


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
    """Requests-per-minute and tokens-per-minute limits for one model (thread-safe)."""

    def __init__(self, requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        now = clock()
        # Requests: the "theoretical arrival time" of the next request (GCRA), one
        # interval after the previous one, so requests leave evenly spaced.
        self._interval = 60.0 / requests_per_minute if requests_per_minute else None
        self._next_request = now
        self._tokens = (_Bucket(tokens_per_minute / 60.0, tokens_per_minute, now)
                        if tokens_per_minute else None)
        self._paused_until = 0.0

    def reserve(self, tokens: int = 0) -> float:
        """Book one request of about ``tokens`` tokens; return the seconds to wait."""
        with self._lock:
            now = self._clock()
            start = max(now, self._paused_until)
            if self._interval is not None:
                start = max(start, self._next_request)
                self._next_request = start + self._interval
            wait = start - now
            if self._tokens is not None and tokens > 0:
                wait = max(wait, self._tokens.take(float(tokens), now))
            return wait

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


_registry: dict[tuple[object, ...], RateLimiter] = {}
_registry_lock = threading.Lock()


def limiter_for(model: ModelConfig) -> RateLimiter:
    """The process-wide limiter of ``model`` (see the module docstring)."""
    key = (model.provider, model.model_name, endpoint(model), model.requests_per_minute,
           model.tokens_per_minute)
    with _registry_lock:
        limiter = _registry.get(key)
        if limiter is None:
            limiter = RateLimiter(model.requests_per_minute, model.tokens_per_minute)
            _registry[key] = limiter
        return limiter
