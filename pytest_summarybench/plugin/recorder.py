"""How a benchmark test's scores travel: recorded on the test's node, carried on its
report (pytest serialises ``report.__dict__`` across xdist, as Hypothesis ships its
statistics), and read back by the controller and the pytest-html columns.

Plain pytest and the standard library at import time: ``plugin/__init__.py`` imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from _pytest.nodes import Node

    from ..schemas import ScoreRecord

#: Where a test's records wait on its node until its report is made.
RECORDS_KEY = pytest.StashKey[list[str]]()
#: The report attribute the records ride on (as the records' JSON).
REPORT_ATTR = "summarybench_records"
#: Characters of a record's error kept (it may quote a model's answer).
MAX_ERROR_CHARS = 5000


def recorder(node: Node) -> Callable[[ScoreRecord], None]:
    """A function that records a score on ``node``'s stash (see ``sb_record``)."""
    stash = node.stash
    nodeid = node.nodeid

    def record(rec: ScoreRecord) -> None:
        from ..llm.redaction import scrub, scrub_data

        rec.nodeid = nodeid
        # Every record passes here on its way to the store, results.json and the reports:
        # the one place its text (errors, details quoting answers) is redacted and made
        # printable.
        if rec.error is not None:
            rec.error = scrub(rec.error, max_chars=MAX_ERROR_CHARS)
        if rec.details:
            rec.details = scrub_data(rec.details)
        # As JSON text: it crosses xdist as it is, and the reports pytest keeps for the
        # whole session then hold no containers for the garbage collector to walk.
        stash.setdefault(RECORDS_KEY, []).append(rec.model_dump_json())

    return record


def carry(item: pytest.Item, report: pytest.TestReport) -> None:
    """Move the records ``item`` made so far from its stash onto ``report``."""
    records = item.stash.get(RECORDS_KEY, None)
    if records:
        setattr(report, REPORT_ATTR, tuple(records))
        del item.stash[RECORDS_KEY]


def carried(report: pytest.TestReport) -> Sequence[str]:
    """The records' JSON a report carries (empty when its test recorded nothing)."""
    return getattr(report, REPORT_ATTR, None) or ()


def scrub_report(report: pytest.TestReport) -> None:
    """Redact and neutralise what pytest will print and write (terminal, junit XML,
    pytest-html) for a benchmark test: its failure text and captured output. A failure
    whose text needs no change keeps pytest's own traceback rendering."""
    from ..llm.redaction import scrub

    if report.failed and report.longrepr is not None \
            and not isinstance(report.longrepr, tuple):
        text = str(report.longrepr)
        clean = scrub(text)
        if clean != text:
            report.longrepr = clean
    if report.sections:
        report.sections = [(title, scrub(content)) for title, content in report.sections]
