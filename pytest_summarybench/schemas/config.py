"""Benchmark and model configuration schemas (the run's ``configuration`` in
docs/reports.md#the-results-file), with the scoring weights of docs/methods.md#weights."""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    ConfigDict,
    Field,
    SerializationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from ..core.vocabulary import PROVIDERS, Provider
from ._base import SBModel

SamplingStrategy = Literal["random", "stratified", "all"]

#: What no endpoint URL holds: C0 controls and the space, DEL, C1 controls, and the lone
#: surrogates that stand for bytes that were not UTF-8.
_URL_UNSAFE = re.compile("[\x00-\x20\x7f-\x9f\ud800-\udfff]")


def endpoint_problem(url: str) -> str | None:
    """Why ``url`` is no base URL a model can be called at (one phrase), or None: it must be
    ``http://`` or ``https://`` with a host, without spaces or control characters (an ESC
    in it reached the terminal and every request's URL)."""
    bad = _URL_UNSAFE.search(url)
    if bad is not None:
        code = ord(bad.group())
        what = ("a space" if code == 0x20 else
                f"a byte that is not UTF-8 (\\x{code - 0xDC00:02x})"
                if 0xDC80 <= code <= 0xDCFF else f"a control character (\\x{code:02x})"
                if code < 0x100 else f"a lone surrogate (\\u{code:04x})")
        return f"it holds {what} at character {bad.start() + 1}"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError as exc:
        return f"it does not parse as a URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return "expected http:// or https:// at its start"
    if not parts.hostname:
        return "it names no host"
    if parts.username is not None or parts.password is not None:
        # It would reach the store, the reports and every error that names the endpoint;
        # and aiohttp (a run's calls) refuses it beside the key's Authorization header,
        # while httpx (doctor's probe) sends it (docs/hosts.md).
        return ("it holds a user name or password (user:password@host): give the key "
                "in the environment variable apiKeyEnv names, not in the URL")
    return None


def check_endpoint(url: str | None) -> str | None:
    """``url`` if it is a usable endpoint (``endpoint_problem``), else a ValueError for a
    configuration's validation."""
    if url is not None:
        problem = endpoint_problem(url)
        if problem is not None:
            raise ValueError(f"not a usable endpoint URL: {problem}")
    return url


class ModelConfig(SBModel):
    """A model under test, a judge or a task model."""

    id: str = ""
    """``provider/model``; derived from the two when left empty."""
    provider: Provider
    """Which provider serves it; ``builtin`` are the offline baseline summarizers."""
    model_name: str
    """The provider's model name."""
    api_endpoint: str | None = None
    """Base URL of an OpenAI-compatible endpoint (or a local server)."""
    api_key_env: str | None = None
    """The environment variable holding this model's key (default: the provider's, such as
    ``OPENAI_API_KEY``; a model at a loopback ``apiEndpoint`` needs none unless this names
    one). Keys are never written in the configuration."""
    temperature: float = 0.3
    """Sampling temperature (docs/methods.md#summary-generation)."""
    max_tokens: int = 500
    """Output token limit (docs/methods.md#summary-generation)."""
    top_p: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    family: str | None = None
    """Model family for no-self-judging; inferred from the name when not given."""
    requests_per_minute: float | None = None
    """Client-side request rate limit."""
    tokens_per_minute: float | None = None
    """Client-side token rate limit."""
    input_cost_per_million: float | None = None
    """Price override in USD per million input tokens (else litellm's table)."""
    output_cost_per_million: float | None = None
    """Price override in USD per million output tokens (else litellm's table)."""
    timeout_s: float = 60.0
    """Per-call timeout."""

    @model_validator(mode="after")
    def _default_id(self) -> ModelConfig:
        if not self.id:
            self.id = f"{self.provider}/{self.model_name}"
        return self

    @field_validator("api_endpoint")
    @classmethod
    def _endpoint(cls, v: str | None) -> str | None:
        return check_endpoint(v)

    @field_validator("temperature")
    @classmethod
    def _temperature_range(cls, v: float) -> float:
        if not 0.0 <= v <= 2.0:
            raise ValueError(f"temperature must be within [0, 2], got {v}")
        return v

    @field_validator("top_p")
    @classmethod
    def _top_p_range(cls, v: float) -> float:
        if not 0.0 < v <= 1.0:
            raise ValueError(f"topP must be within (0, 1], got {v}")
        return v

    @field_validator("max_tokens")
    @classmethod
    def _positive_tokens(cls, v: int) -> int:
        if v <= 0:
            raise ValueError(f"maxTokens must be positive, got {v}")
        return v

    @classmethod
    def parse(cls, spec: str) -> ModelConfig:
        """Build from ``provider/model`` (e.g. ``openai/gpt-4o``, ``builtin/docstring``)."""
        provider, sep, name = spec.partition("/")
        if not sep or not name:
            raise ValueError(
                f"model {spec!r} is not of the form PROVIDER/MODEL with PROVIDER one of "
                f"{', '.join(PROVIDERS)}"
            )
        if provider not in PROVIDERS:
            raise ValueError(f"unknown provider {provider!r} in model {spec!r}: use one of "
                             f"{', '.join(PROVIDERS)}")
        return cls(provider=provider, model_name=name)  # type: ignore[arg-type]


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value >= 0


