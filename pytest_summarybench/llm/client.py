"""``complete`` and ``acomplete``: one model call with cache, rate limit, retries, timeout.

Every caller (generation, judges, contrastive matching, downstream tasks) goes through
here, so they all get the same behaviour: a cache hit makes no call; an identical request
already in flight (in this process or another sharing the store) is waited for rather
than made again (``llm/inflight.py``); otherwise the call waits for its slot under the
model's rate limits, is retried on rate limits, server errors, timeouts and malformed
bodies (honouring Retry-After; at most three attempts without an answer and two with
an unusable one, ``llm/retry.py``), its answer is checked (``llm/answers.py``), priced from
the price table or the model's override, and cached the moment it succeeds. A dead
endpoint (refused, unknown host, 401/403/404) is not retried, and after a few in a row
(or a few calls in a row that each gave up on server errors or without an answer) the
model's calls fail without being sent (``llm/breaker.py``). The limiters and breakers
are the session's (``llm/endpoints.py``): a caller passes its session's ``Endpoints``
(``ctx.endpoints``); a call given none has limiters and breakers of its own. ``complete``
is synchronous (litellm's sync client; safe from worker threads); ``acomplete`` is the
asyncio twin. litellm's own retries are switched off so that attempts are counted here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from typing import Any

from ..schemas import ModelConfig
from ..store import Store
from .answers import answer_problem
from .cache import cache_get, cache_key, cache_put
from .endpoints import Endpoints
from .inflight import asingle_flight, single_flight
from .limits import RateLimiter, Slot
from .pricing import call_cost
from .providers import (
    LITELLM_PREFIX,
    connection_kwargs,
    endpoint,
    litellm,
    litellm_model_name,
)
from .redaction import neutralise, redact
from .retry import (
    DEFAULT_POLICY,
    REJECTED_ANSWER_ATTEMPTS,
    UNANSWERED_ATTEMPTS,
    Failure,
    MalformedResponse,
    RejectedAnswer,
    RetryPolicy,
    backoff_delay,
    classify,
    wait_refused,
)
from .router import RoutedModelConfig, routed_request
from .types import Completion, ModelCallError

#: Parameter values that are the providers' defaults: recorded and keyed, not sent (some
#: providers refuse e.g. ``top_p`` together with ``temperature``).
_NEUTRAL = {"top_p": 1.0, "frequency_penalty": 0.0, "presence_penalty": 0.0}
#: Token counts a provider may report; anything else is estimated instead.
_MAX_REPORTED_TOKENS = 10**9
_MAX_VERSION_CHARS = 200


def model_params(model: ModelConfig) -> dict[str, Any]:
    """The sampling parameters of docs/methods.md#summary-generation as configured for ``model``."""
    return {"temperature": model.temperature, "max_tokens": model.max_tokens,
            "top_p": model.top_p, "frequency_penalty": model.frequency_penalty,
            "presence_penalty": model.presence_penalty}


def estimate_tokens(text: str) -> int:
    """A rough token count (four characters a token) for budgets and missing usage."""
    return max(1, round(len(text) / 4))


def messages_tokens(messages: list[dict[str, str]]) -> int:
    return sum(estimate_tokens(m.get("content", "")) + 4 for m in messages)


def _for_runtime(model: ModelConfig, response_format: dict) -> dict:
    """``response_format`` in the form ``model``'s runtime takes: llama-cpp-python's server
    has no ``json_schema`` type and reads the schema from its ``json_object`` type."""
    from .local import is_gguf_model, llama_cpp_response_format

    schema = (response_format.get("json_schema") or {}).get("schema")
    if response_format.get("type") == "json_schema" and schema and is_gguf_model(model):
        return llama_cpp_response_format(schema)
    return response_format


#: How long a call refused by a local GGUF server waits for the server's supervisor to
#: record why the server ended (and exit) before it reports the refusal alone. The
#: supervisor does so a moment after the server's end when the machine is quiet; with two
#: busy loops and a load average of 25 it took more than the 1 s this once was, and the
#: call said "connection refused" instead of "stopped: over the memory limit". The wait
#: ends as soon as the record is there, so the bound costs only a refusal with no record
#: coming (rare: a running server does not refuse).
SERVER_RECORD_WAIT_S = 15.0
#: Seconds past ``timeoutS`` at which an asyncio attempt is cancelled, whatever it waits on.
BACKSTOP_GRACE_S = 2.0


