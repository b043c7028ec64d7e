"""The generation stage: every model under test summarizes every sampled unit
(docs/methods.md#summary-generation).

``prompts`` holds the summary prompts, ``builtin`` the offline baseline summarizers,
``runner`` the phase itself and ``calls`` its model calls (through the session's
scheduler, ``llm/scheduler.py``); the dry run of every phase is
``pytest_summarybench.engine.estimate``.
"""

from __future__ import annotations

from .builtin import BUILTIN_NAMES
from .builtin_base import BUILTIN_VERSION
from .prompts import PROMPT_VERSION, build_messages
from .report import GenerationReport, ModelStats
from .runner import run_generation
from .summaries import generation_params, summary_id

__all__ = ["BUILTIN_NAMES", "BUILTIN_VERSION", "PROMPT_VERSION", "GenerationReport",
           "ModelStats", "build_messages", "generation_params", "run_generation",
           "summary_id"]
