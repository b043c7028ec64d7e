"""Paths a user gives that are not what they seem (issue 34): an ``--output`` that is a
FIFO or a link, a ``summarybench.yaml`` that is a FIFO or a folder, an invalid
``--languages``, and configuration edits run at once. Each is one line naming the path
and what is wrong, nothing else is touched, and nothing blocks."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_summarybench.cli import main
from pytest_summarybench.report import save_session_run
from pytest_summarybench.report.json_report import report_json
from pytest_summarybench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from synthetic_explorer import make_explorer_inputs, make_explorer_report  # noqa: E402

#: A payload a FIFO or a link must not receive, and the bytes the link's target holds.
THEIRS = "theirs\n"


def _targets(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """A FIFO, a link to a regular file and a link to a FIFO (standing for a link to a
    device such as /dev/stdout), each with the kind the refusal names."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "target.md").write_text(THEIRS)
    (tmp_path / "link.md").symlink_to(tmp_path / "target.md")
    (tmp_path / "stdout").symlink_to(tmp_path / "fifo")
    return {"fifo": (tmp_path / "fifo", "a FIFO (named pipe)"),
            "link": (tmp_path / "link.md", "a symbolic link"),
            "link to a fifo": (tmp_path / "stdout", "a symbolic link")}


def _untouched(tmp_path: Path) -> None:
    assert (tmp_path / "fifo").is_fifo()
    assert (tmp_path / "link.md").is_symlink() and (tmp_path / "stdout").is_symlink()
    assert (tmp_path / "target.md").read_text() == THEIRS
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store holding one run, in a folder with no summarybench.yaml (the cwd)."""
    out = tmp_path / "results"
    out.mkdir()
    report = make_explorer_report(make_explorer_inputs(4, hostile=False))
    store = Store(out / "store.sqlite")
    try:
        save_session_run(store, report, report_json(report))
    finally:
        store.close()
    monkeypatch.chdir(tmp_path)
    return out / "store.sqlite"


@pytest.mark.parametrize("kind", ["fifo", "link", "link to a fifo"])
def test_report_output_replaces_only_a_regular_file(
        stored: Path, tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Payload: ``report --output`` a FIFO or a link. Before: each was replaced by a
    # regular file (``--output /dev/stdout`` replaced the machine's /dev/stdout link).
    path, what = _targets(tmp_path)[kind]
    started = time.monotonic()
    assert main(["report", "--store", str(stored), "--output", str(path)]) == 2
    assert time.monotonic() - started < 20
    line = _one_line(capsys)
    assert f"cannot write {path}: it is {what}, and only a regular file is replaced" in line
    assert "leave it out to print the report" in line
    _untouched(tmp_path)
    # a regular file, or nothing yet, is written as before
    for fresh in (tmp_path / "target.md", tmp_path / "new.md"):
        assert main(["report", "--store", str(stored), "--output", str(fresh)]) == 0
        assert fresh.read_text().startswith("#")


@pytest.mark.parametrize("kind", ["fifo", "link", "link to a fifo"])
def test_extract_output_replaces_only_a_regular_file(
        tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "a.py").write_text("def f(x):\n    y = x + 1\n    return y\n")
    path, what = _targets(tmp_path)[kind]
    assert main(["extract", str(code), "-o", str(path)]) == 2
    line = _one_line(capsys)
    assert f"cannot write {path}: it is {what}" in line and "choose another --output" in line
    _untouched(tmp_path)
    assert main(["extract", str(code), "-o", str(tmp_path / "target.md")]) == 0
    assert '"name": "f"' in (tmp_path / "target.md").read_text()


def test_init_force_does_not_write_into_a_fifo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # Before: ``init --force`` opened the FIFO for writing and blocked.
    (tmp_path / "code").mkdir()
    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "summarybench.yaml")
    assert main(["init", "--name", "x", "--codebase", "code", "--force"]) == 2
    assert "summarybench.yaml: it is a FIFO (named pipe)" in _one_line(capsys)
    assert (tmp_path / "summarybench.yaml").is_fifo()


@pytest.mark.parametrize("kind", ["fifo", "link to a fifo", "folder"])
@pytest.mark.parametrize("command", [["doctor"], ["run"], ["config"], ["add-model", "openai/m"]])
def test_a_config_that_is_not_a_regular_file_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        kind: str, command: list[str]) -> None:
    # Payload: summarybench.yaml a FIFO, a link to one (as to /dev/zero) or a folder.
    # Before: doctor said there was no configuration and `run` began the default benchmark.
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "summarybench.yaml"
    if kind == "folder":
        cfg.mkdir()
        what = "a folder"
    else:
        os.mkfifo(tmp_path / "pipe")
        cfg.symlink_to(tmp_path / "pipe") if kind == "link to a fifo" \
            else (tmp_path / "pipe").rename(cfg)
        what = "a FIFO (named pipe)"
    started = time.monotonic()
    assert main(command) == 2
    assert time.monotonic() - started < 20
    line = _one_line(capsys)
    assert f"cannot read config file summarybench.yaml: not a regular file: {what}" in line


@pytest.mark.parametrize("value", ["cobol", "python,py\x1b[2J"])
def test_extract_languages_is_checked_before_the_file_is_written(
        project: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    # Before: the value was saved, then a traceback; every later run failed at
    # collection while doctor said all was fine; an ESC went into the YAML raw.
    cfg = project / "summarybench.yaml"
    before = cfg.read_bytes()
    assert main(["extract", "--languages", value]) == 2
    line = _one_line(capsys)
    assert line.startswith("summarybench extract: error: --languages: unknown language(s)")
    assert "\x1b" not in line
    assert cfg.read_bytes() == before
    assert not list(project.glob(".summarybench.yaml*tmp"))


def test_an_unknown_language_written_by_hand_is_a_config_error(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = project / "summarybench.yaml"
    cfg.write_text(cfg.read_text().replace("codebase:\n", "codebase:\n  languages: [cobol]\n",
                                           1))
    assert main(["doctor"]) == 2
    assert "unknown language(s) ['cobol']" in _one_line(capsys)


def test_model_edits_run_at_once_all_land(project: Path) -> None:
    # Payload: several add-model at once. Before: each read the file before the others
    # wrote it; two at once kept one model (the other printed a StopIteration traceback),
    # ten at once lost eight.
    names = [f"m{i}" for i in range(6)]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    procs = [subprocess.Popen([sys.executable, "-m", "pytest_summarybench.cli", "add-model",
                               f"openai/{name}", "--api-endpoint", "http://127.0.0.1:9/v1"],
                              cwd=project, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for name in names]
    results = [p.communicate(timeout=300) for p in procs]
    for proc, (_, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    from pytest_summarybench.cli._common import load_checked

    listed = [m.id for m in load_checked(project / "summarybench.yaml").test_models()]
    assert sorted(listed) == [f"openai/{name}" for name in names]


def test_an_edit_waiting_on_a_held_lock_says_so_and_gives_up(
        project: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # Payload: another command holds the configuration's edit lock and never lets go. The
    # edit names the lock after a moment and stops at the wait with one line, the file
    # unchanged, instead of waiting silently.
    from filelock import FileLock

    from pytest_summarybench.cli import _common
    from pytest_summarybench.core import locks

    monkeypatch.setattr(_common, "EDIT_WAIT_S", 1.5)
    monkeypatch.setattr(locks, "NOTICE_S", 0.5)
    config = project / "summarybench.yaml"
    before = config.read_bytes()
    held = FileLock(str(project / ".summarybench.yaml.lock"))
    held.acquire()
    try:
        code = main(["add-model", "openai/late", "--api-endpoint", "http://127.0.0.1:9/v1"])
    finally:
        held.release()
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 2 and "is held by" in err and "stayed locked for" in err
    assert ".summarybench.yaml.lock (edits of summarybench.yaml)" in err
    assert config.read_bytes() == before
