"""Which failures are worth retrying, and how long to wait before the next attempt.

Rate limits (429), server errors (5xx), timeouts and dropped or reset connections are
retried with exponential backoff and jitter; a
``Retry-After`` (or ``retry-after-ms``) from the provider is honoured as the minimum
wait. Attempts that end without an answer (a timeout, a slow answer, a lost connection)
are retried at most twice, whatever their mix (``UNANSWERED_ATTEMPTS``): each can cost a
whole ``timeoutS``, and a provider that accepts connections and never answers held a call
for six of them. A dead or misconfigured endpoint (connection refused, a host name that does not
resolve, an unreachable network, a TLS certificate that does not verify, HTTP 401, 403
and 404) fails at once and is marked ``dead_endpoint``, which ``llm/breaker.py`` counts;
anything else (a bad request) fails at once too: retrying cannot help. An answer we
refuse to keep (a body that is not UTF-8, text that is not valid Unicode or is far longer
than ``max_tokens`` allows, a body over the transport's limit: ``llm/transport.py``) or
cannot read (not JSON, JSON of the wrong types or with a number of thousands of digits:
litellm calls it an HTTP 500 of its own)
is retried once: a provider that sends it twice will keep sending it, and each attempt is
paid.

litellm reports a refused connection to an OpenAI-compatible server as
``InternalServerError`` with status 500 and the text "Connection error.", and a reset
connection the same way; what happened is only in the exceptions it was raised from
(``ConnectionRefusedError``, ``socket.gaierror``, ``ConnectionResetError``), so the
classification reads the whole ``__cause__`` / ``__context__`` chain before the status.
"""

from __future__ import annotations

import asyncio
import errno
import math
import random
import re
import socket
import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from ..core.errors import RunError
from .redaction import redact, scrub
from .transport import AnswerRefused, SlowAnswer

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: Attempts that may end in a rejected answer before the call gives up.
REJECTED_ANSWER_ATTEMPTS = 2
#: Attempts that may end without an answer (a timeout, a slow answer, a lost connection)
#: before the call gives up: a provider that accepts and never answers held a call for six
#: attempts of ``timeoutS`` (6.5 minutes with the default 60 s).
UNANSWERED_ATTEMPTS = 3
#: Answers that say the endpoint, the key or the model name is wrong, not that it is busy.
DEAD_STATUS = {401: "unauthorized", 403: "forbidden", 404: "not found"}
_UNREACHABLE = {errno.ENETUNREACH: "network unreachable",
                errno.EHOSTUNREACH: "no route to host"}
_MAX_REASON = 240
_MAX_CHAIN = 16
#: Characters of an exception's text looked at (a provider may echo megabytes).
_MAX_EXCEPTION_CHARS = 8192


class MalformedResponse(RunError, ValueError):
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
    max_retry_after_s: float = 60.0
    """The longest wait a provider may ask for (``Retry-After``, ``retry-after-ms``, an
    HTTP date): a longer one ends the call at once, naming what was asked
    (``wait_refused``), and pauses nobody; a per-minute limit never needs more, and a
    provider asking for 999,999,999 s (or a date in 9999) held other calls of its model
    for minutes without a line."""


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
    dead_endpoint: bool = False
    """The endpoint refused, did not resolve or rejected the key or the model: the next
    call will fail the same way (``llm/breaker.py`` counts these)."""
    unanswered: bool = False
    """The attempt ended without an answer: it timed out, its answer was still arriving
    at the deadline, or the connection was lost (``UNANSWERED_ATTEMPTS`` bounds these)."""

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
            return _seconds(float(ms) / 1000.0)
        value = headers.get("retry-after")
    except (AttributeError, TypeError, ValueError, OverflowError):
        return None
    if value is None:
        return None
    try:
        return _seconds(float(value))
    except (ValueError, OverflowError):
        pass
    try:
        when = parsedate_to_datetime(str(value))
        return _seconds(when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError, IndexError):
        return None


def _seconds(value: float) -> float | None:
    """A wait in seconds, never negative; None for NaN (no wait was said)."""
    return None if math.isnan(value) else max(0.0, value)


