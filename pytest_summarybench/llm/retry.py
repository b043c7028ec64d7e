"""Which failures are worth retrying, and how long to wait before the next attempt.

Rate limits (429), server errors (5xx), timeouts, dropped connections and malformed
response bodies are retried with exponential backoff and jitter; a ``Retry-After`` (or
``retry-after-ms``) from the provider is honoured as the minimum wait. Everything else
(a bad key, a bad request, an unknown model) fails at once: retrying cannot help. An
answer we refuse to keep (a body that is not UTF-8, text that is not valid Unicode or is
far longer than ``max_tokens`` allows) is retried once: a provider that sends it twice
will keep sending it, and each attempt is paid.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from .redaction import scrub

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: Attempts that may end in a rejected answer before the call gives up.
REJECTED_ANSWER_ATTEMPTS = 2
_MAX_REASON = 240
#: Characters of an exception's text looked at (a provider may echo megabytes).
_MAX_EXCEPTION_CHARS = 8192


class MalformedResponse(ValueError):
    """The provider answered 200 with a body that is not a usable completion."""


class RejectedAnswer(MalformedResponse):
    """The provider answered 200 with text we refuse to keep (see ``llm/answers.py``)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry a failing call."""

    max_attempts: int = 6
    """Attempts in total, the first included."""
    base_delay_s: float = 1.0
    """Backoff before the second attempt; doubles each time."""
    max_delay_s: float = 60.0
    """Upper bound of a computed backoff."""
    max_retry_after_s: float = 300.0
    """A Retry-After longer than this gives up instead of blocking the run."""


DEFAULT_POLICY = RetryPolicy()


@dataclass(frozen=True)
class Failure:
    """One failed attempt, classified."""

    reason: str
    """One line, no key material."""
    retryable: bool
    status: int | None = None
    retry_after_s: float | None = None
    """What the provider asked us to wait, when it said."""
    rejected: bool = False
    """The provider answered, with something we refuse to keep (retried once at most)."""

    @property
    def rate_limited(self) -> bool:
        return self.status == 429


def _headers(exc: BaseException) -> Any:
    headers = getattr(exc, "litellm_response_headers", None)
    if headers:
        return headers
    response = getattr(exc, "response", None)
    return getattr(response, "headers", None)


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        value = headers.get("retry-after")
    except (AttributeError, TypeError, ValueError):
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _message(exc: BaseException) -> str:
    text = " ".join(str(exc)[:_MAX_EXCEPTION_CHARS].split()) or type(exc).__name__
    # litellm prefixes its class names, sometimes twice ("litellm.X: X: ...").
    text = re.sub(r"^(litellm\.)?(\w+Error|Timeout): (\2: )?", "", text)
    # Provider text: it may quote the key it was sent, or carry terminal escapes.
    return scrub(text, max_chars=_MAX_REASON, one_line=True)


def _undecodable(exc: BaseException) -> UnicodeDecodeError | None:
    """The UnicodeDecodeError behind ``exc``, if its body was not UTF-8 (litellm reports
    that as an HTTP 500 of its own)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen and len(seen) < 16:
        if isinstance(cause, UnicodeDecodeError):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def classify(exc: BaseException, timeout_s: float | None = None) -> Failure:
    """What kind of failure ``exc`` is (litellm and openai errors, timeouts, bodies)."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    after = retry_after_seconds(_headers(exc))
    if isinstance(exc, RejectedAnswer):
        return Failure(f"rejected answer: {_message(exc)}", True, status, rejected=True)
    if isinstance(exc, MalformedResponse):
        return Failure(f"malformed response: {_message(exc)}", True, status)
    undecodable = _undecodable(exc)
    if undecodable is not None:
        return Failure(f"rejected answer: the response body is not valid UTF-8 "
                       f"({undecodable.reason} at byte {undecodable.start})", True, None,
                       rejected=True)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) or "Timeout" in name:
        limit = f" after {timeout_s:g}s" if timeout_s else ""
        return Failure(f"timed out{limit}", True, status or 408, after)
    if status == 429 or name == "RateLimitError":
        return Failure(f"rate limited (HTTP 429): {_message(exc)}", True, 429, after)
    if "APIConnectionError" in name or isinstance(exc, ConnectionError):
        return Failure(f"connection failed: {_message(exc)}", True, status, after)
    if status is not None:
        retryable = status in RETRYABLE_STATUS or status >= 500
        return Failure(f"HTTP {status}: {_message(exc)}", retryable, status, after)
    if name in ("InternalServerError", "ServiceUnavailableError", "BadGatewayError"):
        return Failure(f"server error: {_message(exc)}", True, status, after)
    return Failure(f"{name}: {_message(exc)}", False, status, after)


def backoff_delay(policy: RetryPolicy, failure: Failure, attempt: int,
                  rng: random.Random | None = None) -> float | None:
    """Seconds to wait before attempt ``attempt + 1``, or None to give up."""
    if not failure.retryable or attempt >= policy.max_attempts:
        return None
    rng = rng or random.Random()
    exp = min(policy.max_delay_s, policy.base_delay_s * 2 ** (attempt - 1))
    delay = exp / 2 + rng.uniform(0, exp / 2)  # "equal jitter": spread, never near zero
    if failure.retry_after_s is not None:
        if failure.retry_after_s > policy.max_retry_after_s:
            return None
        # Honour the provider's wait; a little jitter stops waiters from arriving together.
        delay = failure.retry_after_s + rng.uniform(0, min(1.0, 0.1 + failure.retry_after_s / 10))
    return delay