class _Call:
    """The state of one logical call across its attempts."""

    def __init__(self, model: ModelConfig, messages: list[dict[str, str]], *,
                 timeout: float | None, response_format: dict | None, cache: Store | None,
                 cache_tag: str, retry_policy: RetryPolicy | None,
                 params: dict[str, Any], session: str = "",
                 endpoints: Endpoints | None = None) -> None:
        if model.provider == "builtin":
            raise ModelCallError(model.id, "built-in summarizers are not callable models")
        self.model = model
        self.messages = messages
        self.params = {**model_params(model), **params}
        if response_format is not None:
            self.params["response_format"] = _for_runtime(model, response_format)
        self.timeout_s = timeout if timeout is not None else model.timeout_s
        self.cache = cache
        self.session = session
        """The session reading the cache: the answers it could not use are still its own
        (``llm/cache.py``)."""
        self.tag = cache_tag
        self.key = cache_key(model, messages, self.params, cache_tag, endpoint(model))
        self.policy = retry_policy or DEFAULT_POLICY
        self._endpoints = endpoints
        self.attempt = 0
        self.rejected = 0
        """Attempts whose answer was refused (``RejectedAnswer``)."""
        self.unanswered = 0
        """Attempts that ended without an answer (timeouts, slow answers, lost
        connections)."""
        self.started: float | None = None
        """When the first attempt started (``time.monotonic()``)."""
        self.reserved = messages_tokens(messages) + int(self.params.get("max_tokens") or 0)
        self._rng = random.Random()
        self._limiter: RateLimiter | None = None
        self.slot: Slot | None = None

    @property
    def endpoints(self) -> Endpoints:
        """The session's limiters, breakers and Routers; a call given none has its own
        (made when it first needs one: a cache look-up needs none)."""
        if self._endpoints is None:
            self._endpoints = Endpoints()
        return self._endpoints

    def cached(self) -> Completion | None:
        if self.cache is None:
            return None
        return cache_get(self.cache, self.key, max_tokens=self.params.get("max_tokens"),
                         session=self.session)

    def request(self) -> dict[str, Any]:
        """The litellm keyword arguments (raises ModelCallError for a missing key)."""
        sent = {k: v for k, v in self.params.items() if _NEUTRAL.get(k, object()) != v}
        if isinstance(self.model, RoutedModelConfig):
            return routed_request(self.model, self.messages, sent, self.timeout_s)
        try:
            connection = connection_kwargs(self.model)
        except ValueError as exc:
            raise ModelCallError(self.model.id, str(exc)) from None
        return {"model": litellm_model_name(self.model), "messages": self.messages,
                "timeout": self.timeout_s, "max_retries": 0, "num_retries": 0,
                **sent, **connection}

    def bounded(self, request: dict[str, Any], *, asynchronous: bool) -> dict[str, Any]:
        """``request`` with the bounded HTTP client its provider reads through, when it
        takes one per call (``llm/transport.py``)."""
        from .transport import call_client

        return {**request, **call_client(LITELLM_PREFIX[self.model.provider],
                                         asynchronous=asynchronous)}

    def client(self) -> Any:
        """What ``completion`` / ``acompletion`` are called on: litellm itself, or the
        model's Router when it has several deployments (``llm/router.py``)."""
        if isinstance(self.model, RoutedModelConfig):
            try:
                return self.endpoints.router(self.model)
            except ValueError as exc:
                raise ModelCallError(self.model.id, str(exc)) from None
        return litellm()

    def before_attempt(self) -> RateLimiter:
        """Start an attempt: the model's rate limiter to acquire a slot from. Raises
        ``EndpointUnavailable`` at once when the endpoint's breaker is open."""
        self.attempt += 1
        if self.started is None:
            self.started = time.monotonic()
        routed = isinstance(self.model, RoutedModelConfig)
        if not routed:  # the Router cools down a failing deployment by itself
            self.endpoints.breaker(self.model).check(self.model.id)
        if self._limiter is None:
            self._limiter = self.endpoints.limiter(self.model)
        return self._limiter

    def after_failure(self, exc: BaseException) -> float:
        """Seconds to wait before retrying; raises ModelCallError when giving up."""
        routed = isinstance(self.model, RoutedModelConfig)
        failure = classify(exc, self.timeout_s, None if routed else endpoint(self.model))
        refused = wait_refused(self.policy, failure)
        if failure.rate_limited and self._limiter is not None:
            # A wait over the cap pauses nobody: this call ends, and the model's other
            # calls go on (each ends alike if the provider keeps asking).
            self._limiter.rate_limited(self.slot, None if refused else failure.retry_after_s)
        if routed and failure.dead_endpoint and failure.status is None:
            # One deployment is unreachable: the retry goes to another one.
            failure = dataclasses.replace(failure, retryable=True, dead_endpoint=False)
        elif not routed:
            self.endpoints.breaker(self.model).failed(failure)
        delay = backoff_delay(self.policy, failure, self.attempt, self._rng)
        self.rejected += failure.rejected
        self.unanswered += failure.unanswered
        if failure.rejected and self.rejected >= REJECTED_ANSWER_ATTEMPTS:
            delay = None
        if failure.unanswered and self.unanswered >= UNANSWERED_ATTEMPTS:
            delay = None
        if delay is None:
            reason = failure.reason
            if refused:
                reason += f": {refused}"
            if failure.retryable:
                reason += f" (gave up after {self.attempt} attempts in {self._spent()})"
            if failure.dead_endpoint:
                reason = self._server_death() or reason
            elif _counts_as_dead(failure) and not routed:
                # A whole call that failed for good counts towards the breaker as a dead
                # endpoint's attempt does: three such calls in a row with no success
                # between and the model's other calls fail at once instead of each
                # waiting out its attempts (six for a server error, up to 31 s of
                # backoff each, for every call of a model whose server is broken).
                self.endpoints.breaker(self.model).failed(
                    dataclasses.replace(failure, reason=reason, dead_endpoint=True))
            raise ModelCallError(self.model.id, reason, retryable=failure.retryable,
                                 status=failure.status) from None
        return delay

    def _spent(self) -> str:
        """The time since the first attempt started, for a reason: ``0.4 s``, ``187 s``."""
        seconds = time.monotonic() - (self.started or time.monotonic())
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"

    def _server_death(self, wait_s: float = SERVER_RECORD_WAIT_S) -> str | None:
        """For a model this process serves itself (GGUF weights), how its server ended,
        when that is why the endpoint refuses: its supervisor records it and exits, and the
        wait ends as soon as it has (``SERVER_RECORD_WAIT_S`` bounds it)."""
        from .local import is_gguf_model

        if self.model.provider != "local" or endpoint(self.model) is not None \
                or not is_gguf_model(self.model):
            return None
        deadline = time.monotonic() + wait_s
        while True:
            try:
                connection_kwargs(self.model)
            except (ModelCallError, ValueError) as exc:
                return getattr(exc, "reason", None) or str(exc)
            if time.monotonic() > deadline:
                return None
            time.sleep(0.1)

    def parse(self, response: Any, latency_ms: float) -> Completion:
        """A Completion from litellm's response; MalformedResponse when unusable."""
        try:
            message = response.choices[0].message
        except (AttributeError, IndexError, TypeError):
            raise MalformedResponse("no choices in the response") from None
        text = getattr(message, "content", None)
        if text is not None and not isinstance(text, str):
            raise MalformedResponse(f"content is {type(text).__name__}, not text")
        text = (text or "").strip()
        problem = answer_problem(text, self.params.get("max_tokens"))
        if problem is not None:
            raise RejectedAnswer(problem)
        # A provider may echo what it was sent, keys included: the answer is cached,
        # stored as a summary and shown, so our secrets' values are masked in it first.
        text = redact(text, shapes=False)
        usage = getattr(response, "usage", None)
        inp = _tokens(getattr(usage, "prompt_tokens", None))
        out = _tokens(getattr(usage, "completion_tokens", None))
        inp = inp if inp is not None else messages_tokens(self.messages)
        out = out if out is not None else estimate_tokens(text)
        # The provider names the version: its text, so bounded and made printable.
        version = neutralise(str(getattr(response, "model", "") or "")[:_MAX_VERSION_CHARS],
                             one_line=True)
        return Completion(text=text, input_tokens=inp, output_tokens=out,
                          latency_ms=round(latency_ms, 1),
                          cost=call_cost(self.model, inp, out),
                          model_version=version, attempts=self.attempt)

    def done(self, completion: Completion) -> Completion:
        if self._limiter is not None:
            self._limiter.succeeded(self.slot, completion.input_tokens
                                    + completion.output_tokens)
        if not isinstance(self.model, RoutedModelConfig):
            self.endpoints.breaker(self.model).succeeded()
        if self.cache is not None:
            cache_put(self.cache, self.key, self.model.id, self.tag, completion)
        return completion


