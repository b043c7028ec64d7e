"""Renderings of a report: Markdown (docs/reports.md#what-a-run-writes), JSON
(docs/reports.md#the-results-file) and a self-contained HTML
page, from jinja2 templates with autoescaping (summaries and code are untrusted text).

Autoescaping does not remove control characters, and a report quotes errors that quote
providers: every rendering is finished by ``_finished``, which masks secret values and
writes control characters out as visible escapes (``llm/redaction.py``)."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..schemas import BenchmarkReport
from . import charts
from .files import EXPLORER_FILE, FILE_NAMES, publish
from .json_report import report_json
from .view import LOW_N, build_view, interval, md, num, pvalue, signed, usd

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

    from ..core.family import Family

@cache
def _environment() -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pytest_summarybench.report", "templates"),
        # HTML templates escape every value; Markdown escapes through the ``md`` filter.
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.jinja2",),
                                            disabled_extensions=("md.jinja2", "js"),
                                            default=True, default_for_string=True),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["md"] = md
    env.globals.update(num=num, signed=signed, usd=usd, pvalue=pvalue, interval=interval)
    return env


def _cost_phases(report: BenchmarkReport) -> list[str]:
    phases: list[str] = []
    for c in report.costs.by_model.values():
        phases.extend(p for p in c.by_phase if p not in phases)
    return phases


def render_markdown(report: BenchmarkReport, families: Iterable[Family] = ()) -> str:
    template = _environment().get_template("report.md.jinja2")
    text = template.render(view=build_view(report, families), cost_phases=_cost_phases(report))
    # Optional sections leave runs of blank lines; Markdown needs at most one.
    lines: list[str] = []
    for line in text.splitlines():
        if line.strip() or (lines and lines[-1].strip()):
            lines.append(line.rstrip())
    return _finished("\n".join(lines).strip() + "\n")


def _finished(document: str) -> str:
    """A rendered Markdown or HTML document made safe to write and to open: secret values
    masked, control characters (an ESC that a terminal or viewer would obey) escaped."""
    from ..llm.redaction import neutralise, redact

    return neutralise(redact(document, shapes=False))


def page_script(name: str) -> tuple[Markup, str]:
    """The script template ``name`` to inline in a page, and the Content-Security-Policy
    source that allows it (its hash). The only script on our pages is ours, so even a
    payload that escaped the autoescaping could not run or load anything."""
    from markupsafe import Markup

    env = _environment()
    assert env.loader is not None
    script, _, _ = env.loader.get_source(env, name)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    return Markup(script), f"sha256-{digest}"


def render_html(report: BenchmarkReport, *, explorer_href: str = "",
                families: Iterable[Family] = ()) -> str:
    """The HTML report; with ``explorer_href``, its units, heat map and head-to-head link
    into the explorer at that address."""
    script, script_hash = page_script("sort.js")
    return _finished(_environment().get_template("report.html.jinja2").render(
        view=build_view(report, families), cost_phases=_cost_phases(report),
        charts={"bars": charts.score_bars(report), "scatter": charts.cost_quality(report),
                "heatmap": charts.language_heatmap(report, LOW_N)},
        explorer=explorer_href, script=script, script_hash=script_hash))


def render(report: BenchmarkReport, fmt: str, families: Iterable[Family] = ()) -> str:
    """The report as ``markdown``, ``json`` or ``html`` text (``families``: the run's own
    families, for their titles and layouts, next to the built-in ones)."""
    if fmt == "markdown":
        return render_markdown(report, families)
    if fmt == "html":
        return render_html(report, families=families)
    if fmt == "json":
        return report_json(report)
    raise ValueError(f"unknown report format {fmt!r}; expected one of markdown, json, html")


def write_reports(report: BenchmarkReport, output_dir: Path, formats: Iterable[str], *,
                  copies: Iterable[Path] = (), explorer: str | None = None,
                  families: Iterable[Family] = (), rotate: bool = False) -> dict[str, Path]:
    """Write each format to its file in ``output_dir`` (and in each of ``copies``);
    format -> path in ``output_dir``. ``explorer``, the explorer's page, is written as
    ``EXPLORER_FILE`` beside the reports (key ``explorer``), and report.html links to it.

    All or none, through ``files.publish``: with ``rotate`` (a complete session's reports
    becoming the output directory's own) the earlier session's files are moved to
    ``*.previous.*`` only once every new file is written.
    """
    names = {fmt: FILE_NAMES[fmt] for fmt in dict.fromkeys(formats)}
    declared = tuple(families)
    texts = {fmt: render_html(report, explorer_href=EXPLORER_FILE, families=declared)
             if fmt == "html" and explorer is not None else render(report, fmt, declared)
             for fmt in names}
    if explorer is not None:
        names["explorer"], texts["explorer"] = EXPLORER_FILE, explorer
    paths = publish(output_dir, {names[fmt]: text for fmt, text in texts.items()},
                    copies=copies, rotate=rotate)
    return {fmt: paths[names[fmt]] for fmt in texts}
