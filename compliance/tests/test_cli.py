"""``summarybench compliance``: the seed's switches run the benchmark through pytest.

Runs go through a real subprocess (``python -m pytest_summarybench.cli``) in an empty
directory, as a user types them, with the LLM disabled or served by the local fake Ollama;
bad input is checked in-process, since it stops before pytest starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_ollama import FakeOllama

from pytest_summarybench.cli import build_parser, main
from summarybench_compliance import cli as command
from summarybench_compliance.dataset import DATA_DIR


def sb(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    return subprocess.run([sys.executable, "-m", "pytest_summarybench.cli", "compliance", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def results(cwd: Path) -> dict[str, Any]:
    path = cwd / "summarybench-results" / "eval_results.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_seed_spellings_run_the_scanner_alone(tmp_path: Path) -> None:
    proc = sb(tmp_path, "--test-mode", "--no-ollama", "--", "-n", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 workers" in proc.stdout
    assert "10 passed, 10 skipped" in proc.stdout
    # The command imports this package before pytest starts; pytest must not warn that it
    # cannot rewrite it (a warnings summary on every run from the command line).
    assert "PytestAssertRewriteWarning" not in proc.stdout
    assert "rule-scanner: 10 examples scored, 0 failed" in proc.stdout
    assert ("LLM classifier: not run (disabled: --compliance-no-llm, or --no-ollama of "
            "`summarybench compliance`)") in proc.stdout
    got = results(tmp_path)
    assert got["num_examples"] == 10
    assert got["ollama_available"] is False


def test_a_selection_of_nothing_says_so(tmp_path: Path) -> None:
    # A new user's pass: `-- -k nomatchxyz` exited 2 with pytest's "108 deselected" alone.
    proc = sb(tmp_path, "--test-mode", "--no-ollama", "--", "-k", "nomatchxyz")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "summarybench compliance: error: the pytest arguments after -- (-k nomatchxyz) "
        "selected no compliance test; nothing ran")


def test_model_endpoint_and_pytest_args_reach_the_run(tmp_path: Path) -> None:
    with FakeOllama(models=("tiny:latest",),
                    respond=lambda body: "ARTICLE: 12\nSEVERITY: LOW") as server:
        proc = sb(tmp_path, "--test-mode", "--model", "ollama/tiny", "--endpoint", server.url)
        calls = len(server.chat_requests)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "20 passed" in proc.stdout
    assert calls == 10
    assert {body["model"] for body in server.chat_requests} == {"tiny"}
    got = results(tmp_path)
    assert got["ollama_available"] is True
    assert set(got["llm_models"]) == {"ollama/tiny"}


def test_data_replaces_the_dataset_and_k_selects(tmp_path: Path) -> None:
    heldout = tmp_path / "heldout.jsonl"
    heldout.write_text((DATA_DIR / "heldout_data.jsonl").read_text(encoding="utf-8"),
                       encoding="utf-8")
    proc = sb(tmp_path, "--data", "heldout.jsonl", "--", "-k", "test_scanner")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "20 passed, 20 deselected" in proc.stdout
    assert "PytestAssertRewriteWarning" not in proc.stdout
    assert results(tmp_path)["num_examples"] == 20


def test_a_classification_that_cannot_be_made_exits_1(tmp_path: Path) -> None:
    with FakeOllama(chat_status=500) as server:
        proc = sb(tmp_path, "--test-mode", "--endpoint", server.url, "--",
                  "-k", "test_llm", "-x")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 failed" in proc.stdout


def _parse(*argv: str) -> Any:
    return build_parser().parse_args(["compliance", *argv])


@pytest.mark.parametrize(("argv", "expected"), [
    ([], []),
    (["--test-mode"], ["--compliance-test-mode"]),
    (["--no-ollama"], ["--compliance-no-llm"]),
    (["--no-llm"], ["--compliance-no-llm"]),
    (["--model", "openai/gpt-4o-mini", "--endpoint", "http://127.0.0.1:8080/v1"],
     ["--compliance-endpoint", "http://127.0.0.1:8080/v1",
      "--compliance-model", "openai/gpt-4o-mini"]),
])
def test_options_map_to_the_prefixed_pytest_options(argv: list[str],
                                                    expected: list[str]) -> None:
    assert command.pytest_arguments(_parse(*argv)) == ["-p", command.PLUGIN, *expected]


def test_pytest_args_after_the_separator() -> None:
    args = _parse("--test-mode", "--", "-n", "2", "-k", "art14")
    assert args.pytest_args == ["--", "-n", "2", "-k", "art14"]


@pytest.mark.parametrize(("pytest_code", "cli_code"), [
    (0, 0),  # ok
    (1, 1),  # a test failed: a classification could not be made
    (2, 2),  # interrupted by a collection error: a malformed dataset line
    (3, 1),  # internal error
    (4, 2),  # usage error
    (5, 2),  # no test collected or selected
])
def test_exit_codes_follow_the_readme(pytest_code: int, cli_code: int) -> None:
    assert command.exit_code(pytest_code) == cli_code


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    lines = (DATA_DIR / "eval_data.jsonl").read_text(encoding="utf-8").splitlines()
    lines[4] = lines[4].replace('"article": 9', '"article": 13')
    (tmp_path / "broken.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("argv", "needle"), [
    (["--data", "missing.jsonl"], "--data: no dataset 'missing.jsonl': not a file"),
    (["--data", "broken.jsonl"], "broken.jsonl:5: metadata.article 13 is not one of"),
    (["--model", "gpt-4o"], "--model 'gpt-4o': model 'gpt-4o' is not of the form "
                            "PROVIDER/MODEL"),
    (["--model", "foo/bar"], "--model 'foo/bar': unknown provider 'foo' in model 'foo/bar'"),
    (["--model", "builtin/docstring"], "builtin/* summarizers cannot classify code"),
    (["--endpoint", "localhost:11434"], "--endpoint 'localhost:11434': expected an http(s) "
                                        "base URL"),
])
def test_bad_input_is_one_line_and_exit_2(cwd: Path, capsys: pytest.CaptureFixture[str],
                                          argv: list[str], needle: str) -> None:
    assert main(["compliance", "--no-ollama", *argv]) == 2
    out = capsys.readouterr()
    err = out.err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("summarybench compliance: error: ")
    assert needle in err
    assert "Traceback" not in err
    assert out.out == ""  # stopped before pytest started


def test_a_shipped_dataset_is_named(tmp_path: Path) -> None:
    proc = sb(tmp_path, "--no-ollama", "--data", "heldout_data", "--", "-k", "test_scanner")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "20 passed, 20 deselected" in proc.stdout
    assert "PytestAssertRewriteWarning" not in proc.stdout
    assert results(tmp_path)["dataset"] == ["heldout_data.jsonl"]


def test_an_unknown_dataset_lists_the_shipped_ones(cwd: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compliance", "--data", "nosuch"]) == 2
    assert capsys.readouterr().err.strip() == (
        "summarybench compliance: error: --data: no dataset 'nosuch': not a file, nor one of "
        "the shipped datasets (eval_data, heldout_data, independent_dev, independent_dev2, "
        "independent_test, independent_test2, independent_val)")


def test_summarybench_help_lists_the_command() -> None:
    # The summarybench CLI knows the command only through this distribution's entry point
    # (group summarybench.commands).
    proc = subprocess.run([sys.executable, "-m", "pytest_summarybench.cli", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "compliance" in proc.stdout and "rule scanner vs an LLM" in proc.stdout


def test_help_has_an_example_and_the_seed_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["compliance", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert "example: summarybench compliance --test-mode --no-ollama" in text
    for flag in ("--test-mode", "--no-ollama", "--model", "--endpoint", "--data"):
        assert flag in text
