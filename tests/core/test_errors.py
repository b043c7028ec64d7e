"""One error base class: every exception of the package derives from ``SummarybenchError``
and declares its exit codes; the command line and the plugin map them in one place each."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import pytest_summarybench
from pytest_summarybench.core.errors import (
    EXIT_FAILURE,
    EXIT_USAGE,
    PYTEST_TESTS_FAILED,
    PYTEST_USAGE_ERROR,
    InputError,
    RunError,
    SummarybenchError,
)
from pytest_summarybench.llm import ModelCallError
from pytest_summarybench.store import StoreError

#: Modules whose exceptions are not the package's, with why.
NOT_OURS = {
    "pytest_summarybench.sandbox._child": "a standalone program run inside the sandbox "
                                          "(python -I -S), standard library only",
    "pytest_summarybench.cli.__main__": "runs the command line when imported",
}


def _modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(pytest_summarybench.__path__,
                                                   "pytest_summarybench.")]
    return sorted(n for n in names
                  if not any(n == skip or n.startswith(skip + ".") for skip in NOT_OURS))


def _exception_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for obj in vars(module).values():
            if (inspect.isclass(obj) and issubclass(obj, BaseException)
                    and obj.__module__ == name and not issubclass(obj, Warning)
                    and obj is not SummarybenchError):  # the base declares no code
                found[f"{name}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


CLASSES = _exception_classes()


def test_the_walk_finds_the_package_errors() -> None:
    names = {c.__name__ for c in CLASSES}
    assert {"SettingsError", "StoreError", "InputFileError", "ModelCallError",
            "EvaluationError", "CliError", "ReportError", "JudgeError"} <= names
    assert len(CLASSES) >= 25


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_every_exception_derives_from_the_base_and_declares_its_exit_codes(
        cls: type[BaseException]) -> None:
    assert issubclass(cls, SummarybenchError)
    # bad usage or input: 2 on the command line, pytest's usage error (4) in a session;
    # a run that ran and failed: 1 in both
    assert (cls.exit_code, cls.pytest_exit_code) in {(EXIT_USAGE, PYTEST_USAGE_ERROR),
                                                      (EXIT_FAILURE, PYTEST_TESTS_FAILED)}
    assert issubclass(cls, InputError) == (cls.exit_code == EXIT_USAGE)


def test_the_builtin_bases_callers_catch_are_kept() -> None:
    from pytest_summarybench.core.input_files import InputFileError
    from pytest_summarybench.settings import SettingsError

    assert issubclass(SettingsError, ValueError) and issubclass(InputFileError, ValueError)
    assert issubclass(StoreError, RuntimeError) and issubclass(ModelCallError, RuntimeError)


def test_pytest_codes_are_pytests_own() -> None:
    assert PYTEST_USAGE_ERROR == pytest.ExitCode.USAGE_ERROR
    assert PYTEST_TESTS_FAILED == pytest.ExitCode.TESTS_FAILED


@pytest.mark.parametrize(("exc", "code"), [
    (StoreError("store s.sqlite is damaged (malformed): move it aside"), 2),
    (ModelCallError("openai/gpt-4o", "connection refused"), 1),
], ids=["bad-input", "ran-and-failed"])
def test_the_command_line_prints_any_package_error_as_one_line_with_its_code(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        exc: SummarybenchError, code: int) -> None:
    from pytest_summarybench import cli
    from pytest_summarybench.cli import runs

    def fails(args: object) -> int:
        raise exc

    monkeypatch.setattr(runs, "run", fails)
    assert cli.main(["runs"]) == code
    err = capsys.readouterr().err
    assert err == f"summarybench runs: error: {exc}\n"


def test_the_plugin_turns_bad_input_into_pytests_usage_error_and_nothing_else() -> None:
    from pytest_summarybench.plugin.errors import as_usage_error, stops_session, usage_error
    from pytest_summarybench.settings import SettingsError

    with pytest.raises(pytest.UsageError, match=r"^evaluation.sampleSize: bad$"):
        with as_usage_error():
            raise SettingsError("evaluation.sampleSize: bad")
    with pytest.raises(RunError):
        with as_usage_error():
            raise RunError("a model call failed")
    assert str(usage_error(InputError("queries.jsonl:3: bad"), where="retrieval/mrr: ")) \
        == "retrieval/mrr: queries.jsonl:3: bad"
    assert stops_session(pytest.UsageError("x")) and stops_session(InputError("x"))
    assert not stops_session(RunError("x")) and not stops_session(ValueError("x"))
