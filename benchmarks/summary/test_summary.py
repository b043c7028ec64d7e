"""The code-summary benchmark: every sampled code unit x model under test x evaluator.

summarybench parametrizes ``sb_case`` from the configuration (summarybench.yaml and the
``--sb-*`` options); each case scores one model's summary of one unit with one evaluator
and records the scores through the plugin's hooks. Copy this file into your own project
to run the benchmark there; select with ``-k`` (a model, an evaluator, a language or a
path) or ``-m`` (an evaluator family: judge, contrastive, retrieval, downstream).
"""

from __future__ import annotations


def test_summary(sb_case):
    records = sb_case.evaluate()
    assert records, f"{sb_case.item.evaluator} returned no score for {sb_case.item.test_id}"
