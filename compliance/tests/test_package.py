"""The package surface: public names resolve, the plugin module stays cheap to import
(pytest imports it on every run: it is an entry point), and the options the READMEs name
are the ones it declares."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import summarybench_compliance as compliance
import summarybench_compliance.plugin as plugin


def test_public_names_resolve() -> None:
    for name in compliance.__all__:
        assert getattr(compliance, name) is not None
    documented = '"""Adds one to x for the demo pipeline."""\nx = 1\n'
    assert compliance.scan_code(documented).primary is None


def test_plugin_import_loads_no_scanner_model_layer_or_scipy() -> None:
    probe = ("import sys, summarybench_compliance.plugin; "
             "print(sorted(m for m in sys.modules if m.startswith(('litellm', 'scipy', "
             "'numpy', 'summarybench_compliance.', 'pytest_summarybench.llm'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "['summarybench_compliance.plugin']"


def test_documented_compliance_options_exist() -> None:
    # This distribution's README, and the repository's where it is part of one.
    here = Path(__file__).resolve().parents[1]
    docs = "".join(path.read_text(encoding="utf-8")
                   for path in (here / "README.md", here.parent / "README.md")
                   if path.is_file())
    documented = set(re.findall(r"(--compliance-[a-z-]+[a-z])", docs))
    declared = set(re.findall(r'"(--compliance-[a-z-]+)"', Path(plugin.__file__).read_text()))
    assert documented == declared


def test_errors_are_the_harness_kinds_and_keep_value_error() -> None:
    # The summarybench command line gives any of the harness's errors one line and its
    # exit code: a bad dataset is bad input (2), a failed answer or scan a run's failure (1).
    from pytest_summarybench import InputError, RunError
    from summarybench_compliance.scanner.facts import TooDeep

    assert issubclass(compliance.DatasetError, InputError)
    assert compliance.DatasetError.exit_code == 2
    for failure in (compliance.ParseError, compliance.ScanError, TooDeep):
        assert issubclass(failure, RunError) and failure.exit_code == 1
    for error in (compliance.DatasetError, compliance.ParseError, compliance.ScanError):
        assert issubclass(error, ValueError)  # what callers catch them by


def test_a_dataset_error_raised_by_the_command_is_one_line_and_exit_2(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    from pytest_summarybench.cli import main
    from summarybench_compliance import cli as command

    def fails(args: object) -> int:
        raise compliance.DatasetError(f"{tmp_path}/d.jsonl:3: field 'input' is empty")

    monkeypatch.setattr(command, "run", fails)
    assert main(["compliance"]) == 2
    assert capsys.readouterr().err == (
        f"summarybench compliance: error: {tmp_path}/d.jsonl:3: field 'input' is empty\n")
