"""Where a run's tasks come from (the task model that performs them is a role of the run:
``roles.task_model``).

Tasks: the ``evaluation.downstream.tasksFile`` location when set, else a task set shipped
next to the codebase (``<codebase>/../tasks/<codebase dir name>/``, which is how the
bundled ``fixtures/tasks/sample_codebase`` is found), and, for a task type neither
provides, tasks built from the codebase (``build.py``) unless ``buildTasks`` is off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .leaks import answer_named
from .tasks import (
    TASK_TYPES,
    Loaded,
    TaskExcluded,
    TaskFileError,
    TaskType,
    UnitIndex,
    resolve,
    task_files,
)

if TYPE_CHECKING:
    from ...context import RunContext
    from ...settings import Settings

def task_location(settings: Settings) -> Path | None:
    """The configured or conventional task-set location (None when there is none)."""
    ds = settings.evaluation.downstream
    if ds.tasks_file:
        return settings.resolve(ds.tasks_file)
    root = settings.codebase_root.resolve()
    sibling = root.parent / "tasks" / root.name
    return sibling if sibling.is_dir() else None


@dataclass
class TaskSet:
    """A run's tasks by type, and the tasks left out because their code was not extracted."""

    tasks: dict[TaskType, list[Loaded[Any]]] = field(default_factory=dict)
    excluded: dict[TaskType, list[str]] = field(default_factory=dict)
    """Per type, why each left-out task was left out: code this run did not extract, or a
    text that names the answer (``leaks.py``)."""


def load_tasks(ctx: RunContext) -> TaskSet:
    """Every task of the run, validated and resolved against the extracted units.

    Raises ``TaskFileError`` for a bad task file (a configured ``tasksFile`` that does
    not exist included).
    """
    settings = ctx.settings
    location = task_location(settings)
    found: dict[TaskType, list[Loaded[Any]]] = {}
    if location is not None:
        if not location.exists():
            raise TaskFileError(str(location), 0, "tasksFile",
                                "no such file or directory (evaluation.downstream.tasksFile)")
        found = task_files(location)
    index = UnitIndex(ctx.all_units, settings.codebase_root)
    out = TaskSet()
    for kind in TASK_TYPES:
        if kind not in found and settings.evaluation.downstream.build_tasks:
            from .build import build_tasks

            found[kind] = build_tasks(kind, ctx)
        for loaded in found.get(kind, []):
            named = answer_named(loaded.task)
            if named is not None:
                out.excluded.setdefault(kind, []).append(
                    f"{loaded.source}: its text names the answer ({named}), so the task "
                    "model could choose it without reading the summaries")
                continue
            try:
                out.tasks.setdefault(kind, []).append(resolve(loaded, index))
            except TaskExcluded as exc:
                out.excluded.setdefault(kind, []).append(str(exc))
    return out
