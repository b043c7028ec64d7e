"""Instrument validity: every run can prove that its evaluators tell good summaries from
bad ones on this codebase, with these judges and this embedding model.

``ladder`` builds summaries of known quality from the codebase's documented units and
enters them as ``validate/*`` built-in models (in every run in which no evaluator can call
a model, with ``--sb-validate`` in the others, or ``summarybench validate`` for the ladder
alone); ``wiring`` decides when and keeps them out of the ranking; ``analysis`` measures
how well each evaluator family orders them (Kendall's tau, significance of each step, an
A/A check, judge consistency) and writes the verdict that heads the report's "Instrument
validity" section; ``quote`` reads the figures against real developer queries that the
section quotes for each family (``external.json``, measured by ``benchmarks/validity/``).
"""

from __future__ import annotations

from ..generate.ladder import (
    LADDER_MODEL_IDS,
    LEVEL_IDS,
    TWIN,
    domain_terms,
    is_ladder_model,
    ladder_doc,
    ladder_summaries,
    level_name,
)

__all__ = ["LADDER_MODEL_IDS", "LEVEL_IDS", "TWIN", "domain_terms", "is_ladder_model",
           "ladder_doc", "ladder_summaries", "level_name"]