def wait_refused(policy: RetryPolicy, failure: Failure) -> str | None:
    """Why the call does not wait as ``failure`` asked, when the provider asked for a
    wait longer than ``policy.max_retry_after_s``."""
    asked = failure.retry_after_s
    if asked is None or asked <= policy.max_retry_after_s:
        return None
    said = f"{asked:,.0f} s" if math.isfinite(asked) else "for ever"
    return (f"the provider asks to wait {said} (Retry-After), more than the "
            f"{policy.max_retry_after_s:g} s a call waits")


#: Library wording in exception texts that says nothing about the failure: litellm's
#: advice to its callers ("Handle with `litellm.InternalServerError`."), its echo of the
#: response object ("Received response - <APIResponse ...>, Type of response - <class
#: ...>"), its own name before its messages, and object reprs with memory addresses
#: (aiohttp's "ssl:<ssl.SSLContext object at 0x7f...>" in "Cannot connect to host").
_NOISE = (
    (re.compile(r"\.? ?Handle with `?litellm\.\w+`?\.?"), ""),
    (re.compile(r",? ?Received response - .*$"), ""),
    (re.compile(r"\b(?:litellm\.)?\w*(?:Error|Exception): LiteLLM: "), ""),
    (re.compile(r" ssl:(?:<[^<>]*>|default|None|True|False)"), ""),
    (re.compile(r"<[\w.]+ object at 0x[0-9a-fA-F]+>"), "(object)"),
)


def _message(exc: BaseException, text: str | None = None) -> str:
    """``exc``'s text (or ``text``), one line, without library wording, keys or control
    characters, at most ``_MAX_REASON`` characters."""
    text = " ".join((str(exc) if text is None else text)[:_MAX_EXCEPTION_CHARS].split()) \
        or type(exc).__name__
    # litellm prefixes its class names, sometimes twice ("litellm.X: X: ..."), and the
    # provider's ("OpenAIException - ...").
    text = re.sub(r"^(litellm\.)?(\w+Error|Timeout): (\2: )?", "", text)
    text = re.sub(r"^\w+(?:Exception|Error)(?: \w+Error)? - ", "", text)
    for pattern, replacement in _NOISE:
        text = pattern.sub(replacement, text)
    # Provider text: it may quote the key it was sent, or carry terminal escapes.
    return scrub(text, max_chars=_MAX_REASON, one_line=True)


