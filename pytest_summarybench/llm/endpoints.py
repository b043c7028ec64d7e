"""What a session keeps about the model endpoints it calls: one rate limiter per model
endpoint and limits (``limits.py``), one circuit breaker per endpoint (``breaker.py``) and
one litellm Router per model with deployments (``router.py``).

A rate limit belongs to the provider account and a breaker to the endpoint, so within a
session they are shared by every caller of a model (generation, judges, downstream
tasks, a hook's evaluator that passes ``ctx.endpoints`` to ``complete``). They belong to
the session, not to the process: one ``Endpoints`` is made per session (the plugin's
session state, a ``RunContext`` made outside pytest, a ``Scheduler`` given none), so two
sessions in one process (an in-process pytester run inside a test, the command line)
never share a limiter's pace or a breaker's verdict. Every method is thread-safe and
holds a lock for a dictionary look-up only.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from .breaker import DEFAULT_BREAKER_POLICY, BreakerPolicy, CircuitBreaker
from .limits import DEFAULT_PACING, Pacing, RateLimiter, endpoint_key

if TYPE_CHECKING:
    from ..schemas import ModelConfig
    from .router import RoutedModelConfig


class Endpoints:
    """One session's rate limiters, circuit breakers and Routers (see the module doc)."""

    def __init__(self, *, pacing: Pacing = DEFAULT_PACING,
                 breaker_policy: BreakerPolicy = DEFAULT_BREAKER_POLICY) -> None:
        self.pacing = pacing
        """How new rate limiters pace their requests."""
        self.breaker_policy = breaker_policy
        """When new breakers open."""
        self._lock = threading.Lock()
        self._limiters: dict[tuple[object, ...], RateLimiter] = {}
        self._breakers: dict[tuple[object, ...], CircuitBreaker] = {}
        self._routers: dict[tuple[object, ...], Any] = {}

    def limiter(self, model: ModelConfig) -> RateLimiter:
        """The rate limiter of ``model``'s endpoint and limits."""
        key = (*endpoint_key(model), model.requests_per_minute, model.tokens_per_minute)
        with self._lock:
            limiter = self._limiters.get(key)
            if limiter is None:
                limiter = self._limiters[key] = RateLimiter(
                    model.requests_per_minute, model.tokens_per_minute, pacing=self.pacing)
            return limiter

    def breaker(self, model: ModelConfig) -> CircuitBreaker:
        """The circuit breaker of ``model``'s endpoint."""
        key = endpoint_key(model)
        with self._lock:
            breaker = self._breakers.get(key)
            if breaker is None:
                breaker = self._breakers[key] = CircuitBreaker(self.breaker_policy)
            return breaker

    def router(self, model: RoutedModelConfig) -> Any:
        """The litellm Router of ``model`` (one per model and set of deployments, so that
        every caller shares its per-deployment usage counts). Raises ValueError naming a
        deployment's key variable that is not set."""
        from .router import make_router, model_list

        entries = model_list(model)
        key = (model.id, repr(entries))
        with self._lock:
            router = self._routers.get(key)
            if router is None:
                router = self._routers[key] = make_router(model, entries)
            return router

    def open_breakers(self) -> dict[tuple[object, ...], str]:
        """The endpoints whose breaker is open, with why, as a refused call says it (for
        the run's summary)."""
        with self._lock:
            breakers = list(self._breakers.items())
        return {key: why for key, breaker in breakers if (why := breaker.refusal)}
