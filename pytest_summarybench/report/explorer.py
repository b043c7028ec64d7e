"""The explorer: one self-contained, offline page per run for reading what the models
wrote, unit by unit (``templates/explorer.html.jinja2`` and ``explorer.js``).

The data (``explorer_data.py``) is embedded once, as JSON in a script element that no text
in it can close; the page's own script lists the units (rendering only the rows in view,
so a run of 1,000 units x 5 models stays usable) and shows every text through
``textContent``. It is written beside report.html, in the run's folder and, for a complete
run, in the output directory (``runs.write_session_reports``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .explorer_data import embed_json, explorer_data
from .files import FILE_NAMES

if TYPE_CHECKING:
    from ..aggregate import ReportInputs
    from ..schemas import BenchmarkReport


def render_explorer(report: BenchmarkReport, inputs: ReportInputs, *,
                    report_href: str = FILE_NAMES["html"]) -> str:
    """The explorer page of ``report``, from the inputs it was built from; it links back
    to the report at ``report_href`` ("" for no link)."""
    from markupsafe import Markup

    from .render import _environment, _finished, page_script

    data = explorer_data(report, inputs)
    script, script_hash = page_script("explorer.js")
    run = data["run"]
    return _finished(_environment().get_template("explorer.html.jinja2").render(
        name=report.metadata.name, run_id=run["id"], date=run["date"],
        partial=run["partial"], report_href=report_href,
        data=Markup(embed_json(data)), script=script, script_hash=script_hash))
