"""Publishing a session's reports (``report/files.py``: ``publish``): all or nothing.

Each failure (a full disk while writing, a rename that fails half way, a folder or a FIFO
at a published path) must leave the output folder's published files byte for byte as
they were, including the older ``*.previous.*`` (a gate's baseline), with no temporary
file left; a success moves the earlier set to ``*.previous.*`` and the new one in.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.report import files
from pytest_summarybench.report.files import PUBLISHED, PublishRefused, publish

NEW = {"results.json": '{"run": "new"}', "report.md": "# new", "report.html": "<p>new",
       "explorer.html": "<p>new explorer"}


def _folder(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    for name in PUBLISHED:
        (out / name).write_text(f"earlier {name}")
    (out / "results.previous.json").write_text('{"the gate": "baseline"}')
    (out / "store.sqlite").write_text("not ours to touch")
    return out


def _state(out: Path) -> dict[str, object]:
    """Each entry of ``out``: a file's bytes, else its kind (never opened)."""
    found: dict[str, object] = {}
    for path in sorted(out.iterdir()):
        mode = os.lstat(path).st_mode
        found[path.name] = path.read_bytes() if stat.S_ISREG(mode) else stat.S_IFMT(mode)
    return found


def test_publish_moves_the_earlier_set_aside_then_the_new_one_in(tmp_path: Path) -> None:
    out = _folder(tmp_path)
    copy = tmp_path / "out" / "runs" / "r1"
    paths = publish(out, NEW, copies=[copy])
    assert paths == {name: out / name for name in NEW}
    for name, text in NEW.items():
        assert (out / name).read_text() == text
        assert (copy / name).read_text() == text
        previous = out / files.previous_name(name)
        assert previous.read_text() == f"earlier {name}"
    assert not [p for p in out.iterdir() if p.name.endswith((".tmp", ".old"))]
    assert (out / "store.sqlite").read_text() == "not ours to touch"


def test_a_session_without_html_still_moves_the_earlier_html_aside(tmp_path: Path) -> None:
    # An earlier report.html must not pass for this session's.
    out = _folder(tmp_path)
    publish(out, {"results.json": "{}"})
    assert not (out / "report.html").exists()
    assert (out / "report.previous.html").read_text() == "earlier report.html"


def _failing(real: Callable[..., Any], at: int, error: OSError) -> Callable[..., Any]:
    """``real``, except that its ``at``-th call raises ``error``."""
    calls = []

    def call(*args: Any) -> Any:
        calls.append(args)
        if len(calls) == at:
            raise error
        return real(*args)

    return call


@pytest.mark.parametrize(("target", "at", "error"), [
    # the third temporary file cannot be written (a full disk)
    ("write_temporary", 3, OSError(28, "No space left on device")),
    # the sixth rename fails, after the earlier results.json and its older previous were
    # moved: everything is put back, results.previous.json included
    ("replace", 6, OSError(5, "Input/output error")),
])
def test_a_failure_while_publishing_leaves_the_folder_byte_for_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, at: int,
        error: OSError) -> None:
    # Before: the earlier reports were renamed *.previous.* when the session ended,
    # whatever happened next (a full disk left the folder without results.json).
    out = _folder(tmp_path)
    before = _state(out)
    owner = files if target == "write_temporary" else files.os
    monkeypatch.setattr(owner, target, _failing(getattr(owner, target), at, error))
    with pytest.raises(OSError, match=error.strerror):
        publish(out, NEW)
    monkeypatch.undo()
    assert _state(out) == before


@pytest.mark.parametrize("kind", ["fifo", "folder", "previous folder", "symlink"])
def test_a_path_that_is_not_a_file_publishes_nothing_and_never_blocks(
        tmp_path: Path, kind: str) -> None:
    # Payload: a FIFO or a folder where a report (or its previous) goes. Before: the
    # reports before it were moved in, the others aside, and temporaries left behind.
    out = _folder(tmp_path)
    if kind == "fifo":
        (out / "results.json").unlink()
        os.mkfifo(out / "results.json")
        says = "results.json there is a FIFO (named pipe), not a file: move it away"
    elif kind == "folder":
        (out / "report.md").unlink()
        (out / "report.md").mkdir()
        says = "report.md there is a folder, not a file: move it away"
    elif kind == "symlink":
        # Before: the rename replaced the user's link with a regular file.
        (out / "report.md").unlink()
        (tmp_path / "elsewhere.md").write_text("theirs", encoding="utf-8")
        (out / "report.md").symlink_to(tmp_path / "elsewhere.md")
        says = "report.md there is a symbolic link, not a file: move it away"
    else:
        (out / "report.previous.html").mkdir()
        says = "report.previous.html there is a folder"
    before = _state(out)
    started = time.monotonic()
    with pytest.raises(PublishRefused, match=re.escape(says)):
        publish(out, NEW, copies=[out / "runs" / "r1"])
    assert time.monotonic() - started < 10
    assert _state(out) == before


def test_a_fifo_at_the_temporary_name_does_not_block(tmp_path: Path) -> None:
    out = _folder(tmp_path)
    os.mkfifo(out / f"report.md.{os.getpid()}.tmp")
    publish(out, NEW)
    assert (out / "report.md").read_text() == "# new"
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
