"""Task sets of docs/methods.md#downstream-family: the three task schemas and their JSONL files.

A task set is three JSONL files, ``completion.jsonl``, ``bug_localisation.jsonl`` and
``function_selection.jsonl``, in one directory (or one JSONL file whose lines carry a
``type`` field). Units are referenced by ``path`` (relative to the codebase root, forward
slashes) and qualified ``name`` (``Class.method``), as the extractor names them. Loading
validates each line's fields (a missing field, an empty candidate list, a wrong type);
``resolve`` then checks every reference against the extracted units (an unknown file or
unit). Both raise ``TaskFileError`` naming the file, the line and the field. A reference
to code that exists but that the run's configuration did not extract (another language,
an excluded path) leaves the task out instead (``TaskExcluded``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from pydantic import Field, ValidationError, field_validator

from ...core.errors import RunError
from ...core.input_files import (
    InputFileError,
    clip,
    clip_text,
    json_lines,
    parse_json_line,
    read_text,
)
from ...schemas import CodeUnit
from ...schemas._base import SBModel

TaskType = Literal["completion", "bug_localisation", "function_selection"]
TASK_TYPES: tuple[TaskType, ...] = ("completion", "bug_localisation", "function_selection")


class TaskFileError(InputFileError):
    """A task-set line is invalid; the message names the file, the line and the field.
    It stops the run (fixtures/tasks/README.md)."""

    def __init__(self, source: str, line: int, field_name: str, message: str) -> None:
        super().__init__(f"{source}:{line}: field {field_name!r}: {message}", line=line,
                         problem=message)
        self.source = source
        self.field = field_name


class UnitRef(SBModel):
    """A unit of the codebase, as the extractor names it."""

    path: str
    """File path relative to the codebase root, forward slashes."""
    name: str
    """Qualified name within the file (``Class.method``, ``outer.inner``)."""

    def key(self) -> tuple[str, str]:
        return (self.path, self.name)

    def __str__(self) -> str:
        return f"{self.path}::{self.name}"


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


class TestCase(SBModel):
    """One test of a completion task: Python statements that import the completed function
    from its module (``from bookshop.pricing import ...``) and assert on it. No pytest:
    a test passes when the statements run without an exception."""

    __test__ = False  # not a pytest class

    name: str
    """Short name, unique within the task."""
    code: str
    """The statements."""

    _blank = field_validator("name", "code")(_non_blank)


class CompletionTask(SBModel):
    """A completion task (docs/methods.md#downstream-completion): a function with its body
    removed, to complete from summaries."""

    id: str
    """Unique within the task set."""
    path: str
    """The file of the function to complete."""
    name: str
    """Its qualified name; the target unit of the task."""
    requirements: str
    """What the completion should do (given to the task model)."""
    context: list[UnitRef] | None = None
    """Units whose summaries are the context (spec ``relevantSummaryIds``); default: the
    units the function calls."""
    partial_code: str | None = None
    """The code shown to complete; default: the signature, body and docstring removed."""
    tests: list[TestCase] = Field(default_factory=list)
    """Tests deciding pass/fail (Python targets only); none: similarity only."""

    _blank = field_validator("id", "path", "name", "requirements")(_non_blank)

    @field_validator("tests")
    @classmethod
    def _unique_tests(cls, tests: list[TestCase]) -> list[TestCase]:
        names = [t.name for t in tests]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"test names {dupes} appear more than once")
        return tests


class BugLocalisationTask(SBModel):
    """A bug localisation task (docs/methods.md#downstream-bug-localisation): a bug report, the
    file that holds the bug, and candidate files."""

    id: str
    description: str
    """The bug report as a user would file it."""
    buggy_file: str
    """The file in which the bug is (must be one of the candidates)."""
    candidate_files: list[str]
    """Files to choose from; their file-level summaries are the context."""
    location: str | None = None
    """The qualified name of the function or method where the bug is, when known."""
    seeded_bug: str | None = None
    """How the bug would be introduced (described, not injected: the code is correct)."""

    _blank = field_validator("id", "description", "buggy_file")(_non_blank)

    @field_validator("candidate_files")
    @classmethod
    def _candidates(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("the candidate list is empty")
        if len(set(value)) != len(value):
            raise ValueError("a candidate appears more than once")
        return value


class FunctionSelectionTask(SBModel):
    """A function selection task (docs/methods.md#downstream-function-selection): a task
    description, the function to use, and candidate functions."""

    id: str
    description: str
    """What the developer needs to accomplish."""
    correct: UnitRef
    """The function that accomplishes it (must be one of the candidates)."""
    candidates: list[UnitRef]
    """Functions to choose from; their summaries are the context."""

    _blank = field_validator("id", "description")(_non_blank)

    @field_validator("candidates")
    @classmethod
    def _candidates(cls, value: list[UnitRef]) -> list[UnitRef]:
        if not value:
            raise ValueError("the candidate list is empty")
        keys = [c.key() for c in value]
        if len(set(keys)) != len(keys):
            raise ValueError("a candidate appears more than once")
        return value


Task = CompletionTask | BugLocalisationTask | FunctionSelectionTask
MODELS: dict[str, type[SBModel]] = {"completion": CompletionTask,
                                    "bug_localisation": BugLocalisationTask,
                                    "function_selection": FunctionSelectionTask}
T = TypeVar("T", CompletionTask, BugLocalisationTask, FunctionSelectionTask)


@dataclass(frozen=True)
class Loaded(Generic[T]):
    """A task with where it came from and the units it resolved to."""

    task: T
    source: str
    """``file:line``."""
    line: int
    file: str
    target_id: str = ""
    """The unit the task is about (its matrix item's unit): the function to complete, the
    buggy file, the right function."""
    unit_ids: dict[str, str] = field(default_factory=dict)
    """Resolved references: a path (files) or ``path::name`` (units) -> unit id."""

    def fail(self, field_name: str, message: str) -> TaskFileError:
        return TaskFileError(self.file, self.line, field_name, message)


def _field_path(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(line)"


def parse_lines(text: str, source: str, kind: TaskType | None) -> list[Loaded[Any]]:
    """Validate every line of a task file (``kind`` None: each line names its ``type``)."""
    out: list[Loaded[Any]] = []
    seen: dict[str, int] = {}
    for number, raw in json_lines(text):
        try:
            data = parse_json_line(raw)
        except ValueError as exc:
            raise TaskFileError(source, number, "(line)", str(exc)) from None
        if not isinstance(data, dict):
            raise TaskFileError(source, number, "(line)",
                                f"expected a JSON object, found {type(data).__name__}")
        line_kind = kind
        if kind is None:
            line_kind = data.pop("type", None)
            if line_kind not in TASK_TYPES:
                raise TaskFileError(source, number, "type",
                                    f"{clip(line_kind, 80)} is not one of "
                                    f"{', '.join(TASK_TYPES)}")
        model = MODELS[str(line_kind)]
        try:
            task = model.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            message = "missing" if err["type"] == "missing" else (
                "unknown field" if err["type"] == "extra_forbidden" else err["msg"])
            if message.startswith("Value error, "):
                message = message[len("Value error, "):]
            raise TaskFileError(source, number, clip_text(_field_path(err["loc"]), 120),
                                clip_text(message)) from None
        task_id = task.id  # type: ignore[attr-defined]
        if task_id in seen:
            raise TaskFileError(source, number, "id",
                                f"{clip(task_id, 80)} is already used on line {seen[task_id]}")
        seen[task_id] = number
        out.append(Loaded(task=task, source=f"{source}:{number}", line=number, file=source))
    return out


def load_task_file(path: Path, kind: TaskType | None) -> list[Loaded[Any]]:
    """Read and validate one JSONL task file."""
    try:
        text = read_text(path, "task file")
    except InputFileError as exc:
        raise TaskFileError(str(path), exc.line, "(file)", exc.problem) from None
    return parse_lines(text, str(path), kind)


def task_files(location: Path) -> dict[TaskType, list[Loaded[Any]]]:
    """The tasks at ``location``: a directory of ``<type>.jsonl`` files, or one file."""
    found: dict[TaskType, list[Loaded[Any]]] = {}
    if location.is_dir():
        for kind in TASK_TYPES:
            path = location / f"{kind}.jsonl"
            if path.is_file():
                found[kind] = load_task_file(path, kind)
        return found
    for loaded in load_task_file(location, None):
        kind = next(k for k in TASK_TYPES if isinstance(loaded.task, MODELS[k]))
        found.setdefault(kind, []).append(loaded)
    return found


# -- resolution against the extracted units ---------------------------------------------
class TaskExcluded(RunError):
    """A task refers to code that exists but that this run did not extract (a language,
    path or size the configuration leaves out): the task is left out, not an error."""


class UnitIndex:
    """Look-ups from task references to units (``root``: the codebase on disk, to tell
    code the configuration left out from references to nothing)."""

    def __init__(self, units: Iterable[CodeUnit], root: Path | None = None) -> None:
        self.units = list(units)
        self.root = root
        self.by_key = {(u.path, u.name): u for u in self.units if u.type != "file"}
        self.files = {u.path: u for u in self.units if u.type == "file"}

    def _on_disk(self, path: str) -> str | None:
        if self.root is None or ".." in Path(path).parts:
            return None
        try:
            return (self.root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def _excluded(self, loaded: Loaded[Any], what: str) -> TaskExcluded:
        return TaskExcluded(f"{loaded.source}: {what} exists but this run did not extract it "
                            "(codebase.languages, include/exclude or extraction filters)")

    def file(self, loaded: Loaded[Any], field_name: str, path: str) -> CodeUnit:
        unit = self.files.get(path)
        if unit is None:
            if self._on_disk(path) is not None:
                raise self._excluded(loaded, path)
            raise loaded.fail(field_name, f"unknown file {path!r}: not a file of the codebase "
                                          "(paths are relative to the codebase root)")
        return unit

    def unit(self, loaded: Loaded[Any], field_name: str, ref: UnitRef) -> CodeUnit:
        unit = self.by_key.get(ref.key())
        if unit is None:
            text = self._on_disk(ref.path)
            short = ref.name.rsplit(".", 1)[-1]
            if text is not None and (ref.path not in self.files
                                     or re.search(rf"\b{re.escape(short)}\b", text)):
                raise self._excluded(loaded, str(ref))
            if ref.path not in self.files:
                raise loaded.fail(field_name, f"unknown file {ref.path!r}: not a file of the "
                                              "codebase (paths are relative to its root)")
            raise loaded.fail(field_name, f"unknown unit {ref.name!r} in {ref.path}")
        return unit


def resolve(loaded: Loaded[T], index: UnitIndex) -> Loaded[T]:
    """The task with its references checked and resolved to unit ids."""
    task = loaded.task
    ids: dict[str, str] = {}
    if isinstance(task, CompletionTask):
        target = index.unit(loaded, "name", UnitRef(path=task.path, name=task.name))
        if target.type not in ("function", "method"):
            raise loaded.fail("name", f"{task.name!r} is a {target.type}, not a function")
        if task.tests and target.language != "python":
            raise loaded.fail("tests", f"tests run for Python targets only, {task.path} is "
                                       f"{target.language}")
        refs = task.context
        if refs is None:
            for uid in target.relationships.calls_ids:
                ids[f"calls::{uid}"] = uid
        else:
            for i, ref in enumerate(refs):
                ids[str(ref)] = index.unit(loaded, f"context[{i}]", ref).id
        return Loaded(task=task, source=loaded.source, line=loaded.line, file=loaded.file,
                      target_id=target.id, unit_ids=ids)
    if isinstance(task, BugLocalisationTask):
        for i, path in enumerate(task.candidate_files):
            ids[path] = index.file(loaded, f"candidateFiles[{i}]", path).id
        buggy = index.file(loaded, "buggyFile", task.buggy_file)
        if task.buggy_file not in task.candidate_files:
            raise loaded.fail("buggyFile", f"{task.buggy_file!r} is not among the candidates")
        target_id = buggy.id
        if task.location:
            located = index.unit(loaded, "location",
                                 UnitRef(path=task.buggy_file, name=task.location))
            target_id = located.id
        return Loaded(task=task, source=loaded.source, line=loaded.line, file=loaded.file,
                      target_id=target_id, unit_ids=ids)
    assert isinstance(task, FunctionSelectionTask)
    for i, ref in enumerate(task.candidates):
        ids[str(ref)] = index.unit(loaded, f"candidates[{i}]", ref).id
    correct = index.unit(loaded, "correct", task.correct)
    if str(task.correct) not in ids:
        raise loaded.fail("correct", f"{task.correct} is not among the candidates")
    return Loaded(task=task, source=loaded.source, line=loaded.line, file=loaded.file,
                  target_id=correct.id, unit_ids=ids)
