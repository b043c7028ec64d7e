"""The LLM challenger: the seed's prompt sent through the shared model layer, and the check
that the configured model is actually there before any test asks it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .dataset import ARTICLES, SEVERITIES
from .parsing import ParseError, Prediction, parse_response

if TYPE_CHECKING:
    from pytest_summarybench.harness import Harness
    from pytest_summarybench.llm import Completion, ModelRequest, RetryPolicy
    from pytest_summarybench.schemas import ModelConfig

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

STRUCTURED_PROMPT = PROMPT.split("Respond with:")[0] + """Respond with a JSON object:
{{"article": "X", "severity": "CRITICAL/HIGH/MEDIUM/LOW", "finding": "<one sentence>"}}

where X is the number of the most serious violated article. If the code violates none of
them, respond with "article": "NONE" and "severity": "NONE"."""
"""The prompt of a call that asks for structured output: the same task, the answer as the
JSON object of :data:`ANSWER_SCHEMA` (article and severity as enums)."""

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "article": {"type": "string", "enum": [*(str(a) for a in ARTICLES), "NONE"]},
        "severity": {"type": "string", "enum": [*SEVERITIES, "NONE"]},
        "finding": {"type": "string"},
    },
    "required": ["article", "severity", "finding"],
    "additionalProperties": False,
}
"""The classification as structured output: the article and the severity as enums, then
a one-sentence finding. The enums come first: a grammar-bound model that rambles in the
finding runs out of tokens after its answer, not before it (a 135M model did, with the
finding first: 1 answer in 10 unparsed)."""
SCHEMA_NAME = "compliance_classification"

CompleteFn = Callable[..., "Completion"]


def build_messages(code: str, *, structured: bool = False) -> list[dict[str, str]]:
    """The chat messages for one classification (``structured``: the JSON answer's)."""
    prompt = STRUCTURED_PROMPT if structured else PROMPT
    return [{"role": "user", "content": prompt.format(code=code)}]


def structured_format(model: ModelConfig) -> dict[str, Any] | None:
    """The ``response_format`` that holds ``model`` to :data:`ANSWER_SCHEMA`, or None
    when its provider takes no JSON schema (the text prompt and its tolerant parser then).

    Ollama takes a schema in its ``format`` field (litellm passes it on); a local GGUF
    model gets it as llama-cpp-python's grammar; a hosted model where litellm's table says
    it supports response schemas. JSON mode without a schema is not used: it would not
    hold the article and severity to their values.
    """
    from pytest_summarybench.llm import response_format

    if model.provider == "ollama":
        return response_format(model, "json_schema", SCHEMA_NAME, ANSWER_SCHEMA)
    fmt = response_format(model, "auto", SCHEMA_NAME, ANSWER_SCHEMA)
    return None if fmt is None or fmt == {"type": "json_object"} else fmt


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
    response_format: str = "none"
    """What the answer was asked as: ``json_schema`` (structured output) or ``none``
    (the text prompt; also when a server refused the schema and was asked again)."""


class LLMClassifier:
    """Classifies code with one model.

    ``request(code)`` is the model call a classification makes; the compliance plugin's
    controller has the harness make every selected example's through the session's call
    scheduler before the tests run (``calls.py``), and ``classify`` then reads the answer
    the scheduler fetched (or the failure it recorded) through ``harness``. Without a
    harness (outside a benchmark session) it makes its call itself. ``complete`` replaces
    the model layer altogether (tests).
    """

    def __init__(self, model: ModelConfig, *, complete: CompleteFn | None = None,
                 timeout_s: float = CALL_TIMEOUT_S,
                 retry_policy: RetryPolicy | None = None, harness: Harness | None = None,
                 structured: bool = True) -> None:
        """:param structured: ask for :data:`ANSWER_SCHEMA` where the provider takes a
            schema (False: always the seed's text prompt)."""
        self.model = model
        self.response_format = structured_format(model) if structured else None
        self.timeout_s = timeout_s
        self.retry_policy = retry_policy
        self.harness = harness
        self._complete = complete

    def request(self, code: str, *, structured: bool = True) -> ModelRequest:
        """The call that classifies ``code``. Its cache tag holds the session token: the
        answers are shared by the session's processes but never reused by a later run,
        which measures the classifier again (a retrained model keeps its name).

        ``structured=False`` is the seed's text prompt without a ``response_format``: the
        call for a server that refused the schema (HTTP 400), read by the tolerant parser.
        """
        from pytest_summarybench.llm import ModelRequest

        fmt = self.response_format if structured else None
        session = self.harness.token if self.harness is not None else ""
        # role "test": the classifier is the model under test of this benchmark
        return ModelRequest.chat(self.model, build_messages(code, structured=fmt is not None),
                                 role="test", phase="compliance",
                                 tag=f"{CACHE_TAG}/{session}", response_format=fmt,
                                 timeout_s=self.timeout_s, temperature=0.0)

    def policy(self) -> RetryPolicy:
        from pytest_summarybench.llm import RetryPolicy

        return self.retry_policy or RetryPolicy(max_attempts=CALL_ATTEMPTS)

    def _answer(self, request: ModelRequest) -> Completion:
        """``request``'s answer: through the session (what its scheduler fetched), or, with
        no session, from the model layer now."""
        if self.harness is not None:
            return self.harness.answer(request, retry_policy=self.policy())
        from pytest_summarybench.llm import complete

        return complete(request.model, request.chat_messages, retry_policy=self.policy(),
                        timeout=request.timeout_s, cache_tag=request.tag,
                        response_format=request.format, **request.overrides)

    def classify(self, code: str) -> Classification:
        """Classify ``code``; raises ``ModelCallError`` when the call failed.

        An answer that names no article is a classification all the same (a wrong one):
        it comes back with ``prediction=None`` and the parser's reason.
        """
        from pytest_summarybench.llm import ModelCallError

        fmt = "none"
        if self._complete is not None:
            answer = self._complete(self.model, build_messages(code), timeout=self.timeout_s,
                                    temperature=0.0)
        else:
            request = self.request(code)
            try:
                answer = self._answer(request)
                fmt = "none" if request.response_format is None else "json_schema"
            except ModelCallError as err:
                if err.status != 400 or request.response_format is None:
                    raise
                answer = self._answer(self.request(code, structured=False))
        prediction: Prediction | None = None
        problem = None
        try:
            prediction = parse_response(answer.text)
        except ParseError as err:
            problem = str(err)
        return Classification(prediction=prediction, raw=answer.text,
                              latency_ms=answer.latency_ms, input_tokens=answer.input_tokens,
                              output_tokens=answer.output_tokens, parse_error=problem,
                              response_format=fmt)


def check_endpoint(url: str) -> str:
    """``url`` when it is an http(s) base URL; raises ValueError naming the accepted form."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("expected an http(s) base URL such as http://localhost:11434")
    return url


def parse_model(spec: str, endpoint: str | None = None) -> ModelConfig:
    """``provider/model`` to a ModelConfig; raises ValueError naming the accepted form."""
    from pytest_summarybench.schemas import ModelConfig

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

    from pytest_summarybench.llm import api_key, endpoint, required_env_var

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
