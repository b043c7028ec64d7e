"""The SQLite store: runs, units, summaries and evaluation records, and every other table a
run keeps (the model layer's caches, the families' artefacts, what a session saves).

One file holds everything a report needs, so a report can be rebuilt and a run resumed
without calling a model again. The store owns its persistence: ``schema.py`` declares every
table, ``database.py`` opens the file and runs transactions, ``core.py`` is the ``Store``
with the run's own tables, and ``tables.py`` holds one small class per table that another
part of the run keeps (``Store.responses``, ``Store.queries``...). No module outside this
package writes a table's definition.

The store fails closed (``errors.py``): every SQLite error and every row that no longer
parses comes out as one ``StoreError`` naming the file and what to do.
"""

from __future__ import annotations

from .core import RecordRow, Store, dumps, record_row
from .errors import StoreError, store_error
from .schema import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "RecordRow", "Store", "StoreError", "dumps", "record_row",
           "store_error"]
