"""The downstream family (docs/methods.md#downstream-family): tasks performed by a task model
with each model's summaries.

The evaluators: ``completion`` (``downstream/completion``), ``bug_localisation`` and
``function_selection``, on the family's base
``base.DownstreamEvaluator``. What they are made of: ``tasks`` (schemas and JSONL
loading), ``taskset`` (where a run's tasks and task model come from), ``build`` (tasks
built from a codebase without a task set), ``prompts`` (the task prompts, verbatim),
``answers`` (reading the task model's answers), ``splice`` (the partial code, and the
completion spliced into its module), ``sandbox_run`` (a completion's tests in the
sandbox), ``verdicts`` and ``observations`` (deciding those tests outside it),
``similarity`` (the lexical half of CodeBLEU) and ``outside`` (text leaving the sandbox).

The package declares the family (``FAMILY``: its name, title, weights, evaluators,
settings section and report layouts), which ``evaluators/registry.py`` lists; the
modules are imported only when the family runs.
"""

from __future__ import annotations

from ...core.family import Family

FAMILY = Family(
    name="downstream",
    title="Downstream tasks",
    weight=0.20,
    evaluators={
        "downstream/completion":
            "pytest_summarybench.evaluators.downstream.completion:CompletionEvaluator",
        "downstream/bug_localisation":
            "pytest_summarybench.evaluators.downstream.bug_localisation:BugLocalisationEvaluator",
        "downstream/function_selection":
            "pytest_summarybench.evaluators.downstream.function_selection:"
            "FunctionSelectionEvaluator",
    },
    weights={"completion": 0.4, "bug_localization": 0.3, "function_selection": 0.3},
    settings="pytest_summarybench.evaluators.downstream.settings:DownstreamSettings",
)

__all__ = ["FAMILY"]
