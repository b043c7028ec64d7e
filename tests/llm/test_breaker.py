"""The circuit breaker (``llm/breaker.py``): unit behaviour with a fake clock, then through
``complete`` / ``acomplete`` against a refusing socket and the fake server."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from pytest_summarybench.llm import Endpoints, ModelCallError, RetryPolicy, acomplete, complete
from pytest_summarybench.llm.breaker import (
    BreakerPolicy,
    CircuitBreaker,
    EndpointUnavailable,
)
from pytest_summarybench.llm.providers import litellm
from pytest_summarybench.llm.retry import Failure
from pytest_summarybench.schemas import ModelConfig
from tests.fakes.openai_server import FakeOpenAIServer

REFUSED = Failure("connection refused at http://127.0.0.1:9/v1", False, dead_endpoint=True)
UNAUTHORIZED = Failure("HTTP 401 unauthorized at http://127.0.0.1:9/v1: bad key", False, 401,
                       dead_endpoint=True)
TRANSIENT = [Failure("rate limited (HTTP 429): slow down", True, 429, 1.0),
             Failure("HTTP 503: overloaded", True, 503),
             Failure("timed out after 30s", True, 408),
             Failure("connection reset by http://127.0.0.1:9/v1", True),
             Failure("HTTP 400: bad request", False, 400)]
FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)
MESSAGES = [{"role": "user", "content": "Summarize: def f(): pass"}]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_opens_after_threshold_dead_failures_in_a_row() -> None:
    breaker = CircuitBreaker(BreakerPolicy(threshold=3), clock=Clock())
    assert [breaker.failed(REFUSED) for _ in range(3)] == [False, False, True]
    assert breaker.is_open and breaker.cause == REFUSED.reason
    with pytest.raises(EndpointUnavailable) as info:
        breaker.check("local/judge")
    assert str(info.value) == ("local/judge: connection refused at http://127.0.0.1:9/v1 "
                               "(failed 3 times in a row; calls now fail at once without "
                               "being sent)")
    assert isinstance(info.value, ModelCallError) and not info.value.retryable
    assert breaker.refused == 1


def test_the_refusal_names_the_count_that_opened_it_as_the_readme_says() -> None:
    """Issue 33: calls in flight when the breaker opened failed too, and the line said
    "failed 4 times in a row" where the README says 3."""
    breaker = CircuitBreaker(BreakerPolicy(threshold=3), clock=Clock())
    for _ in range(5):                                  # 3 open it, 2 were in flight
        breaker.failed(REFUSED)
    assert breaker.refusal is not None and "(failed 3 times in a row;" in breaker.refusal
    with pytest.raises(EndpointUnavailable, match=r"\(failed 3 times in a row;"):
        breaker.check("local/judge")


def test_a_success_resets_the_count() -> None:
    breaker = CircuitBreaker(BreakerPolicy(threshold=3), clock=Clock())
    breaker.failed(UNAUTHORIZED)
    breaker.failed(UNAUTHORIZED)
    breaker.succeeded()
    breaker.failed(UNAUTHORIZED)
    breaker.failed(UNAUTHORIZED)
    assert not breaker.is_open
    breaker.check("m")                                  # no raise


@pytest.mark.parametrize("failure", TRANSIENT, ids=lambda f: f.reason.split(":")[0])
def test_never_opens_on_rate_limits_server_errors_or_timeouts(failure: Failure) -> None:
    breaker = CircuitBreaker(BreakerPolicy(threshold=1), clock=Clock())
    for _ in range(50):
        assert not breaker.failed(failure)
    breaker.check("m")
    # Nor do they break a run of dead-endpoint failures: 429s in between are no sign of
    # life from a key the endpoint refuses.
    breaker = CircuitBreaker(BreakerPolicy(threshold=2), clock=Clock())
    breaker.failed(UNAUTHORIZED)
    breaker.failed(failure)
    assert breaker.failed(UNAUTHORIZED)


def test_an_open_breaker_lets_one_probe_through_after_a_while() -> None:
    clock = Clock()
    breaker = CircuitBreaker(BreakerPolicy(threshold=1, probe_after_s=30.0), clock=clock)
    breaker.failed(REFUSED)
    clock.now += 29.0
    with pytest.raises(EndpointUnavailable):
        breaker.check("m")
    clock.now += 1.0
    breaker.check("m")                                  # the probe
    with pytest.raises(EndpointUnavailable):            # only one at a time
        breaker.check("m")
    breaker.failed(REFUSED)                             # the probe failed: wait again
    clock.now += 29.0
    with pytest.raises(EndpointUnavailable):
        breaker.check("m")
    clock.now += 1.0
    breaker.check("m")
    breaker.succeeded()                                 # it is back
    assert not breaker.is_open
    breaker.check("m")
    breaker.check("m")


def test_a_probe_that_never_reports_does_not_keep_it_shut() -> None:
    clock = Clock()
    breaker = CircuitBreaker(BreakerPolicy(threshold=1, probe_after_s=10.0), clock=clock)
    breaker.failed(REFUSED)
    clock.now += 10.0
    breaker.check("m")                                  # a probe, then cancelled
    clock.now += 10.0
    breaker.check("m")                                  # another one


def test_threshold_must_be_positive() -> None:
    with pytest.raises(ValueError, match="threshold must be 1 or more"):
        CircuitBreaker(BreakerPolicy(threshold=0))


def test_counts_are_exact_under_threads() -> None:
    breaker = CircuitBreaker(BreakerPolicy(threshold=400), clock=Clock())
    opened: list[bool] = []
    lock = threading.Lock()

    def hammer() -> None:
        for _ in range(50):
            result = breaker.failed(REFUSED)
            with lock:
                opened.append(result)

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert opened.count(True) == 1 and breaker.is_open


# -- through the model layer ----------------------------------------------------------------
@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-breaker-test-key")
    litellm()
    return "sk-fake-breaker-test-key"


def test_a_refusing_endpoint_stops_being_called(refusing_port: int, fake_server: Any,
                                                key: str, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    base = f"http://127.0.0.1:{refusing_port}/v1"
    dead = ModelConfig(provider="local", model_name="judge-7b", api_endpoint=base)
    session = Endpoints()
    reasons = []
    for _ in range(3):
        with pytest.raises(ModelCallError) as info:
            complete(dead, MESSAGES, endpoints=session)
        assert not isinstance(info.value, EndpointUnavailable)
        reasons.append(str(info.value))
    assert reasons == [f"local/judge-7b: connection refused at {base}"] * 3
    # Refused at once: the open breaker answers before litellm is called, which a count
    # shows on any machine (a bound of 0.5 s on the 20 calls did not, on a loaded one).
    lib = litellm()
    attempts: list[str] = []

    def counting(**request: Any) -> Any:
        attempts.append(request["model"])
        return completion(**request)

    completion = lib.completion
    monkeypatch.setattr(lib, "completion", counting)
    for _ in range(20):
        with pytest.raises(EndpointUnavailable) as unavailable:
            complete(dead, MESSAGES, endpoints=session)
    assert attempts == []
    line = str(unavailable.value)
    assert "\n" not in line
    assert line.startswith(f"local/judge-7b: connection refused at {base} (failed 3 times")
    assert session.breaker(dead).refused == 20
    assert list(session.open_breakers().values()) == [
        f"connection refused at {base} (failed 3 times in a row; calls now fail at once "
        "without being sent)"]
    # Another model, elsewhere, is not affected.
    server: FakeOpenAIServer = fake_server()
    alive = ModelConfig(provider="openai", model_name="gpt-4o", api_endpoint=server.base_url)
    assert complete(alive, MESSAGES, endpoints=session).text
    # Another session (an in-process pytester run, the command line) still calls it: the
    # breaker is this session's verdict, not the process's.
    with pytest.raises(ModelCallError) as info:
        complete(dead, MESSAGES, endpoints=Endpoints())
    assert not isinstance(info.value, EndpointUnavailable)
    assert Endpoints().open_breakers() == {}


def _calls_four_at_a_time(model: ModelConfig, session: Endpoints, count: int,
                          **options: Any) -> list[ModelCallError]:
    """``count`` coroutines, 4 at a time, each one call of ``model`` that must fail; their
    errors."""

    async def run() -> list[ModelCallError]:
        gate = asyncio.Semaphore(4)

        async def one(i: int) -> ModelCallError:
            async with gate:
                try:
                    await acomplete(model, [{"role": "user", "content": f"unit {i}"}],
                                    retry_policy=FAST, endpoints=session, **options)
                except ModelCallError as exc:
                    return exc
            raise AssertionError(f"{model.id} answered")

        return await asyncio.gather(*(one(i) for i in range(count)))

    return asyncio.run(run())


def test_concurrent_calls_to_a_rejecting_endpoint_stop_after_the_threshold(
        fake_server: Any, key: str) -> None:
    """24 coroutines, 4 at a time, against an endpoint that answers 401: the breaker
    opens after the first few answers and the rest are not sent."""
    server: FakeOpenAIServer = fake_server(faults=lambda n, body: "401")
    model = ModelConfig(provider="openai", model_name="gpt-4o", api_endpoint=server.base_url)

    errors = _calls_four_at_a_time(model, Endpoints(), 24)
    assert server.chat_requests <= 3 + 3           # the threshold, plus those in flight
    unavailable = [e for e in errors if isinstance(e, EndpointUnavailable)]
    assert len(unavailable) >= 24 - 6
    assert all(f"HTTP 401 unauthorized at {server.base_url}" in str(e) for e in errors)


def test_calls_that_never_get_an_answer_open_the_breaker(fake_server: Any, key: str) -> None:
    """A provider that accepts the connection and never answers: each call gives up after
    three attempts, and three such calls in a row open the breaker, so the other calls
    fail at once (before: every call waited out its three attempts, about three minutes a
    call with the default timeoutS of 60 s, 77 minutes for 100 units 4 at a time). Counts,
    not durations: at most the three calls that opened it and the three in flight beside
    them are sent, each at most three times."""
    server: FakeOpenAIServer = fake_server(faults=lambda n, body: "timeout")
    model = ModelConfig(provider="openai", model_name="gpt-4o", api_endpoint=server.base_url)
    errors = _calls_four_at_a_time(model, Endpoints(), 16, timeout=0.5)
    assert server.chat_requests <= 6 * 3, server.chat_requests
    unavailable = [e for e in errors if isinstance(e, EndpointUnavailable)]
    assert len(unavailable) >= 16 - 6
    line = str(unavailable[0])
    assert "\n" not in line
    assert "(gave up after 3 attempts in " in line
    assert "(failed 3 times in a row; calls now fail at once without being sent)" in line


def test_transient_failures_keep_being_retried(fake_server: Any, key: str) -> None:
    """A server error at an attempt is retried and never counts towards the breaker: every
    call's first attempt gets a 503 and its second an answer."""
    server: FakeOpenAIServer = fake_server(faults=lambda n, body: "503" if n % 2 else None)
    model = ModelConfig(provider="openai", model_name="gpt-4o", api_endpoint=server.base_url)
    session = Endpoints()
    for _ in range(5):
        assert complete(model, MESSAGES, retry_policy=FAST, endpoints=session).attempts == 2
    assert server.chat_requests == 10 and not session.breaker(model).is_open


