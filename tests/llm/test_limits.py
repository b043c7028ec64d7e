"""Adaptive pacing (``llm/limits.py``) with a fake clock, then from threads and asyncio."""

from __future__ import annotations

import asyncio
import heapq
import threading
import time

import pytest

from pytest_summarybench.llm.endpoints import Endpoints
from pytest_summarybench.llm.limits import (
    EXACT_PACING,
    Pacing,
    RateLimiter,
    Slot,
    endpoint_key,
)
from pytest_summarybench.schemas import ModelConfig


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def send(limiter: RateLimiter, clock: Clock) -> Slot:
    """Book, wait on the fake clock until admitted, and return the slot."""
    clock.now += limiter.reserve()
    while (wait := limiter.admit()) > 0:
        clock.now += wait
    return Slot(clock.now)


def test_paces_below_the_limit_from_the_start() -> None:
    clock = Clock()
    limiter = RateLimiter(requests_per_minute=1200, clock=clock)    # 20 per second
    assert limiter.rate == pytest.approx(19.0)
    times = [send(limiter, clock).sent_at for _ in range(40)]
    gaps = {round(b - a, 9) for a, b in zip(times, times[1:], strict=False)}
    assert gaps == {round(1 / 19, 9)}
    # Any one-second window holds at most 20 of them (the provider's strict window).
    assert max(sum(t <= s < t + 1.0 for s in times) for t in times) <= 20


def test_a_late_send_does_not_make_the_following_ones_arrive_in_a_clump() -> None:
    """Callers book their slots, then one wakes up 0.3 s late (a busy event loop): the
    ones after it, on time, would leave less than a second after it and meet a full
    window at the provider. The check of the actual send times holds them."""
    clock = Clock()
    limiter = RateLimiter(requests_per_minute=600, clock=clock)     # 10 per second
    wakes = [(100.0 + limiter.reserve() + (0.3 if i == 2 else 0.0), i) for i in range(40)]
    heapq.heapify(wakes)
    times = []
    while wakes:
        clock.now, i = heapq.heappop(wakes)
        wait = limiter.admit()
        if wait > 0:
            heapq.heappush(wakes, (clock.now + wait, i))
        else:
            times.append(clock.now)
    assert len(times) == 40
    span = 1.0 / 0.95
    assert all(times[i + 10] - times[i] >= span - 1e-9 for i in range(30))
    # Without the check (exact pacing), the provider would have seen 11 in a second.
    clock = Clock()
    exact = RateLimiter(requests_per_minute=600, clock=clock, pacing=EXACT_PACING)
    booked = sorted(100.0 + exact.reserve() + (0.3 if i == 2 else 0.0) for i in range(40))
    assert any(booked[i + 10] - booked[i] < 1.0 for i in range(30))


def test_429_slows_down_once_per_congestion_event_and_recovers_gradually() -> None:
    clock = Clock()
    pacing = Pacing(decrease=0.8, recovery_s=4.0)
    limiter = RateLimiter(requests_per_minute=600, clock=clock, pacing=pacing)
    in_flight = [send(limiter, clock) for _ in range(5)]
    limiter.rate_limited(in_flight[0], retry_after_s=None)
    assert limiter.rate == pytest.approx(9.5 * 0.8)
    for slot in in_flight[1:]:       # sent before the slow-down: the same event
        limiter.rate_limited(slot)
    assert limiter.rate == pytest.approx(9.5 * 0.8)
    assert limiter.rate_limits == 5
    later = send(limiter, clock)     # sent after it: a new event
    limiter.rate_limited(later)
    assert limiter.rate == pytest.approx(9.5 * 0.64)
    # Good answers climb back, (1 - decrease) of the top pace per recovery_s: from 0.64
    # to 1 in 1.8 recovery periods; and never above the starting pace.
    started = clock.now
    while limiter.rate is not None and limiter.rate < 9.5 - 1e-9:
        limiter.succeeded(send(limiter, clock))
    assert clock.now - started == pytest.approx(1.8 * 4.0, rel=0.05)
    for _ in range(100):
        limiter.succeeded(send(limiter, clock))
    assert limiter.rate == pytest.approx(9.5)


@pytest.mark.parametrize(("retry_after_s", "factor"), [
    (None, 0.9), (1.0, 0.9), (30.0, 0.9), (0.5, 0.95), (0.05, 0.995), (0.0, 1.0)])
