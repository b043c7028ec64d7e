"""The contrastive family (docs/methods.md#contrastive-family): can a summary pick its own code out
of distractors of the same language and type?

``distractors`` selects the distractor sets (docs/methods.md#distractor-tiers); ``base`` holds the
family's base, ``ContrastiveEvaluator``; ``embedding`` is ``contrastive/embedding``
(docs/methods.md#contrastive-embedding, cosine ranking), ``lexical`` is ``contrastive/lexical`` (the
same ranking against distractors that share the target's identifiers, so copied words do not pick
the code out) and ``llm`` is ``contrastive/llm`` (docs/methods.md#contrastive-llm, a helper model
picks an option).

The package declares the family (``FAMILY``: its name, title, weights, evaluators,
settings section and report layouts), which ``evaluators/registry.py`` lists; the
modules are imported only when the family runs.
"""

from __future__ import annotations

from ...core.family import Family

FAMILY = Family(
    name="contrastive",
    title="Contrastive",
    weight=0.25,
    evaluators={
        "contrastive/embedding":
            "pytest_summarybench.evaluators.contrastive.embedding:ContrastiveEmbedding",
        "contrastive/lexical":
            "pytest_summarybench.evaluators.contrastive.lexical:ContrastiveLexical",
        "contrastive/llm": "pytest_summarybench.evaluators.contrastive.llm:ContrastiveLLM",
    },
    weights={"embedding": 0.5, "lexical": 0.5, "llm": 0.5},
    settings="pytest_summarybench.evaluators.contrastive.settings:ContrastiveSettings",
)

__all__ = ["FAMILY"]