def _broken(n: int, body: dict[str, Any]) -> str | None:
    """HTTP 500 to every request for the model ``broken``; the others are answered."""
    return "500" if body.get("model") == "broken" else None


def test_calls_that_give_up_on_server_errors_open_the_breaker(fake_server: Any,
                                                              key: str) -> None:
    """A model whose server answers 500 to everything: each call is retried six times, and
    before issue 34 so was every call (10 calls: 60 requests; 100 calls of the default
    policy: 600 requests, about 41 minutes). Three calls in a row that gave up open its
    breaker: 18 requests, and the other calls fail at once with one line naming the model
    and why. Another model on the same server is called as usual."""
    server: FakeOpenAIServer = fake_server(faults=_broken)
    broken = ModelConfig(provider="openai", model_name="broken", api_endpoint=server.base_url)
    session = Endpoints()
    errors = []
    for i in range(10):
        with pytest.raises(ModelCallError) as info:
            complete(broken, [{"role": "user", "content": f"unit {i}"}], retry_policy=FAST,
                     endpoints=session)
        errors.append(info.value)
    assert server.chat_requests == 3 * 6
    assert not any(isinstance(e, EndpointUnavailable) for e in errors[:3])
    assert all(isinstance(e, EndpointUnavailable) for e in errors[3:])
    line = str(errors[-1])
    assert "\n" not in line
    assert line.startswith("openai/broken: HTTP 500: upstream failure (gave up after 6 "
                           "attempts in "), line
    assert line.endswith("(failed 3 times in a row; calls now fail at once without being "
                         "sent)"), line
    alive = ModelConfig(provider="openai", model_name="alive", api_endpoint=server.base_url)
    assert complete(alive, MESSAGES, endpoints=session).attempts == 1


