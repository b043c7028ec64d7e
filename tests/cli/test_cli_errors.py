"""Every command's bad-input path prints one clear line (no traceback) and exits 2."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_summarybench.cli import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "a.py").write_text("def f(x):\n    return x + 1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize("argv", [
    ["add-model", "openai/gpt-4o"],
    ["add-judge", "openai/gpt-4o"],
    ["config", "--sample-size", "5"],
    ["generate"],
    ["evaluate", "--all"],
])
def test_missing_config_says_to_run_init(project: Path, capsys, argv: list[str]) -> None:
    assert main(argv) == 2
    assert "run `summarybench init --name NAME --codebase PATH` first" in _err(capsys)


def test_init_with_unreadable_codebase(project: Path, capsys) -> None:
    assert main(["init", "--name", "x", "--codebase", "missing"]) == 2
    assert "codebase missing is not a readable directory" in _err(capsys)
    assert not (project / "summarybench.yaml").exists()


def test_init_refuses_to_overwrite(project: Path, capsys) -> None:
    assert main(["init", "--name", "x", "--codebase", "code"]) == 0
    capsys.readouterr()
    assert main(["init", "--name", "y", "--codebase", "code"]) == 2
    assert "already exists" in _err(capsys)


@pytest.mark.parametrize(("argv", "needle"), [
    (["add-model", "acme/model-1"], "unknown provider 'acme'"),
    (["add-judge", "gpt-4o"], "is not PROVIDER/MODEL"),
    (["config", "--eval", "judge,vibes"], "--eval 'judge,vibes': expected"),
    (["config", "--sample-size", "0"], "--sample-size 0: expected a positive integer"),
    (["evaluate", "--only", "judge", "--", "-m", "retrieval"],
     "--only and a -m after -- both select by family"),
    (["generate", "--parallel", "0"], "--parallel 0: expected a positive integer"),
])
def test_bad_values(project: Path, capsys, argv: list[str], needle: str) -> None:
    assert main(["init", "--name", "x", "--codebase", "code"]) == 0
    capsys.readouterr()
    assert main(argv) == 2
    assert needle in _err(capsys)


def test_an_unknown_family_for_only_is_refused_by_the_session(project: Path, capsys) -> None:
    # The session knows every family (the built-in ones and the plugins'), so it checks
    # the names; it stops at startup with pytest's usage error, in one line.
    assert main(["init", "--name", "x", "--codebase", "code"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--only", "vibes"]) == pytest.ExitCode.USAGE_ERROR
    assert "--sb-only 'vibes': expected a comma-separated list of judge, contrastive, " \
        "retrieval, downstream" in _err(capsys)


def test_missing_key_names_the_environment_variable(project: Path, capsys) -> None:
    assert main(["init", "--name", "x", "--codebase", "code"]) == 0
    assert main(["add-model", "anthropic/claude-3-5-sonnet-20241022"]) == 0
    capsys.readouterr()
    for argv in (["generate"], ["evaluate", "--all"]):
        assert main(argv) == 2
        assert "set the environment variable ANTHROPIC_API_KEY" in _err(capsys)


def test_generate_needs_no_judge_key(project: Path, capsys, monkeypatch) -> None:
    # A new user's pass: `generate` refused to start without the judge's key, though it
    # generates summaries only; evaluate still needs it.
    from pytest_summarybench.cli import run as command

    ran: list[list[str]] = []
    monkeypatch.setattr(command, "run_pytest", lambda args: ran.append(args) or 0)
    assert main(["init", "--name", "x", "--codebase", "code"]) == 0
    assert main(["add-judge", "anthropic/claude-sonnet-4-5"]) == 0
    capsys.readouterr()
    assert main(["generate"]) == 0 and "--sb-generate-only" in ran[-1]
    # Its first use of the configuration suggested doctor, without waiting (no terminal).
    assert "tip: this configuration's models were never checked" in capsys.readouterr().err
    assert main(["evaluate", "--all"]) == 2
    assert "set the environment variable ANTHROPIC_API_KEY" in _err(capsys)


def test_codebase_that_disappeared(project: Path, capsys) -> None:
    assert main(["init", "--name", "x", "--codebase", "code"]) == 0
    (project / "code" / "a.py").unlink()
    (project / "code").rmdir()
    capsys.readouterr()
    assert main(["evaluate", "--all"]) == 2
    assert "is not a readable directory: fix codebase.root" in _err(capsys)


def test_edits_keep_comments_and_reject_invalid_results(project: Path, capsys) -> None:
    assert main(["init", "--name", "x", "--codebase", "code"]) == 0
    cfg = project / "summarybench.yaml"
    cfg.write_text(cfg.read_text().replace("seed: 0", "seed: 0  # my lucky number"))
    assert main(["config", "--sample-size", "7", "--eval", "contrastive"]) == 0
    assert main(["add-model", "openai/gpt-4o", "--temperature", "0.1"]) == 0
    text = cfg.read_text()
    assert "# my lucky number" in text and "# How evaluator families combine" in text
    assert "sampleSize: 7" in text and "model: gpt-4o" in text
    before = cfg.read_text()
    capsys.readouterr()
    assert main(["add-model", "openai/gpt-4o"]) == 2
    assert "already in models.test" in _err(capsys)
    assert main(["add-model", "openai/o3", "--temperature", "9"]) == 2
    assert "temperature" in _err(capsys)
    assert cfg.read_text() == before


@pytest.mark.parametrize(("argv", "needle"), [
    (["extract", "no-such-dir"], "'no-such-dir' is not a directory"),
    (["extract"], "run `summarybench init --name NAME --codebase PATH` first"),
    (["report"], "no store at summarybench-results/store.sqlite: run the benchmark first"),
    (["report", "--store", "x/none.sqlite"], "no store at x/none.sqlite"),
    (["compare", "a/b", "c/d"], "no store at summarybench-results/store.sqlite"),
])
def test_extract_report_compare_bad_inputs(project: Path, capsys, argv: list[str],
                                           needle: str) -> None:
    assert main(argv) == 2
    assert needle in _err(capsys)


def test_the_no_store_advice_works_outside_a_clone(project: Path, capsys) -> None:
    """Issue 33: it said `pytest -p summarybench benchmarks/summary`, a folder of the
    repository that an installed package does not have."""
    assert main(["runs", "--store", "x/none.sqlite"]) == 2
    err = _err(capsys)
    assert "benchmarks/summary" not in err
    assert "`summarybench run`, or `summarybench evaluate --all` with a configuration" in err


@pytest.mark.parametrize("command", ["runs", "report"])
def test_a_store_path_that_is_not_a_file_says_what_it_is(project: Path, capsys,
                                                          command: str) -> None:
    """A folder or a FIFO at the store's path was reported as "no store at ..."."""
    import os

    (project / "folder.sqlite").mkdir()
    os.mkfifo(project / "fifo.sqlite")
    assert main([command, "--store", "folder.sqlite"]) == 2
    assert _err(capsys).endswith(f"summarybench {command}: error: the store folder.sqlite "
                                 "is a folder, not a file: move it aside or pass --store "
                                 "PATH")
    assert main([command, "--store", "fifo.sqlite"]) == 2
    assert "the store fifo.sqlite is a FIFO (named pipe), not a file" in _err(capsys)


