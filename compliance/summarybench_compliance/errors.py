"""The compliance benchmark's errors, on the harness's two public kinds (InputError,
RunError: ``pytest_summarybench``), so that the ``summarybench`` command line gives each
its exit code and one line, as it does the harness's own.

- ``DatasetError``: a dataset cannot be read or a line of it is malformed: bad input
  (exit 2).
- ``ParseError``: the LLM classifier's answer names no article: that call's answer failed
  (a run error, exit 1); the test of its example fails, the run goes on.
- ``ScanError``: the scanner could not judge a snippet (not Python, over a limit, a rule's
  failure): that example fails with this one line, the run goes on.

Each keeps ``ValueError`` as a second base, which callers catch it by.
"""

from __future__ import annotations

from pytest_summarybench import InputError, RunError

__all__ = ["DatasetError", "ParseError", "ScanError"]


class DatasetError(InputError, ValueError):
    """A dataset line is malformed; the message names the file, the line and the problem."""


class ParseError(RunError, ValueError):
    """The model's answer names no article; the message quotes the start of it."""


class ScanError(RunError, ValueError):
    """The code could not be scanned: it is not valid Python, it is over the scanner's
    size limit or nested past its depth limit, or a rule failed on it. The message is one
    line."""
