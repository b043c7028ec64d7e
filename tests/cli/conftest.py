"""Fixtures of the command-line tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_summarybench.cli import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with one Python file, ``summarybench init`` run in it, as the cwd."""
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "a.py").write_text("def f(x):\n    return x + 1\n")
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--name", "x", "--codebase", "code"]) == 0
    return tmp_path