def _counts_as_dead(failure: Failure) -> bool:
    """Whether a call that gave up on ``failure`` counts towards its model's breaker: it
    got no answer, or a server error (5xx, 408...) at every attempt. A rate limit does
    not (the endpoint is busy, not broken), nor an answer refused for its content (too
    long for ``max_tokens``: another prompt may be answered well)."""
    if failure.unanswered:
        return True
    return failure.retryable and not failure.rate_limited and not failure.rejected


def _tokens(value: object) -> int | None:
    """A token count the provider reported, if it is a plausible one."""
    if isinstance(value, int) and not isinstance(value, bool) \
            and 0 <= value <= _MAX_REPORTED_TOKENS:
        return value
    return None


def cached_completion(model: ModelConfig, messages: list[dict[str, str]], *, cache: Store,
                      cache_tag: str = "", response_format: dict | None = None,
                      session: str = "", **params: Any) -> Completion | None:
    """The cached answer to this request, without calling anything (None on a miss; an
    answer a session other than ``session`` could not use is a miss)."""
    return _Call(model, messages, timeout=None, response_format=response_format, cache=cache,
                 cache_tag=cache_tag, retry_policy=None, params=params,
                 session=session).cached()


def request_key(model: ModelConfig, messages: list[dict[str, str]], *,
                cache_tag: str = "", response_format: dict | None = None,
                **params: Any) -> str:
    """The response cache's key of this request (what ``complete`` would look up)."""
    return _Call(model, messages, timeout=None, response_format=response_format, cache=None,
                 cache_tag=cache_tag, retry_policy=None, params=params).key


