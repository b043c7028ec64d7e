"""``engine.pipeline``: extraction and sampling once per configuration and code, a run id
that changes when either does, and the store's lock and errors named."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_summarybench.core.progress import Progress
from pytest_summarybench.engine.pipeline import (
    check_codebase,
    codebase_fingerprint,
    ensure_units,
    run_id_for,
    skipped_files,
)
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.settings import SettingsError, load_settings
from pytest_summarybench.store import Store, StoreError
from tests.engine.toy import CODE


def _settings(root: Path, tmp_path: Path, **overrides: object):  # noqa: ANN202
    return load_settings(None, {"codebase.root": str(root), "codebase.languages": ["python"],
                                "output.directory": str(tmp_path / "out"), **overrides},
                         base_dir=tmp_path, families=BUILTIN_FAMILIES)


def test_the_fingerprint_follows_the_code_and_ignores_tool_folders(codebase: Path) -> None:
    first = codebase_fingerprint(codebase)
    assert codebase_fingerprint(codebase) == first
    for folder in (".git", "node_modules", "__pycache__", ".venv"):
        (codebase / folder).mkdir()
        (codebase / folder / "noise.py").write_text("x = 1\n")
    assert codebase_fingerprint(codebase) == first
    (codebase / "billing.py").write_text(CODE + "\n# changed\n")
    assert codebase_fingerprint(codebase) != first


def test_the_run_id_changes_with_the_configuration(codebase: Path, tmp_path: Path) -> None:
    base = run_id_for(_settings(codebase, tmp_path))
    assert run_id_for(_settings(codebase, tmp_path)) == base
    assert run_id_for(_settings(codebase, tmp_path, **{"evaluation.seed": 7})) != base


def test_a_missing_codebase_says_which_option_to_set(tmp_path: Path) -> None:
    settings = _settings(tmp_path / "nowhere", tmp_path)
    with pytest.raises(SettingsError) as info:
        check_codebase(settings)
    message = str(info.value)
    assert f"codebase.root = {tmp_path / 'nowhere'}: not a readable directory" in message
    assert "--sb-codebase PATH" in message


def test_units_are_extracted_once_per_configuration(codebase: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _settings(codebase, tmp_path, **{"evaluation.sampleSize": 2,
                                                "evaluation.sampling": "random"})
    settings.output_dir.mkdir(parents=True)
    store = Store(settings.store_path)
    try:
        ctx = ensure_units(settings, store, Progress(enabled=False))
        run = store.load_run(ctx.run_id)
        assert run is not None and run.status == "pending"
        assert run.codebase_info.languages == ["python"]
        assert run.codebase_info.sampled_code_units == len(ctx.units) == 2
        assert run.codebase_info.total_code_units == len(ctx.all_units) > 2
        # again: nothing extracted, the same sample
        sample = [u.id for u in ctx.units]

        def no_second_extraction(*args: object, **kwargs: object) -> None:
            raise AssertionError("extracted again")

        monkeypatch.setattr("pytest_summarybench.extract.codebase.stream_units",
                            no_second_extraction)
        again = ensure_units(settings, store, Progress(enabled=False))
        assert again.run_id == ctx.run_id and [u.id for u in again.units] == sample
    finally:
        store.close()


def test_files_extraction_skipped_are_kept_with_the_run(codebase: Path, tmp_path: Path
                                                        ) -> None:
    (codebase / "broken.py").write_bytes(b"def f(:\n\xff\xfe not utf-8\n")
    settings = _settings(codebase, tmp_path)
    settings.output_dir.mkdir(parents=True)
    store = Store(settings.store_path)
    try:
        ctx = ensure_units(settings, store, Progress(enabled=False))
        skipped = skipped_files(store, ctx.run_id)
        assert [path for path, _ in skipped] == ["broken.py"]
        assert skipped[0][1]  # with its reason
    finally:
        store.close()


def test_a_lock_file_that_cannot_be_created_is_a_store_error_naming_it(
        codebase: Path, tmp_path: Path) -> None:
    settings = _settings(codebase, tmp_path)
    settings.output_dir.mkdir(parents=True)
    # a folder where the lock file should be: opening it fails, for root too
    (settings.output_dir / "store.sqlite.lock").mkdir()
    store = Store(settings.store_path)
    try:
        with pytest.raises(StoreError) as info:
            ensure_units(settings, store, Progress(enabled=False))
    finally:
        store.close()
    message = str(info.value)
    assert message.startswith("cannot create the store's lock file ")
    assert "store.sqlite.lock" in message and "--sb-store" in message


FLOCKER = """
import fcntl, sys, time
fh = open(sys.argv[1], "a")
fcntl.flock(fh, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(120)
"""


def test_a_held_lock_file_is_named_then_given_up_on(codebase: Path, tmp_path: Path) -> None:
    # Payload: `flock store.sqlite.lock sleep 200` beside the store. Before: the session
    # waited 600 s in silence (the SQLite lock had a notice and storeWaitS, the lock file
    # none).
    import subprocess
    import sys
    import time

    from pytest_summarybench.core.locks import LockWaitError

    settings = _settings(codebase, tmp_path, **{"output.storeWaitS": 3})
    settings.output_dir.mkdir(parents=True)
    lock_file = f"{settings.store_path}.lock"
    holder = subprocess.Popen([sys.executable, "-c", FLOCKER, lock_file],
                              stdout=subprocess.PIPE)
    store = Store(settings.store_path)
    said: list[str] = []
    progress = Progress(enabled=False)
    progress.write_line = said.append  # type: ignore[method-assign]
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"locked\n"
        started = time.monotonic()
        with pytest.raises(LockWaitError) as caught:
            ensure_units(settings, store, progress)
        elapsed = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
        store.close()
    assert 3 <= elapsed < 30, elapsed
    message = str(caught.value)
    assert message.startswith(f"lock file {lock_file} (extraction into the store) stayed "
                              "locked for 3 s, held by another process (pid "
                              f"{holder.pid} (")
    assert message.endswith("raise output.storeWaitS") and "\n" not in message
    assert said == [said[0]] and said[0].startswith(
        f"summarybench: lock file {lock_file} (extraction into the store) is held by "
        f"another process (pid {holder.pid} (")
    assert said[0].endswith("waiting up to 3 s (output.storeWaitS)")