class EvalWeights(SBModel):
    """How evaluator families combine into the overall score (``evalWeights``,
    docs/methods.md#weights): family name -> weight.

    The settings declare one key per evaluator family, with the family's default weight
    (``settings.settings_model``); a family declared nowhere (the family of an evaluator a
    ``pytest_summarybench_evaluators`` hook adds) takes its weight from a key of its own:
    ``weights: {docs: 0.1}``. A stored run's weights are read back as they were written.
    """

    model_config = ConfigDict(**{**SBModel.model_config, "extra": "allow"})

    @model_validator(mode="after")
    def _extra_weights(self) -> EvalWeights:
        for key, value in (self.model_extra or {}).items():
            if not _number(value):
                raise ValueError(f"weights.{key} must be a number >= 0, got {value!r}")
            self.model_extra[key] = float(value)  # type: ignore[index]
        return self


class ScoringConfig(SBModel):
    """The within-family weights of docs/methods.md#weights: ``<family>Weights`` -> the
    component's weight key, in camelCase -> weight.

    The settings declare the keys of each family that declares component weights (with
    their defaults); a stored run's are read back as they were written. ``evalWeights`` of
    the spec is ``BenchmarkConfig.weights``.
    """

    model_config = ConfigDict(**{**SBModel.model_config, "extra": "allow"})

    @model_validator(mode="after")
    def _extra_weights(self) -> ScoringConfig:
        for key, value in (self.model_extra or {}).items():
            if not isinstance(value, dict) or not all(
                    isinstance(k, str) and _number(v) for k, v in value.items()):
                raise ValueError(f"scoring.{key} must map weight keys to numbers >= 0, got "
                                 f"{value!r}")
            self.model_extra[key] = {k: float(v) for k, v in value.items()}  # type: ignore[index]
        return self

    def of_family(self, family: str) -> dict[str, float]:
        """The weights ``scoring.<family>Weights`` by their key as written (camelCase)."""
        found = self.model_dump(by_alias=True).get(f"{family}Weights") or {}
        return {str(k): float(v) for k, v in found.items()}


class BenchmarkConfig(SBModel):
    """What a run evaluates and how (docs/reports.md#the-results-file)."""

    sample_size: int = Field(default=100, ge=1)
    sampling_strategy: SamplingStrategy = "stratified"
    seed: int = 0
    """Seed for sampling, distractors, shuffles and bootstrap."""
    evaluations: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per evaluator family, its settings as docs/reports.md#the-results-file names them
    (``judgeModels``, ``distractorCount``...): ``Settings.benchmark_config`` writes them from
    summarybench.yaml, the one configuration tree."""
    weights: EvalWeights = Field(default_factory=EvalWeights)
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)

    @field_serializer("evaluations")
    def _evaluations(self, value: dict[str, dict[str, Any]],
                     info: SerializationInfo) -> dict[str, dict[str, Any]]:
        # exclude_none reaches into the family blocks (results.json has no
        # ``completionModel`` without one), the store's dump keeps them whole.
        if not info.exclude_none:
            return value
        return {family: {k: v for k, v in block.items() if v is not None}
                for family, block in value.items()}
