"""The run's one-way pipeline: extract -> sample -> (controller) generate -> prepare
evaluators. Tests then evaluate, and the controller aggregates and reports.

Extraction and sampling run in whichever process first needs the units (the controller,
or the first xdist worker to collect) under an inter-process lock; the result goes to the
store and every other process reads it, so all workers collect the same matrix.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from ..context import RunContext
from ..core.printable import neutralise, shown_path, utf8_text
from ..core.progress import Progress
from ..core.walk import walk_folders
from ..schemas import BenchmarkRun, CodebaseInfo, CodeUnit
from ..settings import Settings, SettingsError
from ..store import Store, StoreError

if TYPE_CHECKING:
    from ..extract.codebase import UnitStream

#: Units written to the store per transaction while extraction streams them.
_STORE_BATCH = 2000
#: Characters of units' content per transaction: a batch of long units is written sooner,
#: so that storing holds a few MB of code, not 2,000 units' worth (docs/performance.md,
#: "Memory per unit").
_STORE_BATCH_CHARS = 4_000_000

# Folders never worth stat-ing for the codebase fingerprint.
_PRUNE = {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
          ".pytest_cache", ".ruff_cache", "dist", "build", "vendor", "site-packages"}


def codebase_fingerprint(root: Path, written: Iterable[Path] = ()) -> str:
    """Hash of every file's relative path, size and mtime: changes when the code does.

    :param written: paths the run itself writes (its output folder, its store): left out,
        with every file whose name extends theirs (``store.sqlite-wal``, ``.lock``), so
        that an output folder inside the codebase does not change the id of every run.
    """
    own = [os.path.realpath(p) for p in written]
    h = hashlib.sha256()
    for folder in walk_folders(str(root)):
        folder.dirs[:] = sorted((d for d in folder.dirs if d.name not in _PRUNE
                                 and not _written(folder.real, d.name, own)),
                                key=lambda d: d.name)
        for entry in sorted(folder.files, key=lambda e: e.name):
            if _written(folder.real, entry.name, own):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            # A name that is not UTF-8 holds surrogates (os.fsdecode): its own bytes.
            h.update(f"{folder.child_rel(entry.name)}\0{st.st_size}\0{st.st_mtime_ns}\n"
                     .encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:16]


def _written(folder: str, name: str, own: list[str]) -> bool:
    """Whether ``folder/name`` is one of the run's own paths, or a file beside one named
    after it (``store.sqlite`` -> ``store.sqlite-wal``, ``store.sqlite.lock``)."""
    path = os.path.join(folder, name)
    return any(path == p or (path.startswith(p) and path[len(p)] in "-.") for p in own)


def check_codebase(settings: Settings) -> Path:
    """The codebase root, or a ``SettingsError`` saying what to do."""
    root = settings.codebase_root
    if not root.is_dir():
        raise SettingsError(
            f"codebase.root = {shown_path(root)}: not a readable directory; pass "
            "--sb-codebase PATH or set codebase.root in summarybench.yaml")
    return root


def run_id_for(settings: Settings) -> str:
    """Stable for the same configuration on the same code, so a re-run resumes (the
    run's own output folder and store are not part of the code, wherever they are)."""
    root = check_codebase(settings)
    return settings.fingerprint(codebase_fingerprint(
        root, written=(settings.output_dir, settings.store_path)))


def ensure_units(settings: Settings, store: Store,
                 progress: Progress | None = None) -> RunContext:
    """Extract and sample the codebase once per configuration; return the run context,
    whose long phases report to ``progress`` (default: stderr)."""
    from ..core.locks import acquire_file_lock

    progress = progress or Progress()
    run_id = run_id_for(settings)
    lock_file = str(store.path) + ".lock"
    try:
        # Another session extracting this configuration holds it; a stuck one, or any
        # process holding the file, is named after 2 s and given up on at storeWaitS.
        lock = acquire_file_lock(lock_file, wait_s=settings.output.store_wait_s,
                                 notice=progress.write_line, what="extraction into the store",
                                 setting="output.storeWaitS")
    except OSError as exc:
        if isinstance(exc, TimeoutError):  # LockWaitError: one line already
            raise
        # Opening the store names the problem best (read-only, missing directory...).
        store.execute("SELECT 1")
        raise StoreError(f"cannot create the store's lock file {shown_path(lock_file)} "
                         f"({exc.strerror or exc}): make its directory writable, or point "
                         "--sb-store (output.store) at a writable path") from None
    try:
        if store.load_run(run_id) is None:
            _extract_and_sample(settings, store, run_id, progress)
    finally:
        lock.release()
    return RunContext(settings, store, run_id, progress=progress)


def _extract_and_sample(settings: Settings, store: Store, run_id: str,
                        progress: Progress) -> None:
    """Extract into the store as units are built (a batch at a time: no step holds every
    unit), then sample from light (id, identity, language, type) rows."""
    from ..core.heap import release_freed_memory
    from ..extract.codebase import stream_units
    from ..extract.sampling import choose

    # Extraction writes the units' data into a folder beside the store and reads it back
    # a file at a time (``extract/spill.py``): the store's disk, not a temporary file
    # system that may live in memory.
    folder = store.path.parent
    try:
        with tempfile.TemporaryDirectory(prefix=".summarybench-extraction-",
                                         dir=folder) as spill:
            stream = stream_units(settings.extraction_config(), progress, Path(spill))
            entries = _store_units(settings, store, run_id, stream, progress)
        release_freed_memory()  # long units' text, freed but kept by the heap
    except OSError as exc:  # source files that cannot be read are skipped, not raised
        raise StoreError(f"extraction cannot write its working files in {folder} "
                         f"({exc.strerror or exc}): free some space there, or point "
                         "--sb-store (output.store) at another folder") from None
    result = stream.result
    ev = settings.evaluation
    sampled = choose(entries, ev.sampling, ev.sample_size, ev.seed)
    store.mark_sampled(run_id, sampled)
    store.save_unit_groups(run_id, dict(Counter((e[2], e[3]) for e in entries)))
    languages = sorted({language for _, _, language, _ in entries})
    cb = settings.codebase
    run = BenchmarkRun(
        id=run_id,
        name=settings.name,
        config=settings.benchmark_config(),
        codebase_info=CodebaseInfo(
            name=cb.name or settings.codebase_root.resolve().name,
            repository=cb.repository, commit=cb.commit,
            languages=languages,
            total_code_units=len(entries), sampled_code_units=len(sampled)),
        models_under_test=settings.test_models(),
        judge_models=settings.judge_models(),
        status="pending",
        started_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    store.save_run(run)
    if result.skipped:
        # A name that is not UTF-8 (skipped for it) is stored with its odd bytes as
        # ``\xff``: SQLite holds text.
        store.skipped_files.save(run_id, [(utf8_text(s.path), s.reason)
                                          for s in result.skipped])


def _store_units(settings: Settings, store: Store, run_id: str, stream: UnitStream,
                 progress: Progress) -> list[tuple[str, str, str, str]]:
    """Store the stream's units a batch at a time; (id, identity, language, type) of each
    unit of a wanted type, for sampling."""
    from ..extract.sampling import identity

    wanted = set(settings.extraction.types)
    entries: list[tuple[str, str, str, str]] = []
    store.clear_units(run_id)
    batch: list[CodeUnit] = []
    held = 0
    with progress.phase("summarybench storing units", stream.total, unit="unit") as phase:
        seen = 0
        for unit in stream.units:
            seen += 1
            if unit.type in wanted:
                entries.append((unit.id, identity(unit), unit.language, unit.type))
                batch.append(unit)
                held += len(unit.content)
            if (len(batch) >= _STORE_BATCH or held >= _STORE_BATCH_CHARS
                    or seen % _STORE_BATCH == 0):
                store.add_units(run_id, len(entries) - len(batch), batch)
                batch, held = [], 0
                phase.advance(seen - phase.done)
        store.add_units(run_id, len(entries) - len(batch), batch)
        phase.advance(seen - phase.done)
    return entries


def skipped_files(store: Store, run_id: str) -> list[tuple[str, str]]:
    """(path, reason) of files extraction skipped for this run."""
    return store.skipped_files.of(run_id)


#: Skipped files a session's summary names one by one; the rest are counted by reason.
SKIPPED_NAMED = 10
#: A byte that was not UTF-8, as ``utf8_text`` stored it (``\xff``).
_STORED_BYTE = re.compile(r"\\x([89a-f][0-9a-f])")


def _reason_kind(reason: str) -> str:
    """A skip reason without its particulars: ``not a regular file: FIFO`` -> ``not a
    regular file``, ``too large (1,200,000 bytes; ...)`` -> ``too large``."""
    return re.split(r": | \(", reason, maxsplit=1)[0]


def skipped_file_lines(skipped: list[tuple[str, str]],
                       named: int = SKIPPED_NAMED) -> list[str]:
    """What a session prints of the files extraction skipped (``skipped_files``): a line,
    the first ``named`` files with their reasons, and how many more for each reason.
    Generated files are left out, as ``summarybench extract`` leaves them out of its
    warnings. Names are quoted as a shell reads them back (a byte that was not UTF-8 as
    ``\xff``, a control character escaped)."""
    from ..extract.files import GENERATED

    listed = [(path, reason) for path, reason in skipped if not reason.startswith(GENERATED)]
    if not listed:
        return []
    n = len(listed)
    out = [f"extraction skipped {n:,} file{'s' if n != 1 else ''} or folder"
           f"{'s' if n != 1 else ''} of the codebase:"]
    for path, reason in listed[:named]:
        # the stored \xff back to the byte it stood for, which shown_path writes as \xff
        raw = _STORED_BYTE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), path)
        out.append(f"  {shown_path(raw)}: {neutralise(reason, one_line=True)}")
    rest = Counter(_reason_kind(reason) for _, reason in listed[named:])
    if rest:
        out.append(f"  ... and {n - named:,} more: " + "; ".join(
            f"{count:,} {neutralise(kind, one_line=True)}" for kind, count in
            sorted(rest.items(), key=lambda item: (-item[1], item[0]))))
    return out
