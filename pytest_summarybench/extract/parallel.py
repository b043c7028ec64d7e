"""Reading and extracting files, in this process or spread over worker processes.

Per-file work (read, parse, query, units, their content and hashes: ``prepare.py``) is
independent, so large codebases are split into size-balanced shares, one extracted here and
the others in worker processes; each worker keeps its own parser and query caches and sends
back plain data. Call linking and CodeUnit building stay in the parent, so the result is
the same whatever the number of workers.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor

from .config import ExtractionConfig
from .files import SourceFile, read_source
from .prepare import prepare
from .units import FileUnits, extract_file

PARALLEL_MIN_BYTES = 2_000_000
"""Below this much source, starting workers costs more than it saves."""
MAX_AUTO_WORKERS = 8

Outcome = tuple[SourceFile, "FileUnits | None", str]
"""A file, its extraction (None when skipped) and the skip reason."""


def extract_one(source: SourceFile, config: ExtractionConfig) -> Outcome:
    src, reason = read_source(source, config)
    if src is None:
        return source, None, reason
    try:
        extracted = extract_file(source.path, source.language, src)
    except (RecursionError, MemoryError, ValueError, RuntimeError) as exc:
        return source, None, f"parser failed: {type(exc).__name__}: {exc}"
    prepare(extracted, config)
    return source, extracted, ""


def _extract_chunk(chunk: list[SourceFile], config: ExtractionConfig) -> list[Outcome]:
    return [extract_one(source, config) for source in chunk]


def worker_count(config: ExtractionConfig, sources: list[SourceFile]) -> int:
    """How many processes to use: ``config.workers``, or by codebase size when 0."""
    if config.workers:
        return max(1, min(config.workers, len(sources)))
    total = 0
    for source in sources:
        try:
            total += os.path.getsize(source.abspath)
        except OSError:
            continue
    if total < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(os.cpu_count() or 1, MAX_AUTO_WORKERS, len(sources)))


def _chunks(sources: list[SourceFile], n: int) -> list[list[SourceFile]]:
    """``n`` chunks of about equal bytes (largest files first, each to the lightest)."""
    sized = []
    for source in sources:
        try:
            sized.append((os.path.getsize(source.abspath), source))
        except OSError:
            sized.append((0, source))
    sized.sort(key=lambda s: (-s[0], s[1].path))
    loads = [0] * n
    chunks: list[list[SourceFile]] = [[] for _ in range(n)]
    for size, source in sized:
        i = loads.index(min(loads))
        loads[i] += size
        chunks[i].append(source)
    return [c for c in chunks if c]


def extract_all(sources: list[SourceFile], config: ExtractionConfig) -> list[Outcome]:
    """Every file's outcome, in the order of ``sources``."""
    workers = worker_count(config, sources)
    if workers <= 1:
        return [extract_one(source, config) for source in sources]
    # fork is cheapest (workers inherit loaded grammars) but unsafe once threads run.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() \
        and threading.active_count() == 1 else "spawn"
    context = multiprocessing.get_context(method)
    # This process extracts one share itself while workers do the others: one process
    # fewer to start, and one share fewer to pickle back.
    own, *chunks = _chunks(sources, workers)
    with ProcessPoolExecutor(max_workers=len(chunks), mp_context=context) as pool:
        futures = [pool.submit(_extract_chunk, chunk, config) for chunk in chunks]
        outcomes = _extract_chunk(own, config)
        for future in futures:
            outcomes.extend(future.result())
    by_path = {outcome[0].path: outcome for outcome in outcomes}
    return [by_path[source.path] for source in sources]
