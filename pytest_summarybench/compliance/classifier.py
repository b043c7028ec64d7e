"""The LLM challenger: the seed's prompt sent through the shared model layer, and the check
that the configured model is actually there before any test asks it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .parsing import ParseError, Prediction, parse_response

if TYPE_CHECKING:
    from ..llm import Completion, RetryPolicy
    from ..llm.requests import ModelRequest
    from ..schemas import ModelConfig
    from ..store import Store

DEFAULT_MODEL = "ollama/air-compliance-v2"
CACHE_TAG = "compliance/v1"
"""The prompt's version (a new prompt never reuses answers to the old one)."""
CALL_TIMEOUT_S = 30.0
"""The seed's per-invocation timeout."""
PROBE_TIMEOUT_S = 2.0
CALL_ATTEMPTS = 2
"""One retry: a transient hiccup is forgiven, a dead server costs one example ~1 minute,
not the model layer's default six attempts with backoff."""
NO_LLM_HINT = "--compliance-no-llm (--no-ollama with `summarybench compliance`)"
"""How to run without the LLM, in both of the places the benchmark is started from."""

PROMPT = """Analyze this Python AI agent code for EU AI Act compliance.
Check Articles 9 (risk management), 10 (data governance), 11 (technical documentation),
12 (record-keeping), 14 (human oversight) and 15 (accuracy, robustness, cybersecurity).

```python
{code}
```

Respond with:
ARTICLE: X
SEVERITY: CRITICAL/HIGH/MEDIUM/LOW

where X is the number of the most serious violated article. If the code violates none of
them, respond with ARTICLE: NONE and SEVERITY: NONE."""

CompleteFn = Callable[..., "Completion"]


def build_messages(code: str) -> list[dict[str, str]]:
    """The chat messages for one classification."""
    return [{"role": "user", "content": PROMPT.format(code=code)}]


@dataclass(frozen=True)
class Classification:
    """A parsed answer with the raw text and what the call took."""

    prediction: Prediction | None
    """None when the answer named no article (see ``parse_error``)."""
    raw: str
    latency_ms: float
    input_tokens: int
    output_tokens: int
    parse_error: str | None = None


class LLMClassifier:
    """Classifies code with one model.

    ``request(code)`` is the model call a classification makes; the compliance plugin's
    controller sends every selected example's through the session's call scheduler before
    the tests run (``compliance/calls.py``), and ``classify`` then reads the answer the
    scheduler fetched (or the failure it recorded) from ``store`` under ``session``. A
    test run without that (or without a store) makes its call itself. ``complete``
    replaces the model layer altogether (tests).
    """

    def __init__(self, model: ModelConfig, *, complete: CompleteFn | None = None,
                 timeout_s: float = CALL_TIMEOUT_S,
                 retry_policy: RetryPolicy | None = None, store: Store | None = None,
                 session: str = "") -> None:
        self.model = model
        self.timeout_s = timeout_s
        self.retry_policy = retry_policy
        self.store = store
        self.session = session
        self._complete = complete

    def request(self, code: str) -> ModelRequest:
        """The call that classifies ``code``. Its cache tag holds the session token: the
        answers are shared by the session's processes but never reused by a later run,
        which measures the classifier again (a retrained model keeps its name)."""
        from ..llm.requests import ModelRequest

        return ModelRequest.chat(self.model, build_messages(code), role="classifier",
                                 phase="compliance", tag=f"{CACHE_TAG}/{self.session}",
                                 timeout_s=self.timeout_s, temperature=0.0)

    def policy(self) -> RetryPolicy:
        from ..llm import RetryPolicy

        return self.retry_policy or RetryPolicy(max_attempts=CALL_ATTEMPTS)

    def classify(self, code: str) -> Classification:
        """Classify ``code``; raises ``ModelCallError`` when the call failed.

        An answer that names no article is a classification all the same (a wrong one):
        it comes back with ``prediction=None`` and the parser's reason.
        """
        if self._complete is not None:
            answer = self._complete(self.model, build_messages(code), timeout=self.timeout_s,
                                    temperature=0.0)
        else:
            from ..llm.scheduler import fetch

            answer = fetch(self.request(code), self.store, self.session,
                           retry_policy=self.policy())
        prediction: Prediction | None = None
        problem = None
        try:
            prediction = parse_response(answer.text)
        except ParseError as err:
            problem = str(err)
        return Classification(prediction=prediction, raw=answer.text,
                              latency_ms=answer.latency_ms, input_tokens=answer.input_tokens,
                              output_tokens=answer.output_tokens, parse_error=problem)


def check_endpoint(url: str) -> str:
    """``url`` when it is an http(s) base URL; raises ValueError naming the accepted form."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("expected an http(s) base URL such as http://localhost:11434")
    return url


def parse_model(spec: str, endpoint: str | None = None) -> ModelConfig:
    """``provider/model`` to a ModelConfig; raises ValueError naming the accepted form."""
    from ..schemas import ModelConfig

    model = ModelConfig.parse(spec)
    if model.provider == "builtin":
        raise ValueError(f"model {spec!r}: builtin/* summarizers cannot classify code")
    if endpoint:
        model = model.model_copy(update={"api_endpoint": endpoint})
    return model


def _ollama_tags(base: str) -> Any:
    import json
    import urllib.request

    with urllib.request.urlopen(f"{base}/api/tags", timeout=PROBE_TIMEOUT_S) as response:
        return json.load(response)


def unavailable_reason(model: ModelConfig) -> str | None:
    """Why ``model`` cannot be asked, or None when it can (as far as a probe can tell).

    Ollama models are probed with ``GET /api/tags`` on the configured endpoint; other
    providers need their key in the environment. The probe never raises.
    """
    import urllib.error

    from ..llm import required_env_var
    from ..llm.providers import api_key, endpoint

    if model.provider != "ollama":
        var = required_env_var(model)
        if var is not None and api_key(model) is None:
            return f"{model.id}: {var} is not set"
        return None
    base = endpoint(model)
    try:
        tags = _ollama_tags(str(base))
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", err)
        return f"Ollama not reachable at {base} ({reason}); start it or pass {NO_LLM_HINT}"
    names = {str(m.get("name", "")) for m in tags.get("models", []) if isinstance(m, dict)}
    wanted = model.model_name
    if wanted in names or f"{wanted}:latest" in names:
        return None
    return (f"Ollama at {base} has no model {wanted!r} (has: {', '.join(sorted(names)) or 'none'})"
            f"; run 'ollama pull {wanted}' or choose one with --compliance-model")
