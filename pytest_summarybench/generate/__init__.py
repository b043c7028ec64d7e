"""Phase 2 of the spec: every model under test summarizes every sampled unit.

``prompts`` holds the section 4.1 prompts, ``builtin`` the offline baseline summarizers,
``runner`` the phase itself and ``estimate`` the dry run. Model calls go through
``pytest_summarybench.llm``.
"""

from __future__ import annotations

from .builtin import BUILTIN_NAMES
from .builtin_base import BUILTIN_VERSION
from .estimate import EstimateRow, estimate_generation, format_estimate
from .prompts import PROMPT_VERSION, build_messages
from .report import GenerationReport, ModelStats
from .runner import run_generation
from .summaries import generation_params, summary_id

__all__ = [
    "BUILTIN_NAMES", "BUILTIN_VERSION", "PROMPT_VERSION", "EstimateRow", "GenerationReport",
    "ModelStats", "build_messages", "estimate_generation", "format_estimate",
    "generation_params", "run_generation", "summary_id",
]
