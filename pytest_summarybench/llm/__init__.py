"""The shared model layer on litellm: one call path for every model the benchmark uses.

``complete`` / ``acomplete`` add the response cache, client-side rate limits (adaptive,
``limits.py``), retries with backoff that honour Retry-After, failing fast on a dead
endpoint (``breaker.py``), per-call timeouts and pricing to a litellm call. litellm
itself is imported lazily, on the first call.
"""

from __future__ import annotations

from .breaker import EndpointUnavailable, breaker_for
from .cache import cache_key
from .client import (
    acomplete,
    cached_completion,
    complete,
    estimate_tokens,
    messages_tokens,
    model_params,
)
from .limits import RateLimiter, limiter_for
from .pricing import call_cost, price_known, token_prices
from .providers import litellm_model_name, redact, required_env_var
from .retry import RetryPolicy
from .types import Completion, ModelCallError

__all__ = [
    "Completion", "EndpointUnavailable", "ModelCallError", "RateLimiter", "RetryPolicy",
    "acomplete", "breaker_for", "cache_key", "cached_completion", "call_cost", "complete",
    "estimate_tokens", "limiter_for",
    "litellm_model_name", "messages_tokens", "model_params", "price_known", "redact",
    "required_env_var", "token_prices",
]
