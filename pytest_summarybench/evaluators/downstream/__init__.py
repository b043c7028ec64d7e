"""The downstream family (docs/methods.md#downstream-family): tasks performed by a task model
with each model's summaries.

The evaluators: ``completion`` (``downstream/completion``), ``bug_localisation`` and
``function_selection``, on the family's base
``base.DownstreamEvaluator``. What they are made of: ``tasks`` (schemas and JSONL
loading), ``taskset`` (where a run's tasks and task model come from), ``build`` (tasks
built from a codebase without a task set), ``prompts`` (the task prompts, verbatim),
``answers`` (reading the task model's answers), ``splice`` (the partial code, and the
completion spliced into its module), ``sandbox_run`` (a completion's tests in the
sandbox), ``verdicts`` and ``observations`` (deciding those tests outside it),
``similarity`` (the lexical half of CodeBLEU) and ``outside`` (text leaving the sandbox).
"""

from __future__ import annotations

from ...sandbox import SandboxLimits, SandboxResult, run_sandboxed
from .base import DownstreamEvaluator
from .bug_localisation import BugLocalisationEvaluator
from .completion import CompletionEvaluator
from .function_selection import FunctionSelectionEvaluator
from .similarity import code_similarity
from .tasks import (
    TASK_TYPES,
    BugLocalisationTask,
    CompletionTask,
    FunctionSelectionTask,
    TaskFileError,
    UnitRef,
)

__all__ = ["TASK_TYPES", "BugLocalisationEvaluator", "BugLocalisationTask", "CompletionEvaluator",
           "CompletionTask", "DownstreamEvaluator", "FunctionSelectionEvaluator",
           "FunctionSelectionTask", "SandboxLimits", "SandboxResult", "TaskFileError", "UnitRef",
           "code_similarity", "run_sandboxed"]