def complete(model: ModelConfig, messages: list[dict[str, str]], *,
             timeout: float | None = None, response_format: dict | None = None,
             cache: Store | None = None, cache_tag: str = "",
             retry_policy: RetryPolicy | None = None, session: str = "",
             endpoints: Endpoints | None = None, **params: Any) -> Completion:
    """Call ``model`` with ``messages`` and return its completion (see the module doc).

    ``params`` override the model's sampling parameters (``temperature=0`` for a judge).
    ``session`` is the session token of the caller: a cached answer that another session
    could not use is asked again (``llm/cache.py``). ``endpoints`` are the session's rate
    limiters and breakers (``ctx.endpoints``; none: this call's own). Raises
    ``ModelCallError`` when the call fails for good.
    """
    call = _Call(model, messages, timeout=timeout, response_format=response_format,
                 cache=cache, cache_tag=cache_tag, retry_policy=retry_policy, params=params,
                 session=session, endpoints=endpoints)
    if call.cache is None:
        return _attempts(call)
    # a cache hit first, then one caller at a time for this request
    return single_flight(call.cache, call.key, lambda: _attempts(call), call.cached)


def _attempts(call: _Call) -> Completion:
    """Make ``call``, retrying as its policy says; cache and return the completion."""
    lib = call.client()
    while True:
        # per attempt: a local GGUF server that died fails the retry with how it ended
        request = call.bounded(call.request(), asynchronous=False)
        call.slot = call.before_attempt().acquire(call.reserved)
        started = time.perf_counter()
        try:
            response = lib.completion(**request)
            completion = call.parse(response, (time.perf_counter() - started) * 1000)
        except Exception as exc:  # classified: retried or raised as ModelCallError
            time.sleep(call.after_failure(exc))
            continue
        return call.done(completion)


async def acomplete(model: ModelConfig, messages: list[dict[str, str]], *,
                    timeout: float | None = None, response_format: dict | None = None,
                    cache: Store | None = None, cache_tag: str = "",
                    retry_policy: RetryPolicy | None = None, session: str = "",
                    endpoints: Endpoints | None = None, **params: Any) -> Completion:
    """The asyncio twin of ``complete``, with the same arguments and behaviour."""
    call = _Call(model, messages, timeout=timeout, response_format=response_format,
                 cache=cache, cache_tag=cache_tag, retry_policy=retry_policy, params=params,
                 session=session, endpoints=endpoints)
    if call.cache is None:
        return await _aattempts(call)
    return await asingle_flight(call.cache, call.key, lambda: _aattempts(call), call.cached)


async def _aattempts(call: _Call) -> Completion:
    """The asyncio twin of ``_attempts``."""
    lib = call.client()
    # The transport ends a body still arriving timeoutS after the request was sent
    # (``llm/transport.py``); this bound ends the attempt a little later whatever hangs
    # (a server that never sends its headers, a hung client).
    backstop = call.timeout_s + BACKSTOP_GRACE_S
    while True:
        request = call.bounded(call.request(), asynchronous=True)  # per attempt
        call.slot = await call.before_attempt().aacquire(call.reserved)
        started = time.perf_counter()
        try:
            response = await asyncio.wait_for(lib.acompletion(**request), backstop)
            completion = call.parse(response, (time.perf_counter() - started) * 1000)
        except Exception as exc:  # classified: retried or raised as ModelCallError
            await asyncio.sleep(call.after_failure(exc))
            continue
        return call.done(completion)
