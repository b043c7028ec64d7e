"""Evaluators: the ``Evaluator`` protocol (``base.py``), the registry of the built-in
families (``registry.py``), what a family's report section is made of (``blocks.py``),
and one package per evaluator family: ``judge/``, ``contrastive/``, ``retrieval/`` and
``downstream/``, each declaring itself (``FAMILY``, a ``core.family.Family``) and holding
its settings section, prompts, answer parsing, evaluators and report layouts.

Nothing heavy is imported until an evaluator is used. Users add families through the
``pytest_summarybench_families`` hook and single evaluators through
``pytest_summarybench_evaluators``.
"""

from __future__ import annotations

from ..core.family import Family
from .base import (
    Component,
    EvaluationError,
    Evaluator,
    MatrixItem,
    SummarizingEvaluator,
    unit_items,
)
from .registry import BUILTIN_EVALUATORS, BUILTIN_FAMILIES, builtin_class, load_builtin

__all__ = ["BUILTIN_EVALUATORS", "BUILTIN_FAMILIES", "Component", "EvaluationError",
           "Evaluator", "Family", "MatrixItem", "SummarizingEvaluator", "builtin_class",
           "load_builtin", "unit_items"]
