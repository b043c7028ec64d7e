"""Rate limiter and retry policy, with a fake clock and hand-built failures."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from pytest_summarybench.llm.limits import RateLimiter
from pytest_summarybench.llm.retry import (
    Failure,
    MalformedResponse,
    RetryPolicy,
    backoff_delay,
    classify,
    retry_after_seconds,
    wait_refused,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_requests_are_paced_evenly_without_burst() -> None:
    clock = Clock()
    limiter = RateLimiter(requests_per_minute=600, clock=clock)   # 10 per second
    step = 1 / 9.5                                                 # paced at 95%
    waits = [limiter.reserve() for _ in range(5)]
    assert waits == pytest.approx([0.0, step, 2 * step, 3 * step, 4 * step])
    clock.now += 10      # idle time does not bank a burst
    assert [limiter.reserve() for _ in range(2)] == pytest.approx([0.0, step])


def test_token_budget_reserves_and_settles() -> None:
    clock = Clock()
    limiter = RateLimiter(tokens_per_minute=6000, clock=clock)    # 100 tokens per second
    assert limiter.reserve(5000) == 0.0
    assert limiter.reserve(2000) == pytest.approx(10.0)            # 1000 short: 10 s
    limiter.settle(5000, 1000)                                     # used less than reserved
    assert limiter.reserve(1000) == pytest.approx(0.0)


def test_pause_holds_everyone_then_paces() -> None:
    clock = Clock()
    limiter = RateLimiter(requests_per_minute=600, clock=clock)
    limiter.pause(2.0)
    step = 1 / 9.5
    assert [limiter.reserve() for _ in range(3)] == pytest.approx([2.0, 2 + step,
                                                                   2 + 2 * step])
    assert RateLimiter(clock=clock).reserve(10**9) == 0.0          # no limits configured


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    later = datetime.now(timezone.utc) + timedelta(seconds=30)
    assert 25 < retry_after_seconds({"retry-after": format_datetime(later, usegmt=True)}) <= 30
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds(None) is None
    # a hostile provider's: no wait said, none asked, beyond any cap
    assert retry_after_seconds({"retry-after": "nan"}) is None
    assert retry_after_seconds({"retry-after-ms": "nan"}) is None
    assert retry_after_seconds({"retry-after": "-5"}) == 0.0
    assert retry_after_seconds({"retry-after": "Fri, 31 Dec 9999 23:59:59 GMT"}) > 10**10
    assert retry_after_seconds({"retry-after": "1e999"}) == float("inf")


def test_a_wait_over_the_cap_is_refused_in_one_line() -> None:
    policy = RetryPolicy()
    assert policy.max_retry_after_s == 60.0
    assert wait_refused(policy, Failure("429", True, 429, retry_after_s=60.0)) is None
    assert wait_refused(policy, Failure("429", True, 429)) is None
    assert wait_refused(policy, Failure("429", True, 429, retry_after_s=999_999_999.0)) == (
        "the provider asks to wait 999,999,999 s (Retry-After), more than the 60 s a call "
        "waits")
    assert "wait for ever" in wait_refused(policy, Failure("429", True, 429,
                                                           retry_after_s=float("inf")))


class StatusError(Exception):
    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"status {status}")
        self.status_code = status
        self.litellm_response_headers = headers


class RateLimitError(StatusError):
    pass


class Timeout(Exception):
    pass


def test_classification() -> None:
    assert classify(RateLimitError(429, {"retry-after": "2"})) == Failure(
        "rate limited (HTTP 429): status 429", True, 429, 2.0)
    assert classify(StatusError(503)).retryable
    assert classify(StatusError(502)).retryable
    assert not classify(StatusError(401)).retryable
    assert not classify(StatusError(400)).retryable
    assert classify(Timeout("x"), 30).reason == "timed out after 30s"
    assert classify(TimeoutError()).retryable
    assert classify(MalformedResponse("no choices")).retryable
    assert not classify(ValueError("bad")).retryable


def test_backoff_grows_with_jitter_and_gives_up() -> None:
    policy = RetryPolicy(max_attempts=4, base_delay_s=1.0, max_delay_s=3.0)
    failure = Failure("HTTP 500", True, 500)
    rng = random.Random(0)
    delays = [backoff_delay(policy, failure, attempt, rng) for attempt in (1, 2, 3)]
    assert 0.5 <= delays[0] <= 1.0 and 1.0 <= delays[1] <= 2.0 and 1.5 <= delays[2] <= 3.0
    assert backoff_delay(policy, failure, 4, rng) is None
    assert backoff_delay(policy, Failure("HTTP 401", False, 401), 1, rng) is None
    told = Failure("429", True, 429, retry_after_s=7.0)
    assert 7.0 <= backoff_delay(policy, told, 1, rng) <= 8.0
    assert backoff_delay(policy, Failure("429", True, 429, retry_after_s=3600.0), 1) is None
