"""The retrieval family (docs/methods.md#retrieval-family): do developer queries find the code
through a model's summaries?

``queries`` says where a run's queries come from (a file, or a helper model writing them
with the prompt (docs/methods.md#query-generation)) and reads them; ``embedding`` is
``retrieval/embedding`` (docs/methods.md#retrieval-metrics): one summary index per model, searched
with each unit's queries, and its report section (precision at K and MRR, by query type).
"""

from __future__ import annotations

from .embedding import RetrievalEmbedding
from .queries import QUERY_TYPES, Query, QueryFileError, QuerySource, query_source

__all__ = ["QUERY_TYPES", "Query", "QueryFileError", "QuerySource", "RetrievalEmbedding",
           "query_source"]
