"""The one place the plugin turns the package's errors into pytest's outcomes.

An ``InputError`` (bad usage or input: the configuration, an input file, the store, the
output directory; ``core/errors.py``) stops the session: it becomes a
``pytest.UsageError``, which pytest prints as one ``ERROR:`` line and ends with exit code
4 (the error's ``pytest_exit_code``). Any other error fails only the test it happens in.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from ..core.errors import InputError

#: What stops a whole session rather than failing one test: a usage error, pytest's or ours.
STOPS_SESSION: tuple[type[Exception], ...] = (pytest.UsageError, InputError)


def usage_error(exc: InputError, *, where: str = "") -> pytest.UsageError:
    """``exc`` as the usage error that stops the session; ``where`` (e.g. the evaluator
    that read the bad file, ``"retrieval/mrr: "``) goes before its message."""
    return pytest.UsageError(f"{where}{exc}")


def stops_session(exc: BaseException) -> bool:
    """Whether ``exc`` must stop the whole session rather than fail one test: a usage
    error, pytest's or ours."""
    return isinstance(exc, STOPS_SESSION)


@contextmanager
def as_usage_error() -> Iterator[None]:
    """Raise an ``InputError`` of the block as ``usage_error``."""
    try:
        yield
    except InputError as exc:
        raise usage_error(exc) from None
