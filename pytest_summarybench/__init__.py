"""summarybench: a pytest plugin that benchmarks LLMs on writing code summaries for RAG code
search.

Public names are imported lazily (PEP 562) so that loading the pytest plugin, which
imports this package first, stays cheap.

PYTEST_DONT_REWRITE: the ``summarybench`` command imports this package before it starts
pytest, which would otherwise warn that it cannot rewrite the asserts of an installed
plugin's package already imported (this module has none).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "BenchmarkConfig": "pytest_summarybench.schemas",
    "BenchmarkReport": "pytest_summarybench.schemas",
    "CodeUnit": "pytest_summarybench.schemas",
    "GeneratedSummary": "pytest_summarybench.schemas",
    "ModelConfig": "pytest_summarybench.schemas",
    "ModelRanking": "pytest_summarybench.schemas",
    "ScoreRecord": "pytest_summarybench.schemas",
    "Family": "pytest_summarybench.core.family",
    "FamilySection": "pytest_summarybench.settings",
    "EvaluationError": "pytest_summarybench.evaluators",
    "InputError": "pytest_summarybench.core.errors",
    "RunError": "pytest_summarybench.core.errors",
    "SummarybenchError": "pytest_summarybench.core.errors",
    "Evaluator": "pytest_summarybench.evaluators",
    "MatrixItem": "pytest_summarybench.evaluators",
    "RunContext": "pytest_summarybench.context",
    "Settings": "pytest_summarybench.settings",
    "load_settings": "pytest_summarybench.settings",
    "Store": "pytest_summarybench.store",
}

__all__ = [
    "BenchmarkConfig", "BenchmarkReport", "CodeUnit", "EvaluationError", "Evaluator",
    "Family", "FamilySection", "GeneratedSummary", "InputError", "MatrixItem",
    "ModelConfig", "ModelRanking", "RunContext", "RunError", "ScoreRecord", "Settings",
    "Store", "SummarybenchError", "__version__", "load_settings",
]

if TYPE_CHECKING:
    from .context import RunContext
    from .core.errors import InputError, RunError, SummarybenchError
    from .core.family import Family
    from .evaluators import EvaluationError, Evaluator, MatrixItem
    from .schemas import (
        BenchmarkConfig,
        BenchmarkReport,
        CodeUnit,
        GeneratedSummary,
        ModelConfig,
        ModelRanking,
        ScoreRecord,
    )
    from .settings import FamilySection, Settings, load_settings
    from .store import Store


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_summarybench' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
