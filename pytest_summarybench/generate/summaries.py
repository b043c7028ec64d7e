"""A summary as the store keeps it: its deterministic id, and its ``GeneratedSummary``
with the metadata of docs/methods.md#summary-generation, from a model's answer or from a built-in
summarizer."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone

from ..llm.client import model_params
from ..llm.types import Completion
from ..schemas import CodeUnit, GeneratedSummary, GenerationMetadata, ModelConfig
from ..store import dumps
from .builtin import count_tokens
from .builtin_base import BUILTIN_VERSION, BuiltinResult
from .prompts import PROMPT_VERSION

#: The sampling parameters of docs/methods.md#summary-generation as configured for a model.
generation_params = model_params


def summary_id(unit_id: str, model: ModelConfig, prompt_version: str, extra: str = "") -> str:
    """A deterministic summary id from the unit, the model, the prompt and the parameters."""
    key = dumps([unit_id, model.id, model.provider, model.model_name, model.api_endpoint,
                 prompt_version, generation_params(model), extra])
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def model_summary(unit: CodeUnit, model: ModelConfig, completion: Completion) -> GeneratedSummary:
    """The stored form of a model's summary, with the metadata of
    docs/methods.md#summary-generation."""
    return GeneratedSummary(
        id=summary_id(unit.id, model, PROMPT_VERSION),
        code_unit_id=unit.id,
        model_id=model.id,
        summary=completion.text,
        generation_metadata=GenerationMetadata(
            model_name=model.model_name, model_version=completion.model_version,
            prompt_version=PROMPT_VERSION, temperature=model.temperature,
            max_tokens=model.max_tokens,
            generated_at=_now(),
            latency_ms=completion.latency_ms, input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens, cost=completion.cost),
    )


def builtin_summary(unit: CodeUnit, model: ModelConfig, result: BuiltinResult,
                    latency_ms: float) -> GeneratedSummary:
    """The stored form of a built-in summary (free: cost exactly 0)."""
    return GeneratedSummary(
        id=summary_id(unit.id, model, BUILTIN_VERSION, result.source),
        code_unit_id=unit.id,
        model_id=model.id,
        summary=result.text,
        generation_metadata=GenerationMetadata(
            model_name=model.model_name, model_version=result.model_version,
            prompt_version=BUILTIN_VERSION, temperature=0.0, max_tokens=model.max_tokens,
            generated_at=_now(), latency_ms=latency_ms,
            input_tokens=count_tokens(unit.content), output_tokens=count_tokens(result.text),
            cost=0.0),
    )