@pytest.mark.parametrize("argv", [["extract"], ["runs"], ["report"]])
def test_a_damaged_store_is_one_line_and_exit_2_for_every_command(
        project: Path, capsys, argv: list[str]) -> None:
    """Every ``SummarybenchError`` a command lets through is one line with its exit code
    (``cli.main``); ``extract`` of the configured benchmark printed a traceback and exited
    1 for a damaged store."""
    assert main(["init", "--name", "x", "--codebase", "code"]) == 0
    (project / "summarybench-results" / "store.sqlite").write_bytes(b"not a database" * 300)
    capsys.readouterr()
    assert main(argv) == 2
    err = _err(capsys)
    assert err.startswith(f"summarybench {argv[0]}: error: store ")
    assert "is not an SQLite database" in err and "move it aside" in err


def test_every_command_help_has_an_example() -> None:
    """The README promises it: each subcommand's --help ends with a runnable example."""
    import argparse

    from pytest_summarybench.cli import SUBCOMMANDS, build_parser, extension_commands

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    # the built-in commands, and those installed distributions add (compliance's)
    assert set(sub.choices) == set(SUBCOMMANDS) | set(extension_commands())
    missing = [name for name, p in sub.choices.items()
               if not (p.epilog or "").startswith("example")]
    assert missing == []


@pytest.mark.parametrize("argv", [
    ["runs", "--sb-output", "\x1b]0;PWN\x07\x1b[2J\x9b"],
    ["\x1b]0;PWN\x07"],
])
def test_usage_errors_quote_the_command_line_escaped(capsys, argv: list[str]) -> None:
    """argparse's own lines ("unrecognized arguments", "invalid choice") printed what was
    typed raw: an argument holding ESC]0;...BEL set the terminal's title."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "\\x1b]0;PWN\\x07" in err
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", err), err
