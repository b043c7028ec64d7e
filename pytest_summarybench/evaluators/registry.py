"""The registry of built-in evaluators: each family's evaluators by name (``family/method``)
and the module and class that implement them, imported only when an evaluator is used.
Users add their own through the ``pytest_summarybench_evaluators`` hook."""

from __future__ import annotations

import importlib

from .base import Evaluator

#: Built-in evaluators by name (``family/method``), in report order.
BUILTIN_EVALUATORS: dict[str, str] = {
    "judge/pointwise": "pytest_summarybench.evaluators.judge.pointwise:JudgePointwise",
    "judge/pairwise": "pytest_summarybench.evaluators.judge.pairwise:JudgePairwise",
    "contrastive/embedding":
        "pytest_summarybench.evaluators.contrastive.embedding:ContrastiveEmbedding",
    "contrastive/lexical":
        "pytest_summarybench.evaluators.contrastive.lexical:ContrastiveLexical",
    "contrastive/llm": "pytest_summarybench.evaluators.contrastive.llm:ContrastiveLLM",
    "retrieval/embedding": "pytest_summarybench.evaluators.retrieval.embedding:RetrievalEmbedding",
    "downstream/completion":
        "pytest_summarybench.evaluators.downstream.completion:CompletionEvaluator",
    "downstream/bug_localisation":
        "pytest_summarybench.evaluators.downstream.bug_localisation:BugLocalisationEvaluator",
    "downstream/function_selection":
        "pytest_summarybench.evaluators.downstream.function_selection:FunctionSelectionEvaluator",
}


def builtin_class(name: str) -> type[Evaluator]:
    """The class of the built-in evaluator called ``name`` (its module imported)."""
    module_name, _, class_name = BUILTIN_EVALUATORS[name].partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, class_name)  # type: ignore[no-any-return]


def load_builtin(name: str) -> Evaluator:
    """Instantiate the built-in evaluator called ``name``."""
    return builtin_class(name)()
