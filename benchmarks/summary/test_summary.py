"""The code-summary benchmark: every sampled code unit x model under test x evaluator.

summarybench parametrizes ``sb_case`` from the configuration (summarybench.yaml and the
``--sb-*`` options); each case scores one model's summary of one unit with one evaluator
and records the scores through the plugin's hooks. The test itself ships in the package
(``pytest_summarybench.suite``, which the ``summarybench`` command runs); importing it here
is all a project needs. Select with ``-k`` (a model, an evaluator, a language or a path)
or ``-m`` (an evaluator family: judge, contrastive, retrieval, downstream).
"""

from __future__ import annotations

from pytest_summarybench.suite.test_summary import test_summary

__all__ = ["test_summary"]
