"""Phase 3d of the spec (section 8): downstream tasks performed with each model's summaries.

``tasks`` (schemas and JSONL loading), ``taskset`` (where a run's tasks and task model come
from), ``build`` (tasks built from a codebase without a task set), ``prompts`` (spec
8.1-8.3 verbatim), ``answers`` (reading the task model's answers), ``completion``
(splicing and testing completed code), ``sandbox`` (where generated code runs),
``similarity`` (the lexical half of CodeBLEU) and ``base`` (what the three evaluators in
``evaluators/downstream_*.py`` share).
"""

from __future__ import annotations

from ..sandbox import SandboxLimits, SandboxResult, run_sandboxed
from .similarity import code_similarity
from .tasks import (
    TASK_TYPES,
    BugLocalisationTask,
    CompletionTask,
    FunctionSelectionTask,
    TaskFileError,
    UnitRef,
)

__all__ = ["TASK_TYPES", "BugLocalisationTask", "CompletionTask", "FunctionSelectionTask",
           "SandboxLimits", "SandboxResult", "TaskFileError", "UnitRef", "code_similarity",
           "run_sandboxed"]
