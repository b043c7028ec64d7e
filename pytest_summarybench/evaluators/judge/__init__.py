"""The judge family, LLM-as-judge (docs/methods.md#judge-family): the evaluators ``judge/pointwise``
(``pointwise``) and ``judge/pairwise`` (``pairwise``) and what they are made of.

One concern per module: ``base`` (what the two evaluators share about a run),
``prompts`` (the spec texts), ``verdicts`` (schemas and parsing), ``calling`` (asking a
judge, retries, structured output), ``bradley_terry``, ``tally`` (wins / losses / ties,
intervals), ``audit`` (position and length bias, length-controlled win rate) and
``agreement`` (kappas). Which judge judges which model (docs/methods.md#judge-selection) is a role
of the run: ``roles/judges.py``, read through ``ctx.roles.judge_plan``.
"""

from __future__ import annotations

from ...roles.judges import JudgePlan, pair_id, plan_judges, split_pair
from .agreement import cohen_kappa, fleiss_kappa, judge_agreement
from .audit import PairVerdict, length_controlled, position_bias
from .base import JudgeEvaluator
from .bradley_terry import BTFit, fit, fit_outcomes, wins_matrix
from .calling import Answer, JudgeClient, JudgeError, parse_judge_error
from .pairwise import JudgePairwise
from .pointwise import JudgePointwise
from .prompts import CRITERIA_WEIGHTS, PROMPT_VERSION, weighted_average
from .tally import head_to_head, mean_ci, tally
from .verdicts import (
    InvalidVerdict,
    PairwiseVerdict,
    PointwiseVerdict,
    parse_pairwise,
    parse_pointwise,
)

__all__ = [
    "CRITERIA_WEIGHTS", "PROMPT_VERSION", "Answer", "BTFit", "InvalidVerdict", "JudgeClient",
    "JudgeError", "JudgeEvaluator", "JudgePairwise", "JudgePlan", "JudgePointwise",
    "PairVerdict", "PairwiseVerdict", "PointwiseVerdict", "cohen_kappa", "fit",
    "fit_outcomes", "fleiss_kappa", "head_to_head", "judge_agreement", "length_controlled",
    "mean_ci", "pair_id", "parse_judge_error", "parse_pairwise", "parse_pointwise",
    "plan_judges", "position_bias", "split_pair", "tally", "weighted_average", "wins_matrix",
]
