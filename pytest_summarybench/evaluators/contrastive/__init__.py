"""The contrastive family (docs/methods.md#contrastive-family): can a summary pick its own code out
of distractors of the same language and type?

``distractors`` selects the distractor sets (docs/methods.md#distractor-tiers); ``base`` holds the
family's base, ``ContrastiveEvaluator``; ``embedding`` is ``contrastive/embedding``
(docs/methods.md#contrastive-embedding, cosine ranking), ``lexical`` is ``contrastive/lexical`` (the
same ranking against distractors that share the target's identifiers, so copied words do not pick
the code out) and ``llm`` is ``contrastive/llm`` (docs/methods.md#contrastive-llm, a helper model
picks an option).
"""

from __future__ import annotations

from .base import ContrastiveEvaluator
from .distractors import DistractorSet, matchable_unit_ids
from .embedding import ContrastiveEmbedding
from .lexical import ContrastiveLexical
from .llm import ContrastiveLLM

__all__ = ["ContrastiveEmbedding", "ContrastiveEvaluator", "ContrastiveLLM",
           "ContrastiveLexical", "DistractorSet", "matchable_unit_ids"]
