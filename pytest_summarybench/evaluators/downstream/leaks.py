"""Tasks whose text names their answer measure the task model's reading of names, not the
summaries: "Sends a `PATCH` request" among ``head``, ``patch``, ``options``... is answered
from the candidates' titles alone, and a model whose summaries said nothing specific
scored 0.667 on such tasks. ``answer_named`` finds them, and ``taskset`` leaves them out
with the reason, hand-written and built tasks alike:

- function selection: a reader of the candidates' names alone would pick the right one,
  i.e. its name shares more words with the task than any other candidate's does (words of
  three letters or more, common English words left out);
- bug localisation: the report names the buggy file (``pricing.py`` or its path) and no
  other candidate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
#: Words too common to tell a name: a task and a name sharing them says nothing.
COMMON = frozenset({"the", "and", "for", "with", "from", "into", "that", "this", "all",
                    "any", "are", "not", "its", "per", "out", "one", "each", "when"})


def identifier_words(text: str) -> set[str]:
    """Lower-case words of a text or an identifier, identifiers split at underscores and
    camel case (``parseHTTPDate`` -> parse, http, date)."""
    return {part.lower() for token in _TOKEN.findall(text) for part in _PART.findall(token)}


def _telling(text: str) -> set[str]:
    return {w for w in identifier_words(text) if len(w) > 2 and w not in COMMON}


def function_named(description: str, correct: str, others: Iterable[str]) -> str | None:
    """The words of the right function's name that give it away: those it shares with
    ``description`` when no other candidate's name shares as many (names as listed to the
    task model: the last part of a qualified name); None when the names do not decide."""
    said = _telling(description)
    shared = said & _telling(correct.rpartition(".")[2])
    if not shared:
        return None
    if any(len(said & _telling(o.rpartition(".")[2])) >= len(shared) for o in others):
        return None
    return ", ".join(sorted(shared))


def file_named(description: str, buggy: str, others: Iterable[str]) -> str | None:
    """The buggy file's name when the report names it (``pricing.py``, or its path) and no
    other candidate's."""
    lowered = description.lower()

    def says(path: str) -> bool:
        return path.lower() in lowered or PurePosixPath(path).name.lower() in lowered

    if not says(buggy) or any(says(o) for o in others):
        return None
    return PurePosixPath(buggy).name


def answer_named(task: Any) -> str | None:
    """What of its answer a task's text names (None when it names nothing)."""
    from .tasks import BugLocalisationTask, FunctionSelectionTask

    if isinstance(task, FunctionSelectionTask):
        return function_named(task.description, task.correct.name,
                              [c.name for c in task.candidates if c.key() != task.correct.key()])
    if isinstance(task, BugLocalisationTask):
        return file_named(task.description, task.buggy_file,
                          [f for f in task.candidate_files if f != task.buggy_file])
    return None
