"""Warnings of dependencies that say nothing a user can act on, kept out of pytest's
warnings summary while summarybench works: its model calls (``Controller.prepare``) and
its matrix tests (a ``filterwarnings`` mark). Other tests of the session, which may be the
user's own, see every warning as usual.

Each filter is as narrow as the warning allows (message, category and module), so a
dependency's other warnings still show; ``-W`` and the ini file's ``filterwarnings`` apply
as always.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

#: (message prefix, category, module). pydantic warns ("Pydantic serializer warnings:
#: PydanticSerializationUnexpectedValue(...)") when litellm dumps one of its response
#: objects holding a value of another type than it declares; litellm silences the same
#: warning in places itself.
#: pydantic also warns, once, while building the schema of litellm's response types
#: ("Item 'summary' on TypedDict class 'ChatCompletionReasoningItem' is using the
#: `ReadOnly` qualifier...") when litellm is first used in a process.
FILTERS: tuple[tuple[str, type[Warning], str], ...] = (
    ("Pydantic serializer warnings", UserWarning, "pydantic.main"),
    ("Item '", UserWarning, "pydantic._internal._generate_schema"),
)

#: The same, as marks of the matrix tests (pytest's ``action:message:category:module``).
MARKS = tuple(pytest.mark.filterwarnings(f"ignore:{message}:{category.__name__}:{module}")
              for message, category, module in FILTERS)


@contextmanager
def quiet() -> Iterator[None]:
    """``FILTERS`` in force for the block (the process's filters are restored after)."""
    with warnings.catch_warnings():
        for message, category, module in FILTERS:
            warnings.filterwarnings("ignore", message=re.escape(message), category=category,
                                    module=re.escape(module) + r"\Z")
        yield