def test_a_short_retry_after_slows_down_less(retry_after_s: float | None,
                                             factor: float) -> None:
    """"Room again in 50 ms" means a request arrived a little early, not a pace above
    the limit: the pace drops in proportion to the wait asked for, over one window."""
    clock = Clock()
    limiter = RateLimiter(requests_per_minute=600, clock=clock)
    limiter.rate_limited(send(limiter, clock), retry_after_s)
    assert limiter.rate == pytest.approx(9.5 * factor)


def test_never_below_the_floor() -> None:
    clock = Clock()
    limiter = RateLimiter(requests_per_minute=600, clock=clock,
                          pacing=Pacing(min_fraction=0.2))
    for _ in range(50):
        limiter.rate_limited(send(limiter, clock))
    assert limiter.rate == pytest.approx(2.0)


def test_retry_after_holds_callers_that_already_have_a_slot_and_respaces_them() -> None:
    clock = Clock()
    limiter = RateLimiter(requests_per_minute=600, clock=clock)
    waits = [limiter.reserve() for _ in range(4)]       # four callers sleeping
    first = Slot(clock.now)
    assert limiter.admit() == 0.0
    limiter.rate_limited(first, retry_after_s=2.0)      # the first one's answer
    resumed = []
    for wait in waits[1:]:
        clock.now = 100.0 + wait
        extra = limiter.admit()
        assert extra > 0                                 # booked before the pause: held
        resumed.append(clock.now + extra)
    assert min(resumed) >= 102.0
    gaps = [b - a for a, b in zip(resumed, resumed[1:], strict=False)]
    assert min(gaps) == pytest.approx(1 / (9.5 * 0.9))  # evenly, at the slower pace
    # New callers wait for the pause too.
    clock.now = 100.5
    assert limiter.reserve() >= 1.5


def test_without_a_configured_limit_429s_estimate_the_limit() -> None:
    """Unpaced, 16 requests leave at once; the provider takes 10 a second and refuses 6.
    The first 429 starts an estimate, each further one of the same burst lowers it: the
    pace ends below the 10 accepted, then climbs back to 95% of them and, since six
    refused requests show a limit, past it only slowly."""
    clock = Clock()
    limiter = RateLimiter(clock=clock)
    assert limiter.rate is None and limiter.reserve(10**6) == 0.0
    burst = [send(limiter, clock) for _ in range(16)]
    limiter.rate_limited(burst[10], retry_after_s=1.0)
    assert limiter.rate == pytest.approx(15 * 0.95 * 0.9)
    for slot in burst[11:]:
        limiter.rate_limited(slot, retry_after_s=1.0)
    assert limiter.rate == pytest.approx(10 * 0.95 * 0.9)
    clock.now += 1.0                                    # the pause
    started = clock.now
    while (limiter.rate or 0) < 9.5 - 1e-9:
        limiter.succeeded(send(limiter, clock))
    assert clock.now - started == pytest.approx(0.95 / (10 * 0.1 / 3.0), rel=0.1)
    started = clock.now
    while (limiter.rate or 0) < 10.0:
        limiter.succeeded(send(limiter, clock))
    assert clock.now - started > 4 * 3.0               # probing: ten times slower


def test_a_transient_429_does_not_hold_an_unlimited_run_at_its_pace() -> None:
    """A new user's pass: one 429 (Retry-After 1 s) on the third request of a run, no
    configured limit and no real one; that model then ran at 3 requests a second for the
    rest of the run (18 s) where the other ran at 20. Now the pace is back above 20 a
    second after about nine seconds of good answers: three back to the estimate, six of
    probing at x1.5 a window."""
    clock = Clock()
    limiter = RateLimiter(clock=clock)
    first = [send(limiter, clock) for _ in range(3)]
    limiter.rate_limited(first[2], retry_after_s=1.0)
    assert limiter.rate is not None and limiter.rate < 3
    clock.now += 1.0
    started = clock.now
    while (limiter.rate or 0) < 20.0:
        limiter.succeeded(send(limiter, clock))
    assert clock.now - started < 10.0
    # A limit shows itself (a second congestion event): probing slows down.
    burst = [send(limiter, clock) for _ in range(int(limiter.rate or 0) + 5)]
    for slot in burst[-5:]:
        limiter.rate_limited(slot, retry_after_s=1.0)
    clock.now += 1.0
    top = 0.95 * (len(burst) - 5)
    while (limiter.rate or 0) < top - 1e-9:
        limiter.succeeded(send(limiter, clock))
    started = clock.now
    while (limiter.rate or 0) < top * 1.05:
        limiter.succeeded(send(limiter, clock))
    assert clock.now - started > 4 * 3.0
    slow = RateLimiter(clock=clock, pacing=Pacing(first_probe=None))
    first = [send(slow, clock) for _ in range(3)]
    slow.rate_limited(first[2], retry_after_s=1.0)
    clock.now += 1.0
    started = clock.now
    while clock.now - started < 10.0:
        slow.succeeded(send(slow, clock))
    assert (slow.rate or 0) < 3                        # before: still near the 429's pace


