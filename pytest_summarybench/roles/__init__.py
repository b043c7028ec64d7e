"""Models' roles in a run (``vocabulary.Role``): which judges judge which model (spec 5.3,
``judges``), the task model (``task``), and ``Roles``, what one run context resolves of
them (``assign``, ``RunContext.roles``), including the helper that writes queries and
picks ``contrastive/llm`` options.
"""

from __future__ import annotations

from .assign import Roles
from .judges import (
    HOW_TO_ADD,
    Assignment,
    JudgePlan,
    exclusion_reason,
    pair_id,
    plan_judges,
    select_diverse,
    split_pair,
)
from .task import NO_TASK_MODEL, TaskModelError, task_model

__all__ = ["HOW_TO_ADD", "NO_TASK_MODEL", "Assignment", "JudgePlan", "Roles", "TaskModelError",
           "exclusion_reason", "pair_id", "plan_judges", "select_diverse", "split_pair",
           "task_model"]
