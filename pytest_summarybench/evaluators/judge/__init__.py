"""The judge family, LLM-as-judge (docs/methods.md#judge-family): the evaluators ``judge/pointwise``
(``pointwise``) and ``judge/pairwise`` (``pairwise``) and what they are made of.

One concern per module: ``base`` (what the two evaluators share about a run),
``prompts`` (the spec texts), ``verdicts`` (schemas and parsing), ``calling`` (asking a
judge, retries, structured output), ``bradley_terry``, ``tally`` (wins / losses / ties,
intervals), ``audit`` (position and length bias, length-controlled win rate) and
``agreement`` (kappas). Which judge judges which model (docs/methods.md#judge-selection) is a role
of the run: ``roles/judges.py``, read through ``ctx.roles.judge_plan``.

The package declares the family (``FAMILY``: its name, title, weights, evaluators,
settings section and report layouts), which ``evaluators/registry.py`` lists; the
modules are imported only when the family runs.
"""

from __future__ import annotations

from ...core.family import Family

FAMILY = Family(
    name="judge",
    title="Judges",
    weight=0.30,
    evaluators={
        "judge/pointwise": "pytest_summarybench.evaluators.judge.pointwise:JudgePointwise",
        "judge/pairwise": "pytest_summarybench.evaluators.judge.pairwise:JudgePairwise",
    },
    weights={"pointwise": 0.4, "pairwise": 0.6},
    settings="pytest_summarybench.evaluators.judge.settings:JudgeSettings",
    layouts={
        "judge/pairwise": "pytest_summarybench.evaluators.judge.report:pairwise_blocks",
        "judge/pointwise": "pytest_summarybench.evaluators.judge.report:pointwise_blocks",
    },
)

__all__ = ["FAMILY"]
