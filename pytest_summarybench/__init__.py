"""summarybench: a pytest plugin that benchmarks LLMs on writing code summaries for RAG code
search."""

from __future__ import annotations

from .schemas import (
    BenchmarkConfig,
    BenchmarkReport,
    CodeUnit,
    GeneratedSummary,
    ModelConfig,
    ModelRanking,
    ScoreRecord,
)

__version__ = "0.1.0"

__all__ = [
    "BenchmarkConfig", "BenchmarkReport", "CodeUnit", "GeneratedSummary", "ModelConfig",
    "ModelRanking", "ScoreRecord", "__version__",
]
