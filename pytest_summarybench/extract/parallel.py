"""Reading and extracting files, in this process or spread over worker processes.

Per-file work (read, parse, query, units, their content and hashes: ``prepare.py``) is
independent, so large codebases are split into size-balanced shares, one extracted here and
the others in worker processes; each worker keeps its own parser and query caches and sends
back plain data. Call linking and CodeUnit building stay in the parent, so the result is
the same whatever the number of workers.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from .bounds import Budget, FileTooComplex
from .config import ExtractionConfig
from .files import SourceFile, read_source
from .prepare import prepare
from .spill import SpillWriter
from .units import FileUnits, extract_file

logger = logging.getLogger("pytest_summarybench.extract")

PARALLEL_MIN_BYTES = 1_000_000
"""Automatic workers start from this much source (below it the saving is a few ms)."""
MAX_AUTO_WORKERS = 8

Outcome = tuple[SourceFile, "FileUnits | None", str]
"""A file, its extraction (None when skipped) and the skip reason."""


def extract_one(source: SourceFile, config: ExtractionConfig) -> Outcome:
    src, reason = read_source(source, config)
    if src is None:
        return source, None, reason
    try:
        extracted = extract_file(source.path, source.language, src, Budget())
    except FileTooComplex as exc:
        return source, None, str(exc)
    except (RecursionError, MemoryError, ValueError, RuntimeError) as exc:
        return source, None, f"parser failed: {type(exc).__name__}: {exc}"
    prepare(extracted, config)
    return source, extracted, ""


Done = Callable[[int], None]
"""Told how many more files are extracted (progress); may be called from another thread."""


def _extract_chunk(chunk: list[SourceFile], config: ExtractionConfig,
                   done: Done | None = None, spill: Path | None = None) -> list[Outcome]:
    """The outcomes of ``chunk``'s files; with ``spill``, each file's unit data is written
    into that folder as soon as the file is extracted (``spill.py``) and only the light
    rest is kept (and, from a worker, sent back)."""
    outcomes = []
    writer = SpillWriter(spill) if spill is not None else None
    try:
        for source in chunk:
            outcome = extract_one(source, config)
            if writer is not None and outcome[1] is not None:
                writer.write(outcome[1])
            outcomes.append(outcome)
            if done is not None:
                done(1)
    finally:
        if writer is not None:
            writer.close()
    return outcomes


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def can_fork() -> bool:
    """Whether workers can start by fork: cheap (no re-import) and safe (no threads)."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def worker_count(config: ExtractionConfig, sources: list[SourceFile]) -> int:
    """How many processes to use: ``config.workers``, or by codebase size when 0 (auto).

    Auto uses one process per usable CPU (up to 8) for 1 MB of source or more, only when
    the workers can be forked: starting them with spawn re-imports everything and costs
    more than it saves at these sizes.
    """
    if config.workers:
        return max(1, min(config.workers, len(sources)))
    cpus = usable_cpus()
    if cpus < 2 or not can_fork():
        return 1
    total = 0
    for source in sources:
        try:
            size = os.path.getsize(source.abspath)
        except OSError:
            continue
        if size <= config.filters.max_file_bytes:
            total += size
    if total < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(cpus, MAX_AUTO_WORKERS, len(sources)))


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


def extract_all(sources: list[SourceFile], config: ExtractionConfig,
                done: Done | None = None, spill: Path | None = None) -> list[Outcome]:
    """Every file's outcome, in the order of ``sources``.

    :param done: told of finished files: one by one in this process, a worker's share at
        once when it arrives.
    :param spill: a folder to write the units' data into as files are extracted
        (``FileUnits.spill`` says where; ``spill.py``), None to keep it on the units.
    """
    workers = worker_count(config, sources)
    if workers <= 1:
        return _extract_chunk(sources, config, done, spill)
    # fork is cheapest (workers inherit loaded grammars) but unsafe once threads run.
    context = multiprocessing.get_context("fork" if can_fork() else "spawn")
    # This process extracts one share itself while workers do the others: one process
    # fewer to start, and one share fewer to pickle back.
    own, *chunks = _chunks(sources, workers)
    if not chunks:  # nothing to share (empty files weigh nothing)
        return _extract_chunk(sources, config, done, spill)
    outcomes: list[Outcome] = []
    try:
        with ProcessPoolExecutor(max_workers=len(chunks), mp_context=context) as pool:
            futures = [pool.submit(_extract_chunk, chunk, config, None, spill)
                       for chunk in chunks]
            if done is not None:
                for chunk, future in zip(chunks, futures, strict=True):
                    future.add_done_callback(_count_share(done, len(chunk)))
            outcomes = _extract_chunk(own, config, done, spill)
            for chunk, future in zip(chunks, futures, strict=True):
                try:
                    outcomes.extend(future.result())
                except BrokenProcessPool as exc:
                    # A worker died (killed, out of memory): redo its share here, as
                    # workers=1 would have done it.
                    logger.warning("summarybench extract: a worker process failed (%s); "
                                   "extracting its %d files in this process", exc, len(chunk))
                    outcomes.extend(_extract_chunk(chunk, config, done, spill))
    except OSError as exc:  # no process could be started (fork: EAGAIN, ENOMEM)
        logger.warning("summarybench extract: cannot start worker processes (%s); "
                       "extracting in this process", exc)
        finished = {outcome[0].path for outcome in outcomes}
        outcomes.extend(_extract_chunk([s for s in sources if s.path not in finished],
                                       config, done, spill))
    by_path = {outcome[0].path: outcome for outcome in outcomes}
    return [by_path[source.path] for source in sources]


def _count_share(done: Done, files: int) -> Callable[[Future[list[Outcome]]], None]:
    """A worker's share counts when it arrives whole; a failed one is counted as it is
    extracted again here."""
    def arrived(future: Future[list[Outcome]]) -> None:
        if not future.cancelled() and future.exception() is None:
            done(files)
    return arrived
