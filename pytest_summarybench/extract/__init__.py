"""Phase 1 of the benchmark: code units out of a codebase (docs/methods.md#code-units-and-sampling).

The configuration imports cheaply; the engine (tree-sitter, grammars) loads on first use
of :func:`extract_units`, so importing this package from the pytest plugin costs little.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .config import LANGUAGES, ExtractionConfig, ExtractionFilters, ExtractionTypes

if TYPE_CHECKING:
    from .codebase import extract_units
    from .result import ExtractionResult, SkippedFile
    from .sampling import sample_units

__all__ = [
    "LANGUAGES",
    "ExtractionConfig",
    "ExtractionFilters",
    "ExtractionResult",
    "ExtractionTypes",
    "SkippedFile",
    "extract_units",
    "sample_units",
]

_LAZY = {
    "extract_units": "codebase",
    "ExtractionResult": "result",
    "SkippedFile": "result",
    "sample_units": "sampling",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
