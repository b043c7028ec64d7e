"""Evaluators: the ``Evaluator`` protocol (``base.py``), the registry of the built-in ones
(``registry.py``), and one package per evaluator family: ``judge/``, ``contrastive/``,
``retrieval/`` and ``downstream/``, each with its prompts, answer parsing, evaluators and
report section.

Nothing heavy is imported until an evaluator is used. Users add their own through the
``pytest_summarybench_evaluators`` hook.
"""

from __future__ import annotations

from .base import (
    Component,
    EvaluationError,
    Evaluator,
    MatrixItem,
    SummarizingEvaluator,
    unit_items,
)
from .registry import BUILTIN_EVALUATORS, builtin_class, load_builtin

__all__ = ["BUILTIN_EVALUATORS", "Component", "EvaluationError", "Evaluator", "MatrixItem",
           "SummarizingEvaluator", "builtin_class", "load_builtin", "unit_items"]
