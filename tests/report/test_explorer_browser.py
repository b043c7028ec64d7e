"""The explorer in a real headless Chromium, driven as a reader would: filter, search, sort
by disagreement, open a unit, read a summary and a verdict, follow a link from the
report's failure table; hostile text stays text, only rows in view exist, nothing is
fetched and nothing logs an error. Skipped when no Chromium is installed."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from cdp import Browser, find_browser
from synthetic_explorer import HOSTILE, make_explorer_inputs, make_explorer_report

from pytest_summarybench.report.explorer import render_explorer
from pytest_summarybench.report.explorer_data import explorer_data
from pytest_summarybench.report.render import write_reports

INSTALL = "apt-get install -y chromium chromium-driver"


@pytest.fixture(scope="module")
def browser_exe() -> str:
    exe = find_browser()
    if exe is None:
        pytest.skip(f"no Chromium installed (as root: {INSTALL})")
    return exe


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    inputs = make_explorer_inputs(30)
    report = make_explorer_report(inputs)
    folder = tmp_path_factory.mktemp("explorer")
    write_reports(report, folder, ["html"], explorer=render_explorer(report, inputs))
    return folder, json.loads(json.dumps(explorer_data(report, inputs)))


def _until(browser: Browser, expression: str, timeout: float = 10) -> Any:
    """The value of ``expression`` once it is truthy (the page reacts to events)."""
    deadline = time.monotonic() + timeout
    while True:
        value = browser.evaluate(expression)
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def _choose(browser: Browser, control: str, value: str) -> None:
    browser.evaluate(f"(() => {{ const c = document.getElementById({json.dumps(control)});"
                     f" c.value = {json.dumps(value)};"
                     f" c.dispatchEvent(new Event(c.tagName === 'INPUT' ? 'input' : 'change'));"
                     f" }})()")


ROWS = ("Array.from(document.querySelectorAll('#spacer a.row')).map(r => "
        "[r.getAttribute('data-unit'), ...Array.from(r.children).map(c => c.textContent)])")


def _problems(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events
            if e["method"] == "Runtime.exceptionThrown"
            or (e["method"] == "Runtime.consoleAPICalled"
                and e["params"]["type"] in ("error", "warning", "assert"))
            or (e["method"] == "Log.entryAdded"
                and e["params"]["entry"]["level"] in ("error", "warning"))]


def test_a_reader_filters_sorts_opens_and_follows_links(
        browser_exe: str, site: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    folder, data = site
    units, models = data["units"], data["models"]
    explorer = (folder / "explorer.html").resolve().as_uri()
    report = (folder / "report.html").resolve().as_uri()
    with Browser(browser_exe, tmp_path / "profile", height=1200) as browser:
        browser.send("Page.navigate", {"url": explorer}, page=True)
        browser.wait_for("Page.loadEventFired")
        assert _until(browser, "document.body.getAttribute('data-ready')") == "1"
        assert browser.evaluate("document.getElementById('count').textContent") == \
            f"{len(units)} of {len(units)} units"

        # Filter by language: only Go units, all of them.
        _choose(browser, "f-lang", "go")
        rows = browser.evaluate(ROWS)
        assert sorted(r[0] for r in rows) == sorted(u["id"] for u in units if u["lang"] == "go")
        assert {r[3] for r in rows} == {"go"}
        # And by outcome for one model: its contrastive misses among them.
        _choose(browser, "f-model", models[1])
        _choose(browser, "f-out", "contrastive")
        rows = browser.evaluate(ROWS)
        assert sorted(r[0] for r in rows) == sorted(
            u["id"] for u in units if u["lang"] == "go" and u["out"][1] & 4)
        assert rows, "the synthetic run has contrastive misses among its Go units"
        for control in ("f-lang", "f-model", "f-out"):
            _choose(browser, control, "")
        # Search by name or path.
        _choose(browser, "f-q", "updateRecord2")
        rows = browser.evaluate(ROWS)
        assert sorted(r[0] for r in rows) == sorted(
            u["id"] for u in units if "updaterecord2" in (u["path"] + " " + u["name"]).lower())
        _choose(browser, "f-q", "")

        # Sort by disagreement between the first two models.
        _choose(browser, "f-a", models[0])
        _choose(browser, "f-b", models[1])
        _choose(browser, "f-sort", "disagree")
        shared = [u for u in units if None not in (u["overall"][0], u["overall"][1])]
        expected = sorted(shared, key=lambda u: -abs(u["overall"][0] - u["overall"][1]))
        rows = browser.evaluate(ROWS)
        assert [r[0] for r in rows[:5]] == [u["id"] for u in expected[:5]]
        assert float(rows[0][-1]) == pytest.approx(
            expected[0]["overall"][0] - expected[0]["overall"][1], abs=1e-3)
        assert "sort=disagree" in browser.evaluate("location.hash")

        # Open the unit where they disagree most: its summaries and verdicts.
        browser.evaluate("document.querySelector('#spacer a.row').click()")
        top = expected[0]
        title = _until(browser, "document.getElementById('unit-title') && "
                                "document.getElementById('unit-title').textContent")
        assert title == top["name"]
        summary = browser.evaluate(
            f"document.querySelector('#detail .card[data-model={json.dumps(models[0])}] pre')"
            ".textContent")
        assert summary == top["sum"][0]
        verdicts = browser.evaluate(
            "Array.from(document.querySelectorAll('#part-pairwise tbody tr')).map(r => "
            "Array.from(r.cells).map(c => c.textContent))")
        assert len(verdicts) == len(top["pairwise"]) == 20
        judged = {(models[p[1]], models[p[2]]): "tie" if p[3] < 0 else models[p[3]]
                  for p in top["pairwise"]}
        for row in verdicts:
            first, second = row[2].removeprefix("A: ").split(", B: ")
            assert row[3] == judged[(first, second)]
        reasons = browser.evaluate(
            "document.querySelector('#part-pointwise tbody tr td.reasoning').textContent")
        assert reasons == top["pointwise"][0][4]

        # Hostile text: shown as text, never run, never markup.
        browser.evaluate("location.hash = '#unit=u0001'")
        assert _until(browser, "document.getElementById('unit-title') && "
                               "document.getElementById('unit-title').textContent === "
                               + json.dumps(HOSTILE))
        assert browser.evaluate("window.__xss === undefined")
        assert browser.evaluate("document.querySelectorAll('img').length") == 0
        assert browser.evaluate(
            "document.querySelector('#detail .card pre').textContent") == HOSTILE
        # A judge's unreadable answer quoting it, in the errors of unit 2.
        browser.evaluate("location.hash = '#unit=u0002'")
        assert HOSTILE in _until(browser, "document.querySelector('#part-errors') && "
                                          "document.querySelector('#part-errors').textContent")
        assert browser.evaluate("window.__xss === undefined")

        # Only the rows in view exist; scrolling to the end brings the last one.
        browser.evaluate("location.hash = ''")
        browser.evaluate("document.getElementById('viewport').style.height = '112px'")
        browser.evaluate("document.getElementById('viewport').dispatchEvent(new Event('scroll'))")
        assert _until(browser, "document.querySelectorAll('#spacer a.row').length < 30")
        browser.evaluate("(() => { const v = document.getElementById('viewport');"
                         " v.scrollTop = v.scrollHeight; })()")
        assert _until(browser, "Array.from(document.querySelectorAll('#spacer a.row'))"
                               f".some(r => r.getAttribute('data-unit') === "
                               f"{json.dumps(units[-1]['id'])})")

        # From the report's failure table to the unit in the explorer.
        seen = list(browser.events)
        browser.events.clear()
        browser.send("Page.navigate", {"url": report}, page=True)
        browser.wait_for("Page.loadEventFired")
        link = browser.evaluate(
            "document.querySelector('#failures-table a').getAttribute('href')")
        assert link.startswith("explorer.html#unit=")
        seen += browser.events
        browser.events.clear()
        browser.evaluate("document.querySelector('#failures-table a').click()")
        browser.wait_for("Page.loadEventFired")
        unit_id = link.split("unit=", 1)[1].split("&", 1)[0]
        name = next(u["name"] for u in units if u["id"] == unit_id)
        assert _until(browser, "document.getElementById('unit-title') && "
                               "document.getElementById('unit-title').textContent") == name
        assert browser.evaluate("location.href").startswith(explorer)
        assert browser.evaluate("document.getElementById('f-model').value") in models
        events = seen + browser.events

    requests = {e["params"]["request"]["url"].split("#")[0] for e in events
                if e["method"] == "Network.requestWillBeSent"}
    assert requests <= {explorer, report}, f"unexpected requests: {requests}"
    assert _problems(events) == []
