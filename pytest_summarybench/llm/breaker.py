"""Fail fast on a dead or misconfigured endpoint: a circuit breaker per model endpoint.

A refused connection, a host name that does not resolve, HTTP 401, 403 or 404 is not
retried (``llm/retry.py`` marks it ``dead_endpoint``), but without a breaker every
remaining call of the model would still try once and fail the same way, each possibly
after a slow DNS look-up or TLS handshake. After ``threshold`` such failures in a row the
breaker opens: the model's calls then fail at once with ``EndpointUnavailable``, whose
one-line reason names the model, the endpoint and the cause ("connection refused at
http://127.0.0.1:8000/v1"), and the run goes on with the other models. A success closes
it again. A rate limit, a server error or a timeout at one attempt never counts: it is
retried with backoff (the endpoint is there, maybe only busy). A call that gave up on
them (``llm/client.py``: no answer at any attempt, or a server error at each of its six)
counts once, as a dead endpoint's failure does: a provider that accepts connections and
never answers, or answers HTTP 500 to everything, costs three calls' attempts, not every
call's (100 calls of a model answering 500: 600 attempts, some 50 minutes of backoff,
before). A call that gave up on rate limits does not count.

While open, one call every ``probe_after_s`` is let through as a probe, so an endpoint
that comes back (a local server that finished starting) is used again; the probe's
success closes the breaker, another dead-endpoint failure keeps it open.

A session keeps one breaker per endpoint (``endpoints.py``), shared by every caller of
the model in the session. All methods are thread-safe and never block (a lock held for a
few instructions), so the asyncio scheduler and worker threads call them directly.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .retry import Failure
from .types import ModelCallError


class EndpointUnavailable(ModelCallError):
    """A call not made because its model's endpoint failed ``threshold`` times in a row
    with a dead-endpoint failure (see the module docstring). A ``ModelCallError``, so it is
    recorded like any other failed call; a scheduler may skip the model's remaining
    calls when it sees one."""


@dataclass(frozen=True)
class BreakerPolicy:
    """When a breaker opens, and how often an open one lets a probe through."""

    threshold: int = 3
    """Dead-endpoint failures in a row that open the breaker (1 or more)."""
    probe_after_s: float = 30.0
    """An open breaker lets one call through after this long, to see whether the
    endpoint is back."""


DEFAULT_BREAKER_POLICY = BreakerPolicy()


class CircuitBreaker:
    """Consecutive dead-endpoint failures of one model endpoint (thread-safe)."""

    def __init__(self, policy: BreakerPolicy = DEFAULT_BREAKER_POLICY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if policy.threshold < 1:
            raise ValueError(f"breaker threshold must be 1 or more, not {policy.threshold}")
        self.policy = policy
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._cause: Failure | None = None
        self._opened_at: float | None = None
        self._probe_until = 0.0
        self.refused = 0
        """Calls failed at once since the breaker was created."""

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._opened_at is not None

    @property
    def cause(self) -> str | None:
        """The reason of the failure that opened the breaker (None while closed)."""
        with self._lock:
            return self._cause.reason if self._opened_at is not None and self._cause \
                else None

    @property
    def refusal(self) -> str | None:
        """Why the breaker is open, as a refused call says it (None while closed)."""
        with self._lock:
            if self._opened_at is None or self._cause is None:
                return None
            return _refusal(self._cause, self.policy.threshold)

    def check(self, model_id: str) -> None:
        """Raise ``EndpointUnavailable`` when the breaker is open and no probe is due;
        return when the call may go ahead (closed, or this call is the probe)."""
        with self._lock:
            if self._opened_at is None or self._cause is None:
                return
            now = self._clock()
            if now >= self._opened_at + self.policy.probe_after_s and \
                    now >= self._probe_until:
                # One probe at a time; a probe whose caller never reports (cancelled)
                # lets another through after the same interval.
                self._probe_until = now + self.policy.probe_after_s
                return
            self.refused += 1
            cause = self._cause
        raise EndpointUnavailable(model_id, _refusal(cause, self.policy.threshold),
                                  status=cause.status)

    def succeeded(self) -> None:
        """A call got an answer: close the breaker."""
        with self._lock:
            self._failures = 0
            self._cause = None
            self._opened_at = None
            self._probe_until = 0.0

    def failed(self, failure: Failure) -> bool:
        """Count a failed attempt; return True when it opened the breaker. Failures that
        are not ``dead_endpoint`` leave the count as it is (an endpoint answering 429 or
        503 is neither shown dead nor shown healthy)."""
        if not failure.dead_endpoint:
            return False
        with self._lock:
            self._failures += 1
            self._cause = failure
            if self._opened_at is not None:
                self._opened_at = self._clock()  # a failed probe: wait a full interval
                return False
            if self._failures >= self.policy.threshold:
                self._opened_at = self._clock()
                return True
            return False


def _refusal(cause: Failure, threshold: int) -> str:
    """Why calls are refused: the cause, and the count that opened the breaker (the
    policy's threshold, as the README says; calls in flight when it opened, and probes that
    failed since, fail as well but do not change why it opened)."""
    return (f"{cause.reason} (failed {threshold} times in a row; calls now fail at once "
            "without being sent)")
