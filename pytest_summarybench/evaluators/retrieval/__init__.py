"""The retrieval family (docs/methods.md#retrieval-family): do developer queries find the code
through a model's summaries?

``queries`` says where a run's queries come from (a file, or a helper model writing them
with the prompt (docs/methods.md#query-generation)) and reads them; ``embedding`` is
``retrieval/embedding`` (docs/methods.md#retrieval-metrics): one summary index per model, searched
with each unit's queries; ``report`` lays out its section (precision at K and MRR, by query
type, the reference rows).

The package declares the family (``FAMILY``: its name, title, weights, evaluators,
settings section and report layouts), which ``evaluators/registry.py`` lists; the
modules are imported only when the family runs.
"""

from __future__ import annotations

from ...core.family import Family

FAMILY = Family(
    name="retrieval",
    title="Retrieval",
    weight=0.25,
    evaluators={
        "retrieval/embedding":
            "pytest_summarybench.evaluators.retrieval.embedding:RetrievalEmbedding",
    },
    weights={"precision1": 0.3, "precision5": 0.4, "mrr": 0.3},
    settings="pytest_summarybench.evaluators.retrieval.settings:RetrievalSettings",
    layouts={
        "retrieval/embedding": "pytest_summarybench.evaluators.retrieval.report:embedding_blocks",
    },
)

__all__ = ["FAMILY"]