def test_a_success_between_calls_that_gave_up_keeps_the_breaker_closed(
        fake_server: Any, key: str) -> None:
    """Calls that gave up count only in a row: two, an answer, two more leave it closed."""
    server: FakeOpenAIServer = fake_server(
        faults=lambda n, body: None if "unit 3" in str(body) else "500")
    model = ModelConfig(provider="openai", model_name="gpt-4o", api_endpoint=server.base_url)
    session = Endpoints()
    for i in range(1, 6):
        messages = [{"role": "user", "content": f"unit {i}"}]
        if i == 3:
            assert complete(model, messages, retry_policy=FAST, endpoints=session).text
            continue
        with pytest.raises(ModelCallError) as info:
            complete(model, messages, retry_policy=FAST, endpoints=session)
        assert not isinstance(info.value, EndpointUnavailable)
    assert server.chat_requests == 4 * 6 + 1 and not session.breaker(model).is_open


def test_calls_that_give_up_on_rate_limits_do_not_open_it(fake_server: Any,
                                                          key: str) -> None:
    """A provider that keeps answering 429 is busy, not broken: its calls keep being made."""
    server: FakeOpenAIServer = fake_server(faults=lambda n, body: "429",
                                           fault_retry_after_s=0.01)
    model = ModelConfig(provider="openai", model_name="gpt-4o", api_endpoint=server.base_url)
    policy = RetryPolicy(max_attempts=2, base_delay_s=0.01, max_delay_s=0.02)
    session = Endpoints()
    for _ in range(5):
        with pytest.raises(ModelCallError) as info:
            complete(model, MESSAGES, retry_policy=policy, endpoints=session)
        assert not isinstance(info.value, EndpointUnavailable)
    assert server.chat_requests == 10


def test_concurrent_calls_to_a_broken_server_stop_after_the_threshold(
        fake_server: Any, key: str) -> None:
    """16 coroutines, 4 at a time, against a model answering 500 to everything: at most the
    three calls that opened the breaker and the three in flight beside them are sent, each
    at most six times (before: 16 calls, 96 requests)."""
    server: FakeOpenAIServer = fake_server(faults=_broken)
    model = ModelConfig(provider="openai", model_name="broken", api_endpoint=server.base_url)
    errors = _calls_four_at_a_time(model, Endpoints(), 16)
    assert server.chat_requests <= 6 * 6, server.chat_requests
    unavailable = [e for e in errors if isinstance(e, EndpointUnavailable)]
    assert len(unavailable) >= 16 - 6
    assert all("HTTP 500: upstream failure" in str(e) for e in errors)
