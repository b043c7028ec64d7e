"""The ``Store``: the run's own tables (its record, its units, the summaries it uses and
its evaluation records), and one attribute per table another part of the run keeps.

SQLite in WAL mode with a busy timeout lets several xdist workers read (and, for caches,
write) while the controller writes; every write is a short transaction that commits at
once, so a killed process loses at most the row it was writing.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from pathlib import Path

from ..schemas import BenchmarkRun, CodeUnit, GeneratedSummary, ScoreRecord
from .database import DEFAULT_WAIT_S, Database
from .errors import store_error
from .tables import (
    CallFailures,
    EmbeddingCache,
    InFlightClaims,
    ResponseCache,
    SessionInputs,
    SessionItems,
    SessionRuns,
    SkippedFiles,
    UnitJson,
)


class Store(Database):
    """A summarybench SQLite store at ``path`` (created on first use): the run's own tables
    here, and one attribute per table another part of the run keeps (``tables.py``)."""

    def __init__(self, path: str | Path, *, timeout_s: float = DEFAULT_WAIT_S,
                 check: bool = False, notice: Callable[[str], None] | None = None) -> None:
        super().__init__(path, timeout_s=timeout_s, check=check, notice=notice)
        self._run_summaries: tuple[tuple[str, int, int],
                                   dict[tuple[str, str], GeneratedSummary | str]] | None = None

    def close(self) -> None:
        with self._lock:
            self._run_summaries = None  # its version numbers belong to the connection
            super().close()

    # -- the tables other parts of a run keep ------------------------------------------
    @cached_property
    def responses(self) -> ResponseCache:
        """The model layer's response cache (``llm_cache``)."""
        return ResponseCache(self)

    @cached_property
    def inflight(self) -> InFlightClaims:
        """Who is making which model call right now (``llm_inflight``)."""
        return InFlightClaims(self)

    @cached_property
    def queries(self) -> UnitJson:
        """Retrieval's developer queries, per run and source (``retrieval_queries``)."""
        return UnitJson(self, "retrieval_queries", "source")

    @cached_property
    def distractors(self) -> UnitJson:
        """Contrastive's distractor sets, per run and selection (``distractor_sets``)."""
        return UnitJson(self, "distractor_sets", "key")

    @cached_property
    def embeddings(self) -> EmbeddingCache:
        """Cached embedding vectors (``embedding_cache``)."""
        return EmbeddingCache(self)

    @cached_property
    def session_inputs(self) -> SessionInputs:
        """What only a session knew, for a report rebuilt later (``report_inputs``)."""
        return SessionInputs(self)

    @cached_property
    def session_runs(self) -> SessionRuns:
        """Each session's report as written, for ``summarybench runs`` (``session_runs``)."""
        return SessionRuns(self)

    @cached_property
    def selection(self) -> SessionItems:
        """The items ``-k``/``-m`` left in each xdist worker (``session_items``)."""
        return SessionItems(self)

    @cached_property
    def call_failures(self) -> CallFailures:
        """Model calls of a session that failed for good (``call_failures``)."""
        return CallFailures(self)

    def end_session(self, token: str) -> None:
        """Drop what only session ``token`` needed: its processes' selections and the
        calls that failed in it (its records, summaries and answers stay)."""
        self.selection.forget(token)
        self.call_failures.forget(token)

    @cached_property
    def skipped_files(self) -> SkippedFiles:
        """The files extraction skipped, per run (``skipped_files``)."""
        return SkippedFiles(self)

    # -- runs -------------------------------------------------------------------------
    def save_run(self, run: BenchmarkRun) -> None:
        with self.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO runs VALUES (?, ?, ?)",
                         (run.id, run.model_dump_json(by_alias=True), time.time()))

    def load_run(self, run_id: str) -> BenchmarkRun | None:
        rows = self.execute("SELECT json FROM runs WHERE id = ?", (run_id,))
        return self.parse(BenchmarkRun, rows[0][0]) if rows else None

    def run_ids(self) -> list[str]:
        """Every configuration's run id, the most recently updated first."""
        return [r[0] for r in self.execute("SELECT id FROM runs ORDER BY updated_at DESC")]

    def latest_run_id(self) -> str | None:
        rows = self.execute("SELECT id FROM runs ORDER BY updated_at DESC LIMIT 1")
        return rows[0][0] if rows else None

    # -- units ------------------------------------------------------------------------
    def save_units(self, run_id: str, units: list[CodeUnit], sampled: set[str]) -> None:
        """Store every extracted unit of the run, in order, flagging the sampled ones
        (replacing any previous list for the run)."""
        self.clear_units(run_id)
        self.add_units(run_id, 0, units)
        self.mark_sampled(run_id, sampled)
        self.save_unit_groups(run_id, dict(Counter((u.language, u.type) for u in units)))

    def clear_units(self, run_id: str) -> None:
        """Forget the run's list of units (before it is written again)."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM run_units WHERE run_id = ?", (run_id,))
            conn.execute("DELETE FROM run_groups WHERE run_id = ?", (run_id,))

    def add_units(self, run_id: str, start: int, units: list[CodeUnit]) -> None:
        """Store ``units`` as the run's units at positions ``start``... (none sampled yet):
        extraction writes its units in batches, as they are built."""
        if not units:
            return
        with self.transaction() as conn:
            # One unit's JSON at a time (a generator), not the batch's twice over.
            conn.executemany("INSERT OR REPLACE INTO units VALUES (?, ?)",
                             ((u.id, u.model_dump_json(by_alias=True)) for u in units))
            conn.executemany("INSERT OR REPLACE INTO run_units VALUES (?, ?, ?, 0)",
                             [(run_id, start + i, u.id) for i, u in enumerate(units)])

    def mark_sampled(self, run_id: str, ids: Iterable[str]) -> None:
        """Flag the run's sampled units."""
        with self.transaction() as conn:
            conn.executemany("UPDATE run_units SET sampled = 1 WHERE run_id = ? AND unit_id = ?",
                             [(run_id, uid) for uid in sorted(set(ids))])

    def load_units(self, run_id: str, *, sampled_only: bool = False) -> list[CodeUnit]:
        sql = ("SELECT u.json FROM run_units r JOIN units u ON u.id = r.unit_id "
               "WHERE r.run_id = ?")
        if sampled_only:
            sql += " AND r.sampled = 1"
        rows = self.execute(sql + " ORDER BY r.position", (run_id,))
        return [self.parse(CodeUnit, r[0]) for r in rows]

    def iter_units(self, run_id: str, size: int = 1000) -> Iterator[list[CodeUnit]]:
        """The run's units in order, ``size`` at a time (a caller holds one batch)."""
        for rows in self.stream("SELECT u.json FROM run_units r JOIN units u "
                                "ON u.id = r.unit_id WHERE r.run_id = ? ORDER BY r.position",
                                (run_id,), size):
            yield [self.parse(CodeUnit, r[0]) for r in rows]

    def load_units_by_id(self, run_id: str, ids: Iterable[str]) -> list[CodeUnit]:
        """The run's units of ``ids`` (those it has)."""
        wanted = sorted(set(ids))
        out: list[CodeUnit] = []
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            rows = self.execute(
                "SELECT u.json FROM run_units r JOIN units u ON u.id = r.unit_id "
                f"WHERE r.run_id = ? AND r.unit_id IN ({', '.join('?' * len(part))})",
                [run_id, *part])
            out.extend(self.parse(CodeUnit, r[0]) for r in rows)
        return out

    def unit_ids(self, run_id: str) -> list[str]:
        """Every unit id of the run, in order."""
        rows = self.execute("SELECT unit_id FROM run_units WHERE run_id = ? ORDER BY position",
                            (run_id,))
        return [r[0] for r in rows]

    def unit_names(self, run_id: str) -> list[tuple[str, str, str]]:
        """(id, path, name) of every unit of the run, in order."""
        return [tuple(r) for r in self.execute(  # type: ignore[misc]
            "SELECT u.id, json_extract(u.json, '$.path'), json_extract(u.json, '$.name') "
            "FROM run_units r JOIN units u ON u.id = r.unit_id WHERE r.run_id = ? "
            "ORDER BY r.position", (run_id,))]

    def save_unit_groups(self, run_id: str, counts: dict[tuple[str, str], int]) -> None:
        """How many units of the run each (language, type) has (extraction counts them)."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM run_groups WHERE run_id = ?", (run_id,))
            conn.executemany("INSERT INTO run_groups VALUES (?, ?, ?, ?)",
                             [(run_id, lang, kind, n) for (lang, kind), n in counts.items()])

    def unit_groups(self, run_id: str) -> dict[tuple[str, str], int]:
        """How many units of the run each (language, type) has: as extraction counted
        them, or (a run extracted before the counts were kept) counted in the units."""
        rows = self.execute("SELECT language, type, units FROM run_groups WHERE run_id = ?",
                            (run_id,))
        if not rows:
            rows = self.execute(
                "SELECT json_extract(u.json, '$.language'), json_extract(u.json, '$.type'), "
                "count(*) FROM run_units r JOIN units u ON u.id = r.unit_id "
                "WHERE r.run_id = ? GROUP BY 1, 2", (run_id,))
        return {(lang, kind): n for lang, kind, n in rows}

    def group_units(self, run_id: str, language: str, kind: str,
                    size: int = 1000) -> Iterator[list[tuple[str, str, str | None,
                                                              str | None, str | None, str]]]:
        """The units of one (language, type) of the run, ``size`` at a time, as (id, path,
        parameters as JSON, signature, return type, content): what distractor selection
        reads of every unit, without the units themselves."""
        return self.stream(
            "SELECT u.id, json_extract(u.json, '$.path'), "
            "json_extract(u.json, '$.metadata.parameters'), "
            "json_extract(u.json, '$.metadata.signature'), "
            "json_extract(u.json, '$.metadata.returnType'), "
            "json_extract(u.json, '$.content') "
            "FROM run_units r JOIN units u ON u.id = r.unit_id WHERE r.run_id = ? "
            "AND json_extract(u.json, '$.language') = ? AND json_extract(u.json, '$.type') = ? "
            "ORDER BY u.id", (run_id, language, kind), size)

    def unit_contents(self, ids: Iterable[str]) -> dict[str, str]:
        """The code (``content``) of the units ``ids``, by id."""
        wanted = sorted(set(ids))
        out: dict[str, str] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            out.update(self.execute(
                f"SELECT id, json_extract(json, '$.content') FROM units WHERE id IN "
                f"({', '.join('?' * len(part))})", part))
        return out

    def sampled_unit_ids(self, run_id: str) -> list[str]:
        rows = self.execute("SELECT unit_id FROM run_units WHERE run_id = ? AND sampled = 1 "
                            "ORDER BY position", (run_id,))
        return [r[0] for r in rows]

    # -- summaries --------------------------------------------------------------------
    def save_summary(self, summary: GeneratedSummary) -> None:
        self.save_summaries([summary])

    def save_summaries(self, summaries: list[GeneratedSummary]) -> None:
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO summaries VALUES (?, ?, ?, ?)",
                [(s.id, s.code_unit_id, s.model_id, s.model_dump_json(by_alias=True))
                 for s in summaries])

    def summaries_by_id(self, ids: Iterable[str]) -> dict[str, GeneratedSummary]:
        """The stored summaries of ``ids`` (whatever run wrote them), by id."""
        wanted = sorted(set(ids))
        out: dict[str, GeneratedSummary] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            rows = self.execute(f"SELECT id, json FROM summaries WHERE id IN "
                                f"({', '.join('?' * len(part))})", part)
            out.update((sid, self.parse(GeneratedSummary, text)) for sid, text in rows)
        return out

    def link_summaries(self, run_id: str, links: list[tuple[str, str, str]]) -> None:
        """Link existing summaries, as (unit id, model id, summary id), to a run."""
        with self.transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO run_summaries VALUES (?, ?, ?, ?, NULL)",
                             [(run_id, u, m, s) for u, m, s in links])

    def link_summary(self, run_id: str, unit_id: str, model_id: str,
                     summary_id: str | None, error: str | None = None) -> None:
        """Record which summary (or which error) a run uses for a unit and model."""
        with self.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO run_summaries VALUES (?, ?, ?, ?, ?)",
                         (run_id, unit_id, model_id, summary_id, error))

    def run_summaries(self, run_id: str) -> dict[tuple[str, str], GeneratedSummary | str]:
        """(unit_id, model_id) -> the summary the run uses, or the generation error text.

        The last answer is kept until the database changes: the controller reads every
        summary of a run twice (generation checks what is linked, then the run's context),
        and parsing 10,000 summaries again was a visible share of a cached re-run. Each
        call gets its own dict; the summaries in it are shared, and read-only.
        """
        with self._lock:
            conn = self._connect()
            try:
                # total_changes counts this connection's writes; data_version changes when
                # another connection (another process) commits.
                version = (run_id, conn.total_changes,
                           conn.execute("PRAGMA data_version").fetchone()[0])
                if self._run_summaries is not None and self._run_summaries[0] == version:
                    return dict(self._run_summaries[1])
                rows = conn.execute(
                    "SELECT r.unit_id, r.model_id, s.json, r.error FROM run_summaries r "
                    "LEFT JOIN summaries s ON s.id = r.summary_id WHERE r.run_id = ?",
                    (run_id,)).fetchall()
            except sqlite3.Error as exc:
                raise store_error(self.path, exc) from None
        out: dict[tuple[str, str], GeneratedSummary | str] = {}
        for unit_id, model_id, text, error in rows:
            out[(unit_id, model_id)] = (self.parse(GeneratedSummary, text)
                                        if text else (error or "no summary generated"))
        with self._lock:
            self._run_summaries = (version, out)
        return dict(out)

    # -- records ----------------------------------------------------------------------
    def save_records(self, run_id: str, nodeid: str, records: list[ScoreRecord]) -> None:
        """Replace the records of one test (so a re-run of a test overwrites, not adds)."""
        self.save_records_batch(run_id, [(nodeid, records)])

    def save_records_batch(self, run_id: str,
                           tests: list[tuple[str, list[ScoreRecord]]]) -> None:
        """``save_records`` for many tests in one transaction (a later entry for the same
        test replaces an earlier one)."""
        self.save_record_rows(run_id, [(nodeid, [record_row(r) for r in records])
                                       for nodeid, records in tests])

    def save_record_rows(self, run_id: str, tests: list[tuple[str, list[RecordRow]]]) -> None:
        """``save_records_batch`` for records already made rows by ``record_row``."""
        with self.transaction() as conn:
            conn.executemany("DELETE FROM records WHERE run_id = ? AND nodeid = ?",
                             [(run_id, nodeid) for nodeid, _ in tests])
            latest = dict(tests)
            conn.executemany(
                "INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(run_id, nodeid, i, *row)
                 for nodeid, rows in latest.items() for i, row in enumerate(rows)])

    def load_records(self, run_id: str, benchmark: str | None = None) -> list[ScoreRecord]:
        sql = "SELECT json FROM records WHERE run_id = ?"
        params: list[object] = [run_id]
        if benchmark is not None:
            sql += " AND benchmark = ?"
            params.append(benchmark)
        sql += " ORDER BY nodeid, seq"
        return [self.parse(ScoreRecord, r[0]) for r in self.execute(sql, params)]


#: A record as the store keeps it: benchmark, unit id, model id, evaluator and its JSON.


RecordRow = tuple[str, str, str, str, str]


def record_row(record: ScoreRecord) -> RecordRow:
    """The record's row in the store; ``ScoreRecord.model_validate_json`` reads its JSON."""
    return (record.benchmark, record.unit_id, record.model_id, record.evaluator,
            record.model_dump_json(by_alias=True))


def dumps(obj: object) -> str:
    """Compact, key-sorted JSON for hashing and storage."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