def _undecodable(exc: BaseException) -> UnicodeDecodeError | None:
    """The UnicodeDecodeError behind ``exc``, if its body was not UTF-8 (litellm reports
    that as an HTTP 500 of its own)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen and len(seen) < _MAX_CHAIN:
        if isinstance(cause, UnicodeDecodeError):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from or during, outermost first."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < _MAX_CHAIN:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


#: What litellm raised from when it could not read a 2xx answer: a body that is not JSON,
#: JSON nested too deep for ``json``, or JSON whose types are wrong (``choices`` an object,
#: ``content`` a list).
_UNREADABLE = ("JSONDecodeError", "RecursionError", "ValidationError", "APIError",
               "ValueError")
#: Python's words for a JSON number too long to read (``sys.set_int_max_str_digits``).
_LONG_NUMBER = re.compile(r"Exceeds the limit \((\d+) digits\) for integer string "
                          r"conversion(?:: value has (\d+) digits)?")
#: litellm's words when a 2xx answer's JSON is not a chat completion at all (a list, a
#: string, ``null``, ``message: null``), raised from its own code or an AttributeError.
_UNREADABLE_TEXT = ("Empty or invalid response from LLM endpoint", "Invalid response object")
#: Where litellm pastes a traceback into its message.
_TRACEBACK = "Traceback (most recent call last)"


def _unreadable_answer(exc: BaseException) -> bool:
    """Whether ``exc`` is litellm's report of an answer it received but could not read.

    litellm calls that an HTTP 500 of its own; a server's real 500 has the HTTP client's
    exception in its chain (httpx, openai, aiohttp), a failure to read a body has a
    decoding or validation error at its root instead."""
    links = list(_chain(exc))
    if any(type(link).__module__.split(".")[0] in ("httpx", "openai", "aiohttp")
           or isinstance(link, OSError) for link in links):
        return False
    root = links[-1]
    if len(links) > 1 and type(root).__name__ in _UNREADABLE \
            and (type(root).__name__ != "APIError"
                 or type(root).__module__.split(".")[0] == "litellm"):
        return True
    text = str(exc)[:_MAX_EXCEPTION_CHARS]
    return any(marker in text for marker in _UNREADABLE_TEXT)


def _unreadable_reason(exc: BaseException) -> str:
    """What was wrong with an answer litellm could not read, in one line: its own words,
    or, where it pasted a traceback into them, what its reading raised at the root
    (pydantic's first complaint: the field, what it should be, the type it got)."""
    text = str(exc)[:_MAX_EXCEPTION_CHARS]
    long_number = _LONG_NUMBER.search(text)
    if long_number:
        digits = (f"{int(long_number.group(2)):,} digits" if long_number.group(2)
                  else "too many digits")
        return (f"the answer (HTTP 200) is not JSON we read: a number in it has {digits}, "
                f"more than the {int(long_number.group(1)):,} allowed")
    if _TRACEBACK not in text:
        return _message(exc, text)
    root = list(_chain(exc))[-1]
    errors = getattr(root, "errors", None)
    detail = None
    if type(root).__name__ == "ValidationError" and callable(errors):
        try:
            first = errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ())) or "the answer"
            detail = (f"{where}: {first.get('msg', 'invalid')} "
                      f"(got {type(first.get('input')).__name__})")
        except (IndexError, TypeError, AttributeError, KeyError):
            detail = None
    if detail is None:
        detail = f"{type(root).__name__}: {root}" if root is not exc else "unreadable"
    return _message(exc, f"the answer (HTTP 200) is not a chat completion: {detail}")


def _request_origin(exc: BaseException) -> str | None:
    """``scheme://host[:port]`` of the request that failed, from the httpx or openai
    exceptions in the chain (litellm's own carry a placeholder request). The path and
    query are left out: some providers put the key in the query. The innermost one: after
    a redirect, the openai exception holds the first request and httpx's the one that
    failed."""
    for link in reversed(list(_chain(exc))):
        if type(link).__module__.split(".")[0] not in ("httpx", "openai"):
            continue
        try:
            url = link.request.url  # type: ignore[attr-defined]
        except (AttributeError, RuntimeError):
            continue
        scheme, netloc = getattr(url, "scheme", ""), getattr(url, "netloc", b"")
        if isinstance(netloc, bytes):  # httpx: host and port, never the user info
            netloc = netloc.decode("ascii", "replace")
        if scheme and netloc and "@" not in netloc:
            return f"{scheme}://{netloc}"
    return None


def _host(where: str) -> str:
    try:
        return urlsplit(where).hostname or where
    except ValueError:
        return where


def _redirected(exc: BaseException, where: str) -> str:
    """``where``, or where a redirect from it led when the request that failed went
    elsewhere (a 302 to a closed port is refused there, not at the endpoint)."""
    origin = _request_origin(exc)
    try:
        parts = urlsplit(where)
    except ValueError:
        return where
    # httpx's origin never holds user information; the endpoint may (an older store's)
    host = parts.netloc.rpartition("@")[2]
    if origin is None or not parts.scheme or origin == f"{parts.scheme}://{host}":
        return where
    return f"{origin} (redirected from {where})"


