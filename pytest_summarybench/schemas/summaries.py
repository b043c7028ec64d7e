"""The generated summary schema of docs/methods.md#summary-generation."""

from __future__ import annotations

from ._base import SBModel


class GenerationMetadata(SBModel):
    """How a summary was produced, and what it cost."""

    model_name: str
    """The provider's model name, e.g. ``claude-3-5-sonnet-20241022``."""
    model_version: str = ""
    """A version or snapshot tag when the provider reports one."""
    prompt_version: str
    """Version of the prompt set used (see ``generate.prompts.PROMPT_VERSION``)."""
    temperature: float
    """Sampling temperature used."""
    max_tokens: int
    """Output token limit used."""
    generated_at: str
    """ISO-8601 UTC timestamp of the response."""
    latency_ms: float
    """Wall time of the successful call in milliseconds."""
    input_tokens: int
    """Prompt tokens reported by the provider (or counted, for built-in models)."""
    output_tokens: int
    """Completion tokens reported by the provider (or counted, for built-in models)."""
    cost: float | None = None
    """Estimated cost in USD; ``None`` means unknown, never zero by default."""


class GeneratedSummary(SBModel):
    """One model's summary of one code unit."""

    id: str
    """Stable identifier derived from the unit, the model and the prompt version."""
    code_unit_id: str
    """The summarized ``CodeUnit.id``."""
    model_id: str
    """The model under test, as ``provider/model``."""
    summary: str
    """The summary text."""
    generation_metadata: GenerationMetadata
    """How it was produced."""