def test_exact_pacing_is_the_old_behaviour() -> None:
    clock = Clock()
    limiter = RateLimiter(requests_per_minute=600, clock=clock, pacing=EXACT_PACING)
    assert [limiter.reserve() for _ in range(3)] == pytest.approx([0.0, 0.1, 0.2])
    limiter.rate_limited(Slot(clock.now), retry_after_s=1.0)
    assert limiter.rate == pytest.approx(10.0)          # not adaptive
    assert limiter.admit() == 0.0                       # no re-slotting after a pause
    assert limiter.reserve() == pytest.approx(1.0)


def test_tokens_per_minute_still_apply() -> None:
    clock = Clock()
    limiter = RateLimiter(tokens_per_minute=6000, clock=clock)
    assert limiter.reserve(5000) == 0.0
    assert limiter.reserve(2000) == pytest.approx(10.0)
    limiter.succeeded(Slot(clock.now, 5000), used_tokens=1000)
    assert limiter.reserve(1000) == pytest.approx(0.0)


def test_invalid_pacing_is_refused() -> None:
    with pytest.raises(ValueError, match="invalid pacing"):
        Pacing(headroom=1.2)
    with pytest.raises(ValueError, match="invalid pacing"):
        Pacing(decrease=1.0)


def test_threads_and_coroutines_share_one_pace() -> None:
    """Four threads and four coroutines of one event loop take slots from one limiter:
    together they keep its pace and its window."""
    model = ModelConfig(provider="openai", model_name="gpt-4o",
                        api_endpoint="http://127.0.0.1:9/v1", requests_per_minute=60 * 40)
    endpoints = Endpoints()
    limiter = endpoints.limiter(model)
    assert endpoints.limiter(model.model_copy()) is limiter
    assert endpoint_key(model) == ("openai", "gpt-4o", "http://127.0.0.1:9/v1")
    sent: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(6):
            slot = limiter.acquire()
            with lock:
                sent.append(slot.sent_at)
            limiter.succeeded(slot)

    async def coroutines() -> None:
        async def one() -> None:
            for _ in range(6):
                slot = await limiter.aacquire()
                with lock:
                    sent.append(slot.sent_at)
                limiter.succeeded(slot)
        await asyncio.gather(*(one() for _ in range(4)))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    threads.append(threading.Thread(target=lambda: asyncio.run(coroutines())))
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    elapsed = time.monotonic() - started
    assert len(sent) == 48 and limiter.sent == 48
    assert elapsed >= 47 / 38.0 - 0.05                  # no faster than the pace
    sent.sort()
    assert all(b - a >= 1 / 0.95 - 1e-9 for a, b in zip(sent, sent[40:], strict=False))


def test_each_session_has_its_own_limiters() -> None:
    """Two sessions in one process (an in-process pytester run inside a test, the command
    line) pace separately: a limiter is the session's, not the process's."""
    model = ModelConfig(provider="openai", model_name="gpt-4o",
                        api_endpoint="http://127.0.0.1:9/v1", requests_per_minute=60)
    first, second = Endpoints(pacing=EXACT_PACING), Endpoints()
    assert first.limiter(model) is not second.limiter(model)
    assert first.limiter(model).pacing == EXACT_PACING
    assert second.limiter(model).pacing != EXACT_PACING
    first.limiter(model).acquire()  # the first session's one slot this second
    started = time.monotonic()
    second.limiter(model).acquire()  # is not the second session's
    # A shared limiter would hold this acquire for a whole second (60 per minute); a
    # bound just under it holds on a loaded machine, where a thread waits for a core.
    assert time.monotonic() - started < 0.9
