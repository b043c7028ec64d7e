"""The tables other parts of a run keep in the store, one small class each: what is
stored and read, never how the rows are laid out, which is ``schema.py``'s and the SQL
here. Values that are JSON are the caller's text (each caller knows its own shape); a
row that no longer parses is the caller's to report (``Database.parse``, or a miss)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .database import Database

#: A claim on a model call: owner, host, pid, heartbeat (seconds since the epoch).
ClaimRow = tuple[str, str, int, float]


class ResponseCache:
    """``llm_cache``: a successful model answer per request key (``llm/cache.py``), and
    ``llm_unusable``: the answers a session found it could not use, by session token."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, key: str) -> tuple[str, str | None] | None:
        """The answer's JSON stored under ``key`` and the token of the session that could
        not use it (None: none said so); None on a miss."""
        rows = self._db.execute(
            "SELECT c.json, u.token FROM llm_cache AS c LEFT JOIN llm_unusable AS u "
            "ON u.key = c.key WHERE c.key = ?", (key,))
        return (rows[0][0], rows[0][1]) if rows else None

    def put(self, key: str, model_id: str, tag: str, text: str, created_at: float) -> None:
        """Store an answer at once, replacing an older one for the same key (and whatever
        was said of the older one)."""
        with self._db.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO llm_cache VALUES (?, ?, ?, ?, ?)",
                         (key, model_id, tag, text, created_at))
            conn.execute("DELETE FROM llm_unusable WHERE key = ?", (key,))

    def mark_unusable(self, keys: Iterable[str], token: str) -> None:
        """Record that session ``token`` could not use the answers stored under ``keys``
        (keys with no stored answer are left out)."""
        with self._db.transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO llm_unusable SELECT key, ? FROM "
                             "llm_cache WHERE key = ?", [(token, key) for key in keys])

    def forget_tag(self, tag: str) -> int:
        """Drop every answer cached under ``tag`` (answers kept for one session only);
        how many were dropped."""
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM llm_unusable WHERE key IN "
                         "(SELECT key FROM llm_cache WHERE tag = ?)", (tag,))
            return conn.execute("DELETE FROM llm_cache WHERE tag = ?", (tag,)).rowcount


class InFlightClaims:
    """``llm_inflight``: which process is making the call of a key (``llm/inflight.py``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, key: str) -> ClaimRow | None:
        rows = self._db.execute(
            "SELECT owner, host, pid, heartbeat FROM llm_inflight WHERE key = ?", (key,))
        return rows[0] if rows else None

    def take(self, key: str, decide: Callable[[ClaimRow | None], ClaimRow | None]) -> bool:
        """In one write transaction: read the claim on ``key``, ask ``decide`` for the
        claim to write instead (None: leave it), write it. True when it was written."""
        with self._db.transaction() as conn:
            held = conn.execute("SELECT owner, host, pid, heartbeat FROM llm_inflight "
                                "WHERE key = ?", (key,)).fetchone()
            claim = decide(held)
            if claim is None:
                return False
            conn.execute("INSERT OR REPLACE INTO llm_inflight VALUES (?, ?, ?, ?, ?)",
                         (key, *claim))
        return True

    def release(self, key: str, owner: str) -> None:
        """Drop ``owner``'s claim on ``key`` (another owner's stays)."""
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM llm_inflight WHERE key = ? AND owner = ?", (key, owner))

    def beat(self, keys: Iterable[str], owner: str, now: float) -> None:
        """Refresh the heartbeat of ``owner``'s claims on ``keys``."""
        with self._db.transaction() as conn:
            conn.executemany(
                "UPDATE llm_inflight SET heartbeat = ? WHERE key = ? AND owner = ?",
                [(now, key, owner) for key in keys])


class UnitJson:
    """A table of one JSON text per unit, per run and a second key (``run_id``, the key
    column, ``unit_id``, ``json``): ``retrieval_queries`` (each unit's queries, or why it
    has none, per query source; ``evaluators/retrieval/queries.py``) and
    ``distractor_sets`` (each unit's set, per selection; ``evaluators/contrastive/
    distractors.py``)."""

    def __init__(self, db: Database, table: str, key_column: str) -> None:
        self._db = db
        self._table = table
        self._key_column = key_column

    def load(self, run_id: str, key: str) -> dict[str, str]:
        """unit id -> its JSON."""
        return dict(self._db.execute(
            f"SELECT unit_id, json FROM {self._table} WHERE run_id = ? "
            f"AND {self._key_column} = ?", (run_id, key)))

    def save(self, run_id: str, key: str, rows: dict[str, str]) -> None:
        with self._db.transaction() as conn:
            conn.executemany(f"INSERT OR REPLACE INTO {self._table} VALUES (?, ?, ?, ?)",
                             [(run_id, key, uid, text) for uid, text in rows.items()])


