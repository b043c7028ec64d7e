"""One real, cheap request to a model, to learn before a run spends anything whether it
answers at all, and in the form its role needs (``summarybench doctor``).

The request is a few tokens each way, never cached (an earlier answer says nothing of
the endpoint now), not retried beyond one attempt after a transient failure, each attempt
ended on the wall clock at the model's ``timeoutS`` (at most ``PROBE_TIMEOUT_S``) however
slowly the endpoint sends its answer (``llm/transport.py``), and read the
way the run would read it: plain text for a model under test, a JSON object for a judge,
the helper and the task model, whose answers are parsed as JSON. What the endpoint
answered is put in words a user can act on (model not found, bad key, refused
connection) with the model layer's own reason after them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..schemas import ModelConfig
from .retry import RetryPolicy

#: What the probe asks: an answer a model of any size gets right, in a few tokens.
PROBE_PROMPT = ('Reply with exactly this JSON object and nothing else: {"ok": true}')
PLAIN_PROMPT = "Reply with the single word: ok"
#: Room for the answer, and for a model that thinks aloud before it.
PROBE_MAX_TOKENS = 64
#: The longest an attempt of the probe waits (a model's smaller ``timeoutS`` is kept).
PROBE_TIMEOUT_S = 30.0
#: One retry after a rate limit or an outage; a dead endpoint is not retried at all.
PROBE_RETRY = RetryPolicy(max_attempts=2, base_delay_s=1.0, max_delay_s=5.0,
                          max_retry_after_s=10.0)
#: A quoted answer is cut at this many characters.
MAX_QUOTE = 80

#: HTTP status -> what it means for the user, said first.
_STATUS_WORDS = {401: "bad key", 403: "no access to this model", 404: "model not found",
                 429: "rate limited", 408: "no answer in time"}


@dataclass(frozen=True)
class ProbeResult:
    """What one model answered to the probe."""

    model_id: str
    ok: bool
    text: str
    """One line: what it answered, or what went wrong and why."""
    seconds: float = 0.0


def _quote(answer: str) -> str:
    flat = " ".join(answer.split())
    return repr(flat if len(flat) <= MAX_QUOTE else flat[:MAX_QUOTE] + "...")


def failure_words(reason: str, status: int | None) -> str:
    """What a failed call means, in the user's words, before the model layer's reason."""
    lowered = reason.lower()
    if status in _STATUS_WORDS:
        return f"{_STATUS_WORDS[status]}: {reason}"
    if "connection refused" in lowered:
        return f"refused connection: {reason}"
    if "does not resolve" in lowered or "name or service not known" in lowered:
        return f"unknown host: {reason}"
    if "timed out" in lowered:
        return f"no answer in time: {reason}"
    if " is not set" in lowered:
        return f"no key: {reason}"
    return reason


def probe(model: ModelConfig, *, json_needed: bool,
          timeout_s: float | None = None) -> ProbeResult:
    """Ask ``model`` the probe and say what came back (see the module docstring).
    ``timeout_s`` bounds each attempt (default: the model's ``timeoutS``, at most
    ``PROBE_TIMEOUT_S``)."""
    from .client import complete
    from .json_answer import JSONAnswerError, extract_json_object
    from .providers import connection_kwargs, litellm
    from .types import ModelCallError

    try:
        connection_kwargs(model)  # a missing key is said without calling
    except ValueError as exc:
        return ProbeResult(model.id, False, failure_words(str(exc), None))
    if timeout_s is None:
        timeout_s = min(model.timeout_s, PROBE_TIMEOUT_S)
    prompt = PROBE_PROMPT if json_needed else PLAIN_PROMPT
    litellm()  # imported once, before the clock starts: its import is not the model's time
    started = time.perf_counter()
    try:
        completion = complete(model, [{"role": "user", "content": prompt}], cache=None,
                              retry_policy=PROBE_RETRY, timeout=timeout_s, temperature=0.0,
                              max_tokens=PROBE_MAX_TOKENS)
    except ModelCallError as exc:
        return ProbeResult(model.id, False, failure_words(exc.reason, exc.status),
                           time.perf_counter() - started)
    seconds = time.perf_counter() - started
    answer = completion.text or ""
    if not answer.strip():
        return ProbeResult(model.id, False, "answered with nothing (an empty completion)",
                           seconds)
    if json_needed:
        try:
            extract_json_object(answer)
        except JSONAnswerError:
            return ProbeResult(model.id, False, f"no JSON where JSON is needed: answered "
                                                f"{_quote(answer)}", seconds)
    version = completion.model_version or model.model_name
    return ProbeResult(model.id, True, f"answered {_quote(answer)} as {version}", seconds)