def _transport_failure(exc: BaseException, where: str) -> Failure | None:
    """What the socket said, when a connection could not be made or was lost."""
    where = _redirected(exc, where)
    for link in _chain(exc):
        name = type(link).__name__
        if name == "TooManyRedirects":  # httpx's and aiohttp's
            return Failure(redact(f"redirect loop: {where} redirects again and again "
                                  "(check the endpoint's URL)"), False,
                           dead_endpoint=True)
        if isinstance(link, socket.gaierror) or name == "ClientConnectorDNSError":
            return Failure(redact(f"name resolution failed for host {_host(where)} "
                                  f"({getattr(link, 'strerror', None) or _message(link)})"),
                           False, dead_endpoint=True)
        if isinstance(link, ConnectionRefusedError) or (
                isinstance(link, OSError) and link.errno == errno.ECONNREFUSED):
            return Failure(redact(f"connection refused at {where}"), False,
                           dead_endpoint=True)
        if isinstance(link, OSError) and link.errno in _UNREACHABLE:
            return Failure(redact(f"{_UNREACHABLE[link.errno]}: {where}"), False,
                           dead_endpoint=True)
        if isinstance(link, ssl.SSLCertVerificationError):
            return Failure(redact(f"TLS certificate of {_host(where)} does not verify "
                                  f"({link.verify_message or _message(link)})"),
                           False, dead_endpoint=True)
        if isinstance(link, ssl.SSLError):
            # e.g. https:// to a server that speaks plain HTTP: every retry fails alike.
            # aiohttp's subclass keeps the ssl module's error under ``os_error``.
            cause = getattr(link, "os_error", link)
            why = getattr(cause, "reason", None) or _message(cause)
            return Failure(redact(f"TLS handshake with {where} failed ({why}): check "
                                  "http:// versus https:// in the endpoint"), False,
                           dead_endpoint=True)
        if isinstance(link, (ConnectionResetError, ConnectionAbortedError,
                             BrokenPipeError)):
            return Failure(redact(f"connection reset by {where}"), True, unanswered=True)
        if name in ("RemoteProtocolError", "ServerDisconnectedError"):
            return Failure(redact(f"{where} closed the connection without an answer"),
                           True, unanswered=True)
    return None


def classify(exc: BaseException, timeout_s: float | None = None,
             endpoint: str | None = None) -> Failure:
    """What kind of failure ``exc`` is (litellm and openai errors, timeouts, bodies).

    ``endpoint`` is the base URL the call went to, named in the reason of a connection
    failure (default: the origin of the failed request, when the exception tells).
    """
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    after = retry_after_seconds(_headers(exc))
    if isinstance(exc, RejectedAnswer):
        return Failure(f"rejected answer: {_message(exc)}", True, status, rejected=True)
    if isinstance(exc, MalformedResponse) or _unreadable_answer(exc):
        # The provider answered (200) with a body that cannot be used: asked once more,
        # not as a server error (six attempts, 37-50 s a call, for a body that will not
        # change).
        return Failure(f"malformed response: {_unreadable_reason(exc)}", True, None,
                       rejected=True)
    refused = next((link for link in _chain(exc) if isinstance(link, AnswerRefused)), None)
    if isinstance(refused, SlowAnswer):
        return Failure(f"slow answer: {_message(refused)}", True, None, rejected=True,
                       unanswered=True)
    if refused is not None:
        return Failure(f"rejected answer: {_message(refused)}", True, None, rejected=True)
    undecodable = _undecodable(exc)
    if undecodable is not None:
        return Failure(f"rejected answer: the response body is not valid UTF-8 "
                       f"({undecodable.reason} at byte {undecodable.start})", True, None,
                       rejected=True)
    where = endpoint or _request_origin(exc) or "the provider's endpoint"
    transport = _transport_failure(exc, where)
    if transport is not None:
        return transport
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) or "Timeout" in name:
        limit = f" after {timeout_s:g}s" if timeout_s else ""
        return Failure(f"timed out{limit}", True, status or 408, after, unanswered=True)
    if status == 429 or name == "RateLimitError":
        return Failure(f"rate limited (HTTP 429): {_message(exc)}", True, 429, after)
    if status in DEAD_STATUS:
        hint = " (unknown model or wrong endpoint)" if status == 404 else ""
        return Failure(redact(f"HTTP {status} {DEAD_STATUS[status]} at {where}{hint}: "
                              f"{_message(exc)}"), False, status, after, dead_endpoint=True)
    if "APIConnectionError" in name or isinstance(exc, ConnectionError):
        return Failure(f"connection failed: {_message(exc)}", True, status, after,
                       unanswered=True)
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
