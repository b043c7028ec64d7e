"""Every table of the store, declared here and nowhere else: the run's own (runs, units,
summaries, records) and those other parts of a run keep in it (the model layer's caches,
the families' artefacts, what a session saves for its report). ``Database`` creates them
all when it opens a file, so a module never creates a table of its own.

The names and columns are those stores were written with before this module existed (each
table was created by the module that used it), so an existing store opens as it is;
``SCHEMA_VERSION`` changes only with a change that an older store cannot take.
"""

from __future__ import annotations

SCHEMA_VERSION = 1

#: The run: its record, its units (which are sampled) and how many of each language and
#: type (written by extraction, read without the units), the summaries it uses (or why
#: there is none) and the evaluation records of its tests.
RUN_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    json TEXT NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS units (
    id TEXT PRIMARY KEY,
    json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_units (
    run_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    unit_id TEXT NOT NULL,
    sampled INTEGER NOT NULL,
    PRIMARY KEY (run_id, unit_id)
);
CREATE TABLE IF NOT EXISTS run_groups (
    run_id TEXT NOT NULL,
    language TEXT NOT NULL,
    type TEXT NOT NULL,
    units INTEGER NOT NULL,
    PRIMARY KEY (run_id, language, type)
);
CREATE TABLE IF NOT EXISTS run_summaries (
    run_id TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    model_id TEXT NOT NULL,
    summary_id TEXT,
    error TEXT,
    PRIMARY KEY (run_id, unit_id, model_id)
);
CREATE TABLE IF NOT EXISTS summaries (
    id TEXT PRIMARY KEY,
    unit_id TEXT NOT NULL,
    model_id TEXT NOT NULL,
    json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS summaries_by_model ON summaries (model_id, unit_id);
CREATE TABLE IF NOT EXISTS records (
    run_id TEXT NOT NULL,
    nodeid TEXT NOT NULL,
    seq INTEGER NOT NULL,
    benchmark TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    model_id TEXT NOT NULL,
    evaluator TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (run_id, nodeid, seq)
);
CREATE INDEX IF NOT EXISTS records_by_run ON records (run_id, benchmark);
"""

#: The model layer (``llm/cache.py``, ``llm/inflight.py``, ``embeddings/embedder.py``):
#: answers and vectors already paid for, the answers a session could not use (by the
#: token of that session: a later one asks again), and who is making a call right now.
CACHE_TABLES = """
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY,
    model_id TEXT NOT NULL,
    tag TEXT NOT NULL,
    json TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS llm_unusable (
    key TEXT PRIMARY KEY,
    token TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS llm_inflight (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    heartbeat REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS embedding_cache (
    model TEXT NOT NULL,
    hash TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, hash)
);
"""

#: What the controller prepares once for the workers to read (retrieval's queries,
#: contrastive's distractor sets) and what a session keeps for ``summarybench report``
#: (its inputs, the files extraction skipped, each session's report as written: a run
#: of ``summarybench runs``), what an xdist worker tells the controller
#: (the items ``-k``/``-m`` left) and what the controller tells the tests (the model calls
#: that failed for good, so that no test makes them again).
SESSION_TABLES = """
CREATE TABLE IF NOT EXISTS retrieval_queries (
    run_id TEXT NOT NULL,
    source TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (run_id, source, unit_id)
);
CREATE TABLE IF NOT EXISTS distractor_sets (
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (run_id, key, unit_id)
);
CREATE TABLE IF NOT EXISTS report_inputs (run_id TEXT PRIMARY KEY, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS skipped_files (run_id TEXT, path TEXT, reason TEXT,
    PRIMARY KEY (run_id, path));
CREATE TABLE IF NOT EXISTS session_items (token TEXT NOT NULL, test_id TEXT NOT NULL,
    PRIMARY KEY (token, test_id));
CREATE TABLE IF NOT EXISTS call_failures (token TEXT NOT NULL, key TEXT NOT NULL,
    reason TEXT NOT NULL, status INTEGER, PRIMARY KEY (token, key));
CREATE TABLE IF NOT EXISTS session_runs (id TEXT PRIMARY KEY, run_id TEXT NOT NULL,
    finished_at REAL NOT NULL, complete INTEGER NOT NULL, listing TEXT NOT NULL,
    report TEXT NOT NULL);
"""

SCHEMA = RUN_TABLES + CACHE_TABLES + SESSION_TABLES
