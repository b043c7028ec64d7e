"""pytest-html integration: each benchmark test row of ``--html`` shows the unit, the
summary and its scores.

Registered from ``plugin.pytest_configure`` only when pytest-html is loaded (its hook
specs exist only then). pytest-html inserts cells as HTML, so every value is escaped here
with markupsafe, and scrubbed first (secrets masked, control characters escaped, length
bounded): summaries and errors are untrusted text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.vocabulary import models_of
from .recorder import carried

if TYPE_CHECKING:
    import pytest

    from .state import SummaryBenchState

#: Characters of a summary shown in the cell; more of it is in the cell's title.
SUMMARY_CHARS = 300
#: Characters of a summary in the title, and of an error in the cell: one row of a page
#: that may have ten thousand.
TITLE_CHARS = 4000
_COLUMNS = ("Unit", "Summary", "Scores")


class HtmlResultsColumns:
    """Adds Unit, Summary and Scores columns after the test id."""

    def __init__(self, state: SummaryBenchState) -> None:
        self.state = state

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells[2:2] = [f'<th class="col-sb">{name}</th>' for name in _COLUMNS]

    def pytest_html_results_table_row(self, report: pytest.TestReport,
                                      cells: list[str]) -> None:
        cells[2:2] = self.row_cells(carried(report))

    def row_cells(self, raw: Sequence[str]) -> list[str]:
        """The three cells of a test that recorded ``raw`` (the records' JSON, as they
        travel on the report; empty cells when it recorded nothing, so that the columns
        stay aligned)."""
        from markupsafe import Markup, escape

        from ..llm.redaction import scrub

        empty = [Markup('<td class="col-sb"></td>')] * len(_COLUMNS)
        records = [r for r in map(json.loads, raw) if r.get("benchmark", "summary") == "summary"]
        if not records:
            return [str(c) for c in empty]
        first = records[0]
        unit_id, model_id = first["unit_id"], first["model_id"]
        ctx = self.state.context()
        try:
            unit = ctx.unit(unit_id)
            unit_text = Markup("{}<br><small>{} {} ({})</small>").format(
                unit.name, unit.language, unit.path, unit.type)
        except KeyError:
            unit_text = escape(unit_id)
        summaries = []
        models = models_of(model_id)
        for model in models:
            s = ctx.summary(unit_id, model)
            text = s.summary if s is not None else (ctx.summary_error(unit_id, model) or "")
            text = scrub(text, max_chars=TITLE_CHARS)
            shown = text if len(text) <= SUMMARY_CHARS else text[:SUMMARY_CHARS - 1] + "…"
            prefix = f"{model}: " if len(models) > 1 else ""
            summaries.append(Markup('<span title="{}">{}{}</span>').format(text, prefix, shown))
        scores = []
        for rec in records:
            if rec.get("error"):
                scores.append(Markup("{}: error: {}").format(
                    rec["evaluator"], scrub(rec["error"], max_chars=TITLE_CHARS)))
                continue
            metrics = ", ".join(f"{k}={v:.3g}" for k, v in sorted(rec["metrics"].items()))
            scores.append(Markup("{}: {}").format(rec["evaluator"], metrics))
        return [str(Markup('<td class="col-sb">{}</td>').format(unit_text)),
                str(Markup('<td class="col-sb">{}</td>').format(Markup("<br>").join(summaries))),
                str(Markup('<td class="col-sb">{}</td>').format(Markup("<br>").join(scores)))]
