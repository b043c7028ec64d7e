"""A session's own working files (``RunContext.work_dir``): claimed by the controller
before evaluators build anything there, removed when the session ends.

Each session of a configuration works in ``work/<run id>/<session id>``: two sessions on
one output folder used to share ``work/<run id>``, and the second rebuilt the vector index
(``retrieval/embedding``: delete the collection, create it, add the summaries 1,000 at a
time) while the first one's tests searched it. A search of the empty collection failed
("Number of requested results 0": 250 items of one run), and one between two batches
would have ranked each unit among part of the units, silently. The controller holds a
lock on ``<session id>.lock`` beside its folder while the session runs; a folder whose
lock nobody holds belongs to a session that was killed, and is removed by the next one
(of any configuration: a killed session of a configuration since changed left its folder
for good).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..context import session_work_dir

if TYPE_CHECKING:
    from ..context import RunContext


@dataclass
class WorkDirClaim:
    """The controller's hold on its session's folder."""

    path: Path
    lock: Any

    def release(self) -> None:
        """Remove the folder (nothing in it outlives the session), then the lock, then
        ``work/<run id>`` and ``work/`` when nothing else is in them."""
        shutil.rmtree(self.path, ignore_errors=True)
        self.lock.release()
        Path(self.lock.lock_file).unlink(missing_ok=True)
        for parent in (self.path.parent, self.path.parent.parent):
            try:
                parent.rmdir()  # fails while another session's lock or folder is there
            except OSError:
                break


def claim_work_dir(ctx: RunContext) -> WorkDirClaim:
    """Lock this session's folder (created after the lock is held, so that no other
    session takes it for a dead one's) and remove the folders of sessions that died."""
    from filelock import FileLock

    path = session_work_dir(ctx.settings, ctx.run_id, ctx.session)
    lock = FileLock(str(path) + ".lock")
    for attempt in range(3):
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            lock.acquire(timeout=0)  # its own name, a fresh uuid: nobody else holds it
            break
        except FileNotFoundError:  # another session's release removed the empty parent
            if attempt == 2:
                raise
    path.mkdir(exist_ok=True)
    _remove_dead(path.parent, keep=path.name)
    # Sessions of other configurations that died (a killed run, then a changed
    # configuration) left their folders there for good; those, and the empty run
    # folders they leave, go too (a run folder another session is about to use is
    # made again: the retry above).
    for run in path.parent.parent.iterdir():
        if run != path.parent and run.is_dir() and not run.is_symlink():
            _remove_dead(run, keep="")
            try:
                run.rmdir()
            except OSError:
                pass  # a live session's, or its lock
    return WorkDirClaim(path, lock)


def _remove_dead(parent: Path, keep: str) -> None:
    """Remove the session folders under ``parent`` whose lock nobody holds."""
    from filelock import FileLock, Timeout

    for folder in parent.iterdir():
        if folder.name == keep or not folder.is_dir() or folder.is_symlink():
            continue
        lock = FileLock(str(folder) + ".lock")
        try:
            lock.acquire(timeout=0)
        except (Timeout, OSError):
            continue  # a live session's
        try:
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            lock.release()
            Path(lock.lock_file).unlink(missing_ok=True)
