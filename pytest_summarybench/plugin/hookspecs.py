"""Hook specifications of summarybench (registered in ``pytest_addhooks``).

Implement them in a ``conftest.py`` or a plugin to add metrics, gate CI on the ranking,
or host another benchmark on the same harness.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from _pytest.terminal import TerminalReporter

    from ..core.family import Family
    from ..evaluators.base import Evaluator
    from ..schemas import BenchmarkReport, ModelRanking, ScoreRecord


def pytest_summarybench_record_score(record: ScoreRecord, config: pytest.Config) -> None:
    """Called when a matrix test recorded a score, on the controller.

    Records reach the controller on the test report, so with xdist this runs in the
    controller process, once per record, in report arrival order.

    :param record: the score (or the error) the test recorded; mutating ``metrics`` adds
        metrics that aggregation will see.
    :param config: the pytest config.

    Example::

        def pytest_summarybench_record_score(record, config):
            if record.evaluator == "contrastive/embedding" and not record.error:
                record.metrics["top3"] = float(record.metrics["predicted_rank"] <= 3)
    """


def pytest_summarybench_families(config: pytest.Config) -> list[Family]:
    """Called at startup (``pytest_configure``), to collect the evaluator families a plugin
    or a ``conftest.py`` declares next to the built-in ones.

    Each is a ``pytest_summarybench.Family`` as a built-in family package declares it: its
    name (its marker, its ``--sb-eval`` and ``--sb-only`` name), title, default weight,
    evaluators, component weights, settings section (``evaluation.<name>``) and report
    layouts. A name must be new: a built-in family is not replaced (replace one of its
    evaluators with ``pytest_summarybench_evaluators``). A ``conftest.py`` declaring one must
    be loaded at startup: in the rootdir or in a directory given on the command line.

    :param config: the pytest config.

    Example::

        def pytest_summarybench_families(config):
            return [Family(name="brevity", title="Brevity", weight=0.1,
                           evaluators={"brevity/sentences": SentenceCount})]
    """
    return []


def pytest_summarybench_evaluators(config: pytest.Config) -> list[Evaluator]:
    """Called when the matrix is built, to collect extra evaluators.

    Return a list of objects implementing ``pytest_summarybench.evaluators.Evaluator``;
    their items join the matrix next to the families' evaluators. An evaluator with the
    name of a family's one replaces it. An evaluator of a declared family runs when its
    family is enabled; one of a family declared nowhere always runs, weighed by
    ``weights.<family>`` in summarybench.yaml (declare the family instead:
    ``pytest_summarybench_families``).

    :param config: the pytest config.

    Example::

        def pytest_summarybench_evaluators(config):
            return [MyLengthPenalty()]
    """
    return []


def pytest_summarybench_ranking(rankings: list[ModelRanking], report: BenchmarkReport,
                                config: pytest.Config) -> list[str] | None:
    """Called with the final ranking on the controller, before any report is written.

    Use it to add figures to the report (mutating ``report`` changes what is written) or to
    gate CI: every message returned fails the session (exit status 1) and is printed in
    the terminal summary.

    :param rankings: models in rank order (the same objects as ``report.rankings``).
    :param report: the full report about to be written.
    :param config: the pytest config.
    :return: gate failure messages, or None.

    Example::

        def pytest_summarybench_ranking(rankings, report, config):
            worst = rankings[-1]
            if worst.overall_score < 0.2:
                return [f"{worst.model_id}: overall {worst.overall_score:.3f} < 0.2"]
    """


def pytest_summarybench_terminal_summary(terminalreporter: TerminalReporter,
                                         records: list[ScoreRecord],
                                         config: pytest.Config) -> None:
    """Called at the end of the session on the controller with every recorded score.

    Each hosted benchmark implements it for its own records (``record.benchmark``): the
    code-summary benchmark prints its ranking here, another benchmark its own tables
    (docs/harness.md).

    :param terminalreporter: pytest's terminal reporter, for ``write_sep``/``write_line``.
    :param records: all records of the session, every benchmark, in node id order.
    :param config: the pytest config.

    Example::

        def pytest_summarybench_terminal_summary(terminalreporter, records, config):
            mine = [r for r in records if r.benchmark == "mybench"]
            terminalreporter.write_line(f"mybench: {len(mine)} scores")
    """
