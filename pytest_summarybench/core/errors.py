"""The package's errors: one base class, and each error's exit code.

Every exception the package raises on purpose derives from ``SummarybenchError`` (keeping
the builtin base its callers catch it by, e.g. ``ValueError``, as a second base). An error
belongs to one of two kinds, and its class says which by its exit codes:

- ``InputError``: bad usage or input (a command-line value, the configuration, an input
  file, the store, the output directory). Nothing can run until the user changes it. The
  command line exits 2; a pytest session stops with one ``ERROR:`` line and exit code 4
  (pytest's usage error).
- ``RunError``: the run ran, and something in it failed (a model call, an item that
  cannot be scored). The command line exits 1, as pytest does for failed tests.

The command line maps an error to its exit code in one place (``cli.main``), the pytest
plugin in one place too (``plugin.errors``). pytest is not imported here: the codes are
its ``pytest.ExitCode`` values, and this module is read by ``summarybench --help``.
"""

from __future__ import annotations

#: The command line's exit codes (``summarybench --help``).
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
#: pytest's exit codes for the same outcomes (``pytest.ExitCode.TESTS_FAILED`` and
#: ``pytest.ExitCode.USAGE_ERROR``).
PYTEST_TESTS_FAILED = 1
PYTEST_USAGE_ERROR = 4


class SummarybenchError(Exception):
    """The base of every error summarybench raises on purpose; its message is one line
    for the user. A subclass declares its exit codes, mostly by deriving from
    ``InputError`` or ``RunError``."""

    exit_code: int
    """The command line's exit code for this error (``EXIT_USAGE`` or ``EXIT_FAILURE``)."""
    pytest_exit_code: int
    """A pytest session's exit code for this error (``PYTEST_USAGE_ERROR`` or
    ``PYTEST_TESTS_FAILED``)."""


class InputError(SummarybenchError):
    """Bad usage or input: the user must change a value, a file or a setting before
    anything can run (the message says which, and what to do)."""

    exit_code = EXIT_USAGE
    pytest_exit_code = PYTEST_USAGE_ERROR


class RunError(SummarybenchError):
    """The run ran, and this failed (a model call, a verdict, an item's score)."""

    exit_code = EXIT_FAILURE
    pytest_exit_code = PYTEST_TESTS_FAILED

