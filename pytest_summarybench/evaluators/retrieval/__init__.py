"""The retrieval family (spec section 7): do developer queries find the code through a
model's summaries?

``queries`` says where a run's queries come from (a file, or a helper model writing them
with the spec 7.1 prompt) and reads them; ``embedding`` is ``retrieval/embedding`` (spec
7.2): one summary index per model, searched with each unit's queries, and its report
section (precision at K and MRR, by query type).
"""

from __future__ import annotations

from .embedding import RetrievalEmbedding
from .queries import QUERY_TYPES, Query, QueryFileError, QuerySource, query_source

__all__ = ["QUERY_TYPES", "Query", "QueryFileError", "QuerySource", "RetrievalEmbedding",
           "query_source"]
