"""The retrieval family's section of summarybench.yaml, ``evaluation.retrieval``: queries
per unit, the cut-offs K, the embedding model and an optional queries file
(docs/configuration.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from ...settings import FamilySection

if TYPE_CHECKING:
    from ...settings import Settings


class RetrievalSettings(FamilySection):
    """Retrieval settings (docs/methods.md#retrieval-family)."""

    queries_per_unit: int = Field(default=5, ge=1)
    k_values: list[int] = Field(default_factory=lambda: [1, 3, 5, 10])
    embedding_model: str = "builtin/minilm"
    queries_file: str | None = None

    @field_validator("k_values")
    @classmethod
    def _k_positive(cls, v: list[int]) -> list[int]:
        if not v or any(k <= 0 for k in v):
            raise ValueError(f"kValues must be a non-empty list of positive integers, got {v}")
        return v

    def configuration(self, settings: Settings) -> dict[str, Any]:
        return {"enabled": self.enabled, "queriesPerUnit": self.queries_per_unit,
                "kValues": sorted(set(self.k_values)), "embeddingModel": self.embedding_model}
