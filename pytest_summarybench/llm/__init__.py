"""The shared model layer on litellm: one call path for every model the benchmark uses.

``complete`` / ``acomplete`` add the response cache, in-flight de-duplication, client-side
rate limits (adaptive, ``limits.py``), retries with backoff that honour Retry-After,
failing fast on a dead endpoint (``breaker.py``), per-call timeouts, checks of the answer
and pricing to a litellm call; the limiters and breakers are a session's ``Endpoints``.
litellm itself is imported lazily, on the first call. ``ModelRequest`` describes one call
before it is made (what the session's scheduler runs), ``response_format`` what to ask for
when the answer must be JSON, ``endpoint`` / ``api_key`` where a model is reached and with
which key. ``scrub`` / ``redact`` are the one place text is made safe to write (secrets
masked by value, control characters neutralised), ``extract_json_object`` the safe way to
read JSON out of an answer.
"""

from __future__ import annotations

from .answers import max_answer_chars
from .breaker import EndpointUnavailable
from .cache import cache_key
from .client import (
    acomplete,
    cached_completion,
    complete,
    estimate_tokens,
    messages_tokens,
    model_params,
)
from .endpoints import Endpoints
from .inflight import asingle_flight, single_flight
from .json_answer import JSONAnswerError, extract_json_object
from .limits import RateLimiter
from .pricing import call_cost, price_known, token_prices
from .providers import api_key, endpoint, litellm_model_name, required_env_var
from .redaction import neutralise, redact, register_secret_env, scrub
from .requests import ModelRequest
from .retry import RetryPolicy
from .structured import response_format
from .types import Completion, ModelCallError

__all__ = [
    "Completion", "EndpointUnavailable", "Endpoints", "JSONAnswerError", "ModelCallError",
    "ModelRequest", "RateLimiter", "RetryPolicy", "acomplete", "api_key", "asingle_flight",
    "cache_key", "cached_completion", "call_cost", "complete", "endpoint",
    "estimate_tokens", "extract_json_object", "litellm_model_name", "max_answer_chars",
    "messages_tokens", "model_params", "neutralise", "price_known", "redact",
    "register_secret_env", "required_env_var", "response_format", "scrub", "single_flight",
    "token_prices",
]
