"""Task sets built from the codebase, for a codebase that ships none.

Built from documented functions and methods of the sampled units (the docstring is the
developer's own statement of purpose, recorded apart from the code models see):

- function selection: the docstring's first sentence is the task, the documented
  function the answer, and up to four other functions the candidates: same-file
  functions first (the hard cases), then those sharing the most name words;
- completion (Python only): the function with its body removed, the docstring as the
  requirements, the units it calls as context. Built tasks have no tests, so they score
  similarity only; ``pass_rate`` comes from hand-written task sets with tests.

Bug localisation needs a real bug report, so it is never built. Everything here is
deterministic given the run's seed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ...schemas import CodeUnit
from .leaks import identifier_words
from .tasks import (
    CompletionTask,
    FunctionSelectionTask,
    Loaded,
    TaskType,
    UnitRef,
)

if TYPE_CHECKING:
    from ...context import RunContext

MAX_FUNCTION_SELECTION = 20
MAX_COMPLETION = 10
DISTRACTORS = 4
SOURCE = "built from the codebase"


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", flat)
    return (match.group(1) if match else flat).strip()


def _documented(units: list[CodeUnit]) -> list[CodeUnit]:
    return sorted((u for u in units if u.type in ("function", "method") and u.docstring
                   and len(u.docstring.split()) >= 5 and not u.short_name.startswith("_")),
                  key=lambda u: u.id)


def _words(name: str) -> set[str]:
    return {w for w in identifier_words(name) if len(w) > 2}


def _distractors(target: CodeUnit, pool: list[CodeUnit], ctx: RunContext) -> list[CodeUnit]:
    others = [u for u in pool if u.id != target.id and u.language == target.language
              and u.short_name != target.short_name]
    same_file = [u for u in others if u.path == target.path]
    words = _words(target.name)
    rest = sorted((u for u in others if u.path != target.path),
                  key=lambda u: (-len(words & _words(u.name)), u.id))
    rng = ctx.rng("downstream", "build", target.id)
    rng.shuffle(same_file)
    return (same_file + rest)[:DISTRACTORS]


def build_tasks(kind: TaskType, ctx: RunContext) -> list[Loaded[Any]]:
    """Tasks of ``kind`` built from the codebase (empty for bug localisation)."""
    if kind == "function_selection":
        return _function_selection(ctx)
    if kind == "completion":
        return _completion(ctx)
    return []


def _pick(units: list[CodeUnit], limit: int, ctx: RunContext, kind: str) -> list[CodeUnit]:
    if len(units) <= limit:
        return units
    return sorted(ctx.rng("downstream", "build", kind).sample(units, limit), key=lambda u: u.id)


def _function_selection(ctx: RunContext) -> list[Loaded[Any]]:
    pool = [u for u in ctx.all_units if u.type in ("function", "method")]
    out: list[Loaded[Any]] = []
    for n, unit in enumerate(_pick(_documented(ctx.units), MAX_FUNCTION_SELECTION, ctx,
                                   "function_selection"), start=1):
        distractors = _distractors(unit, pool, ctx)
        if not distractors:
            continue
        candidates = [unit, *distractors]
        ctx.rng("downstream", "order", unit.id).shuffle(candidates)
        task = FunctionSelectionTask(
            id=f"auto-fs-{unit.id[:12]}",
            description=_first_sentence(unit.docstring or ""),
            correct=UnitRef(path=unit.path, name=unit.name),
            candidates=[UnitRef(path=u.path, name=u.name) for u in candidates])
        out.append(Loaded(task=task, source=f"{SOURCE} #{n}", line=n, file=SOURCE))
    return out


def _completion(ctx: RunContext) -> list[Loaded[Any]]:
    eligible = [u for u in _documented(ctx.units) if u.language == "python"
                and u.relationships.calls_ids]
    out: list[Loaded[Any]] = []
    for n, unit in enumerate(_pick(eligible, MAX_COMPLETION, ctx, "completion"), start=1):
        task = CompletionTask(id=f"auto-c-{unit.id[:12]}", path=unit.path, name=unit.name,
                              requirements=" ".join((unit.docstring or "").split()))
        out.append(Loaded(task=task, source=f"{SOURCE} #{n}", line=n, file=SOURCE))
    return out
