"""The benchmark run schema of docs/reports.md#the-results-file."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import SBModel
from .config import BenchmarkConfig, ModelConfig

RunStatus = Literal["pending", "running", "completed", "failed"]


class CodebaseInfo(SBModel):
    """What was benchmarked."""

    name: str
    repository: str | None = None
    commit: str | None = None
    languages: list[str] = Field(default_factory=list)
    total_code_units: int = 0
    sampled_code_units: int = 0


class BenchmarkRun(SBModel):
    """One benchmark run as stored."""

    id: str
    name: str
    description: str = ""
    config: BenchmarkConfig
    codebase_info: CodebaseInfo
    models_under_test: list[ModelConfig]
    judge_models: list[ModelConfig] = Field(default_factory=list)
    status: RunStatus = "pending"
    started_at: str
    completed_at: str | None = None
