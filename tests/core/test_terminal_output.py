"""What reaches the terminal from outside: a repository's file names, model names kept in
the store, keys of a YAML file. None may set the terminal's title, clear its screen or
forge a line: control characters are written as escapes, as in the reports, and a path
is quoted so that a shell reads it back as the same path (``$'a\\nb'``), never with a
newline shown as a space."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_summarybench.cli import main
from pytest_summarybench.core.printable import neutralise, shown_name, shown_path

#: Sets the window title (OSC 0 ... BEL), clears the screen (CSI 2J) and starts a line.
EVIL = "evil\x1b]0;pwned\x07\x1b[2J\nFORGED: all clear"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def _assert_inert(text: str) -> None:
    assert not any(c in text for c in RAW), repr(text)
    assert "FORGED" not in "\n".join(line for line in text.splitlines()
                                     if line.startswith("FORGED"))


def test_extract_warnings_quote_file_names(tmp_path: Path) -> None:
    root = tmp_path / "code"
    root.mkdir()
    (root / "ok.py").write_text("def ok(a):\n    b = a\n    return b\n")
    name = EVIL + ".py"
    (root / name).write_bytes(b"\x00binary")  # skipped, with a warning naming it
    (root / "space name.py").write_bytes(b"\x00binary")
    done = subprocess.run([sys.executable, "-m", "pytest_summarybench.cli", "extract",
                           str(root)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    _assert_inert(done.stderr)
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: {shown_path(name)}: skipped: binary file (NUL byte in the first 8 KiB)",
        "warning: 'space name.py': skipped: binary file (NUL byte in the first 8 KiB)"]
    assert len(done.stderr.splitlines()) == 2  # nothing forged a line of its own
    if shutil.which("bash"):  # the name pastes back into a shell as itself
        back = subprocess.run(["bash", "-c", f"cd {shown_path(str(root))} && "
                               f"test -f {shown_path(name)} && echo found"],
                              capture_output=True, text=True)
        assert back.stdout == "found\n", back.stderr


def _store_with_runs(path: Path) -> None:
    """A store holding one run whose model names carry terminal controls."""
    from pytest_summarybench.report.runs import save_session_run
    from pytest_summarybench.schemas import BenchmarkReport
    from pytest_summarybench.schemas.report import RunSelection
    from pytest_summarybench.store import Store
    from tests.report.synthetic_report import make_report

    text = make_report(n_units=12).model_dump_json(by_alias=True)
    text = text.replace("openai/alpha", json.dumps("openai/alpha" + EVIL)[1:-1])
    report = BenchmarkReport.model_validate_json(text)
    report.metadata.run = RunSelection(id="0123456789ab", complete=True)
    store = Store(path)
    try:
        save_session_run(store, report, report.model_dump_json(by_alias=True))
    finally:
        store.close()


def test_runs_and_compare_escape_model_names_from_the_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store.sqlite"
    _store_with_runs(store)
    assert main(["runs", "--store", str(store)]) == 0
    listed = capsys.readouterr().out
    _assert_inert(listed)
    assert shown_name("openai/alpha" + EVIL) in listed
    assert main(["compare", "alpha", "beta", "--store", str(store)]) == 0
    compared = capsys.readouterr().out
    _assert_inert(compared)
    assert compared.splitlines()[0].startswith(shown_name("openai/alpha" + EVIL) + " vs ")


def test_a_configuration_error_escapes_the_key(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "summarybench.yaml").write_text(
        "name: t\n" + json.dumps(EVIL) + ": 1\n", encoding="utf-8")
    assert main(["config", "--config", str(tmp_path / "summarybench.yaml"),
                 "--sample-size", "5"]) == 2
    err = capsys.readouterr().err
    _assert_inert(err)
    assert len(err.splitlines()) == 1
    assert shown_name(EVIL) in err


def test_a_store_error_quotes_the_path_so_the_advice_pastes_back(tmp_path: Path) -> None:
    from pytest_summarybench.store import Store, StoreError

    folder = tmp_path / "out\nput"
    folder.mkdir()
    path = folder / "store.sqlite"
    path.write_bytes(os.urandom(8192))
    with pytest.raises(StoreError) as caught:
        Store(path, check=True).execute("SELECT 1")
    message = str(caught.value)
    assert "\n" not in message
    assert f"mv {shown_path(path)} {shown_path(str(path) + '.damaged')}" in message \
        or f"mv {shown_path(path)} {shown_path(path)}.damaged" in message


@pytest.mark.parametrize("path", ["plain/file.py", "with space.py", "new\nline.py",
                                  "tab\tand 'quote'.py", "esc\x1b[2J.py", "caf\u00e9.py",
                                  "c1\x85.py", "back\\slash.py", os.fsdecode(b"bad\xff.py")])
def test_shown_paths_read_back_in_a_shell_as_the_same_path(path: str) -> None:
    shown = shown_path(path)
    assert "\n" not in shown and not any(c in shown for c in RAW)
    if shutil.which("bash") is None:
        pytest.skip("no bash to read the quoted path back")
    back = subprocess.run(["bash", "-c", f"printf %s {shown}"], capture_output=True)
    assert back.stdout == os.fsencode(path)


def test_names_are_neutralised_as_in_the_reports() -> None:
    """``shown_name`` writes control characters as ``neutralise`` does (the reports), and
    line breaks as escapes instead of keeping them."""
    assert shown_name(EVIL) == neutralise(EVIL).replace("\n", "\\n")
    assert shown_name("plain/model-1") == "plain/model-1"
