"""Structured output: the ``response_format`` to ask a model for when its answer must be
JSON, by what its provider supports: a JSON schema where litellm's table says the model
takes one (or llama-cpp-python's grammar for a local GGUF model), JSON mode where the
provider has that, else nothing (the prompt alone asks for JSON).

The judges ask through it (``evaluation.judge.structuredOutput``), and so does every
other evaluator that reads JSON from a model, by the same rules.
"""

from __future__ import annotations

from typing import Any, Literal

from ..schemas import ModelConfig

#: ``evaluation.judge.structuredOutput``: ``auto`` picks by provider, the others force.
StructuredMode = Literal["auto", "json_schema", "json_object", "off"]
#: Providers with a JSON mode (``response_format={"type": "json_object"}``) through
#: litellm; OpenAI-compatible local servers mostly have one, and a server that refuses it
#: (HTTP 400) is asked again without.
JSON_MODE_PROVIDERS = frozenset({"openai", "google", "openrouter", "ollama", "local"})
#: Providers serving whatever model the user runs: never looked up in litellm's table.
SELF_HOSTED = frozenset({"ollama", "local"})


def _supports_schema(judge: ModelConfig) -> bool:
    from .providers import litellm, litellm_model_name

    try:
        return bool(litellm().supports_response_schema(model=litellm_model_name(judge)))
    except Exception:  # unknown to litellm's table: no schema support we can rely on
        return False


def response_format(judge: ModelConfig, mode: StructuredMode, name: str,
                    schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` to send ``judge`` (any model asked for JSON) under ``mode``
    (None: prompt only); ``name`` and ``schema`` describe the JSON asked for."""
    as_schema = {"type": "json_schema",
                 "json_schema": {"name": name, "schema": schema, "strict": True}}
    if mode == "off":
        return None
    from .local import is_gguf_model, llama_cpp_response_format

    if mode in ("auto", "json_schema") and is_gguf_model(judge):
        # llama-cpp-python's server takes the schema inside its json_object type
        return llama_cpp_response_format(schema)
    if mode == "json_schema":
        return as_schema
    if mode == "json_object":
        return {"type": "json_object"}
    if judge.provider in SELF_HOSTED:
        # litellm's table describes the hosted models, not what a local server runs
        return {"type": "json_object"}
    if _supports_schema(judge):
        return as_schema
    return {"type": "json_object"} if judge.provider in JSON_MODE_PROVIDERS else None