class EmbeddingCache:
    """``embedding_cache``: vectors by (embedding model's cache key, sha256 of the text),
    float32 bytes (``embeddings/embedder.py``)."""

    CHUNK = 500
    """Hashes per look-up query (SQLite's limit on bound parameters is far above)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def lookup(self, model: str, hashes: Iterable[str]) -> dict[str, tuple[int, bytes]]:
        """hash -> (dimension, vector bytes) of those cached."""
        wanted = sorted(set(hashes))
        found: dict[str, tuple[int, bytes]] = {}
        for start in range(0, len(wanted), self.CHUNK):
            chunk = wanted[start:start + self.CHUNK]
            marks = ",".join("?" * len(chunk))
            for h, dim, blob in self._db.execute(
                    f"SELECT hash, dim, vector FROM embedding_cache WHERE model = ? "
                    f"AND hash IN ({marks})", [model, *chunk]):
                found[h] = (dim, blob)
        return found

    def save(self, model: str, rows: Iterable[tuple[str, int, bytes]]) -> None:
        """Store (hash, dimension, vector bytes) rows."""
        with self._db.transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO embedding_cache VALUES (?, ?, ?, ?)",
                             [(model, h, dim, blob) for h, dim, blob in rows])


class SessionInputs:
    """``report_inputs``: what only a session knew (its start and end, skipped families,
    the evaluators' sections, the gate's verdict), for a report rebuilt from the store
    (``report/inputs.py``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def load(self, run_id: str) -> dict[str, Any]:
        """What was saved for ``run_id`` ({} when nothing was)."""
        rows = self._db.execute("SELECT json FROM report_inputs WHERE run_id = ?", (run_id,))
        return json.loads(rows[0][0]) if rows else {}

    def save(self, run_id: str, payload: dict[str, Any]) -> None:
        with self._db.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO report_inputs VALUES (?, ?)",
                         (run_id, json.dumps(payload, default=str)))

    def update(self, run_id: str, changes: dict[str, Any]) -> None:
        """Set ``changes`` on what was saved for ``run_id``, in one transaction."""
        with self._db.transaction() as conn:
            row = conn.execute("SELECT json FROM report_inputs WHERE run_id = ?",
                               (run_id,)).fetchone()
            payload = json.loads(row[0]) if row else {}
            payload.update(changes)
            conn.execute("INSERT OR REPLACE INTO report_inputs VALUES (?, ?)",
                         (run_id, json.dumps(payload, default=str)))


class SessionItems:
    """``session_items``: the items that ``-k``/``-m`` left in an xdist worker, by session
    token, for the controller to prepare: the summary benchmark's matrix items by test id
    (``plugin/state.py``), a hosted benchmark's under a ``scope`` of its own
    (``harness.Harness.share``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @staticmethod
    def _key(token: str, scope: str) -> str:
        return f"{token}/{scope}" if scope else token

    def add(self, token: str, test_ids: Iterable[str], *, scope: str = "") -> None:
        key = self._key(token, scope)
        with self._db.transaction() as conn:
            conn.executemany("INSERT OR IGNORE INTO session_items VALUES (?, ?)",
                             [(key, test_id) for test_id in test_ids])

    def of(self, token: str, *, scope: str = "") -> set[str]:
        return {row[0] for row in self._db.execute(
            "SELECT test_id FROM session_items WHERE token = ?", (self._key(token, scope),))}

    def forget(self, token: str) -> None:
        """Drop the session's rows, in every scope (the session is over)."""
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM session_items WHERE token = ? "
                         "OR substr(token, 1, ?) = ?", (token, len(token) + 1, f"{token}/"))


class CallFailures:
    """``call_failures``: model calls of a session that failed for good, by request key,
    with the reason (``llm/scheduler.py`` writes them, the tests read them)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def record(self, token: str, key: str, reason: str, status: int | None) -> None:
        with self._db.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO call_failures VALUES (?, ?, ?, ?)",
                         (token, key, reason, status))

    def reason(self, token: str, key: str) -> tuple[str, int | None] | None:
        """(reason, HTTP status) of the failed call, None when it did not fail."""
        rows = self._db.execute("SELECT reason, status FROM call_failures "
                                "WHERE token = ? AND key = ?", (token, key))
        return (rows[0][0], rows[0][1]) if rows else None

    def forget(self, token: str) -> None:
        """Drop the session's failures (the session is over)."""
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM call_failures WHERE token = ?", (token,))


class SkippedFiles:
    """``skipped_files``: the files extraction passed over for a run, and why
    (``engine/pipeline.py``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def save(self, run_id: str, skipped: Iterable[tuple[str, str]]) -> None:
        with self._db.transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO skipped_files VALUES (?, ?, ?)",
                             [(run_id, path, reason) for path, reason in skipped])

    def of(self, run_id: str) -> list[tuple[str, str]]:
        """(path, reason) by path."""
        return [(p, r) for p, r in self._db.execute(
            "SELECT path, reason FROM skipped_files WHERE run_id = ? ORDER BY path",
            (run_id,))]


@dataclass(frozen=True)
class SessionRun:
    """One session's report as it wrote it (``session_runs``), newest first in
    ``SessionRuns.all``."""

    id: str
    run_id: str
    """The configuration's run in the store (``runs``), the report's ``benchmarkId``."""
    finished_at: float
    complete: bool
    listing: dict[str, Any]
    """What ``summarybench runs`` shows of it (``report/runs.py``)."""


class SessionRuns:
    """``session_runs``: each session's report JSON as it was written, with what a listing
    shows of it, so that ``summarybench report --run`` renders it again and ``runs`` lists
    the sessions without reading every report."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def save(self, run: SessionRun, report_json: str) -> None:
        with self._db.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO session_runs VALUES (?, ?, ?, ?, ?, ?)",
                         (run.id, run.run_id, run.finished_at, int(run.complete),
                          json.dumps(run.listing), report_json))

    def all(self) -> list[SessionRun]:
        """Every session's run, the newest first."""
        return [SessionRun(i, r, f, bool(c), json.loads(listing)) for i, r, f, c, listing in
                self._db.execute("SELECT id, run_id, finished_at, complete, listing FROM "
                                 "session_runs ORDER BY finished_at DESC, id")]

    def report(self, session_id: str) -> str | None:
        """The report JSON session ``session_id`` wrote (None if there is no such run)."""
        rows = self._db.execute("SELECT report FROM session_runs WHERE id = ?",
                                (session_id,))
        return rows[0][0] if rows else None
