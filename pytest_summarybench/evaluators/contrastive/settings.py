"""The contrastive family's section of summarybench.yaml, ``evaluation.contrastive``: how
many distractors, which methods, which embedding model, how the semantic tier is searched
(docs/configuration.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ...settings import FamilySection

if TYPE_CHECKING:
    from ...settings import Settings


class ContrastiveSettings(FamilySection):
    """Contrastive settings (docs/methods.md#contrastive-family)."""

    distractors: int = Field(default=9, ge=1)
    methods: list[Literal["embedding", "lexical", "llm"]] = ["embedding"]
    embedding_model: str = "builtin/minilm"
    distractor_search: Literal["candidates", "exact"] = "candidates"
    """How the semantic tier finds its distractors: ``candidates`` (the evaluation model
    embeds each target's best candidates by static vectors: cost follows the sample) or
    ``exact`` (every unit of the codebase through the model)."""
    candidates_per_target: int = Field(default=35, ge=1)
    """With ``candidates``: how many units per target the evaluation model scores."""

    def configuration(self, settings: Settings) -> dict[str, Any]:
        methods = sorted(set(self.methods))
        # One method by its name; embedding and llm together as "both" (the name results.json
        # has always used for that pair); any other combination joined with "+".
        method = ("both" if methods == ["embedding", "llm"] else "+".join(methods)
                  if methods else "embedding")
        return {"enabled": self.enabled, "distractorCount": self.distractors,
                "method": method, "embeddingModel": self.embedding_model}
