"""A session's working folder (``engine/work_dir.py``) without a pytest session: claimed
under a lock, the folders of sessions whose lock nobody holds removed, a live session's
kept, and everything gone once the last session releases its claim."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from filelock import FileLock

from pytest_summarybench.engine.work_dir import claim_work_dir
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.settings import load_settings


def _ctx(tmp_path: Path, session: str) -> SimpleNamespace:
    settings = load_settings(None, {"output.directory": str(tmp_path / "out")},
                             base_dir=tmp_path, families=BUILTIN_FAMILIES)
    return SimpleNamespace(settings=settings, run_id="run1", session=session)


def test_a_claim_removes_dead_sessions_folders_and_keeps_live_ones(tmp_path: Path) -> None:
    work = tmp_path / "out" / "work" / "run1"
    dead = work / "dead00000000"
    (dead / "index").mkdir(parents=True)  # a killed session's folder: no lock held
    live = work / "live00000000"
    live.mkdir()
    held = FileLock(str(live) + ".lock")
    held.acquire()  # another session that still runs
    try:
        claim = claim_work_dir(_ctx(tmp_path, "mine00000000ffff"))
        assert claim.path == work / "mine00000000" and claim.path.is_dir()
        assert not dead.exists() and live.is_dir()
        claim.release()
        assert not claim.path.exists() and work.is_dir()  # the live session's is still there
    finally:
        held.release()


def test_the_last_release_leaves_no_work_folder(tmp_path: Path) -> None:
    first = claim_work_dir(_ctx(tmp_path, "aaaa00000000"))
    second = claim_work_dir(_ctx(tmp_path, "bbbb00000000"))
    assert first.path != second.path and first.path.parent == second.path.parent
    first.release()
    assert second.path.is_dir()  # not a dead session's: its lock is held
    second.release()
    assert not (tmp_path / "out" / "work").exists()
