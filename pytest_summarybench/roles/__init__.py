"""Models' roles in a run (``vocabulary.Role``): which judges judge which model
(docs/methods.md#judge-selection, ``judges``), the task model (``task``), and ``Roles``, what one
run context resolves of them (``assign``, ``RunContext.roles``), including the helper that writes
queries and picks ``contrastive/llm`` options.
"""

from __future__ import annotations

from .advice import how_to_add
from .assign import Roles
from .judges import Assignment, JudgePlan, exclusion_reason, plan_judges, select_diverse
from .task import NO_TASK_MODEL, TaskModelError, task_model

__all__ = ["NO_TASK_MODEL", "Assignment", "JudgePlan", "Roles", "TaskModelError",
           "exclusion_reason", "how_to_add", "plan_judges", "select_diverse", "task_model"]
