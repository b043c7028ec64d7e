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


# -- the frictions of a usability pass on a real run, each as a reader meets it ----------

CELLS = ("Array.from(document.querySelectorAll('#spacer a.row')).map(r => "
         "[r.getAttribute('data-unit'), Array.from(r.children).slice(4, 9)"
         ".map(c => [c.className, c.title, c.textContent])])")
TITLE = ("document.getElementById('unit-title') && "
         "document.getElementById('unit-title').textContent")


@pytest.fixture(scope="module")
def reader(browser_exe: str, site: tuple[Path, dict[str, Any]],
           tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One browser for the friction tests; each starts from a fresh load (``_load``) and
    ends with no script error logged."""
    with Browser(browser_exe, tmp_path_factory.mktemp("profile"), height=1200) as browser:
        yield browser


def _load(browser: Browser, site: tuple[Path, dict[str, Any]], fragment: str = "") -> None:
    browser.events.clear()
    url = (site[0] / "explorer.html").resolve().as_uri()
    browser.send("Page.navigate", {"url": "about:blank"}, page=True)
    browser.wait_for("Page.loadEventFired")
    browser.send("Page.navigate", {"url": url + fragment}, page=True)
    browser.wait_for("Page.loadEventFired")
    assert _until(browser, f"location.href === {json.dumps(url + fragment)} && "
                           "document.body && document.body.getAttribute('data-ready')") == "1"
    # Every row drawn: 30 units fit a tall list.
    browser.evaluate("document.getElementById('viewport').style.height = '2000px';"
                     "document.getElementById('viewport').dispatchEvent(new Event('scroll'))")
    assert _until(browser, f"document.querySelectorAll('#spacer a.row').length === "
                           f"{len(site[1]['units'])}")


def _open(browser: Browser, unit: dict[str, Any]) -> None:
    browser.evaluate(f"location.hash = {json.dumps('#unit=' + unit['id'])}")
    assert _until(browser, f"{TITLE} === {json.dumps(unit['name'])}")


@pytest.fixture()
def clean(reader: Browser) -> Any:
    yield reader
    assert _problems(reader.events) == []


def test_model_columns_are_told_apart(clean: Browser, site: tuple[Path, dict[str, Any]],
                                     tmp_path: Path) -> None:
    _load(clean, site)
    models = site[1]["models"]
    heads = clean.evaluate("Array.from(document.querySelectorAll('#list-head span'))"
                           ".slice(4).map(s => [s.textContent, s.title])")
    assert [t for t, _ in heads] == [m.split("/", 1)[1] for m in models]
    assert [title.split(" (")[0] for _, title in heads] == models
    # Names as a real run has them, in an 800 px window with the difference column:
    # every label whole, and the page does not scroll sideways.
    names = ("openai/good-coder", "builtin/docstring", "openai/lazy-coder")
    inputs = make_explorer_inputs(6, 3, names=names)
    report = make_explorer_report(inputs)
    write_reports(report, tmp_path, ["html"], explorer=render_explorer(report, inputs))
    _load(clean, (tmp_path, explorer_data(report, inputs)), "#sort=disagree")
    clean.send("Emulation.setDeviceMetricsOverride", {
        "width": 800, "height": 900, "deviceScaleFactor": 1, "mobile": False}, page=True)
    try:
        heads = clean.evaluate("Array.from(document.querySelectorAll('#list-head span'))"
                               ".slice(4).map(s => [s.textContent,"
                               " s.scrollWidth <= s.clientWidth])")
        assert heads == [["good-coder", True], ["docstring", True], ["lazy-coder", True],
                         ["\u0394 A\u2212B", True]]
        assert clean.evaluate("document.documentElement.scrollWidth <= innerWidth")
    finally:
        clean.send("Emulation.clearDeviceMetricsOverride", {}, page=True)


def test_an_evaluator_colours_and_explains_its_own_score(
        clean: Browser, site: tuple[Path, dict[str, Any]]) -> None:
    _load(clean, site)
    data = site[1]
    by_id = {u["id"]: u for u in data["units"]}
    models, low, ev = data["models"], data["lowScore"], "contrastive/embedding"
    _choose(clean, "f-ev", ev)
    differ = 0
    for unit_id, cells in clean.evaluate(CELLS):
        unit = by_id[unit_id]
        assert len(cells) == len(models) == 5
        for i, (cls, title, text) in enumerate(cells):
            s = unit["scores"][ev][i]
            assert text == f"{s:.3f}"
            assert ("flag" in cls.split()) == (s < low), (unit_id, i, cls, s)
            assert title.startswith(f"{models[i]}: {ev} {s:.3f}") and "overall" not in title
            differ += (s < low) != (unit["overall"][i] < low)
    assert differ, "the overall and the evaluator's score disagree on some cells"


def test_a_completion_task_without_tests_says_so(
        clean: Browser, site: tuple[Path, dict[str, Any]]) -> None:
    _load(clean, site)
    units, models = site[1]["units"], site[1]["models"]
    _choose(clean, "f-ev", "downstream/completion")
    assert "has no per-unit score" in clean.evaluate(
        "document.getElementById('count').textContent")
    _choose(clean, "f-ev", "")
    completed = next(u for u in units
                     if any(t["ev"] == "downstream/completion" for t in u["downstream"]))
    _open(clean, completed)
    outcomes = clean.evaluate(
        "Array.from(document.querySelectorAll('#part-downstream tbody tr')).map(r => "
        "[r.cells[0].textContent, r.cells[4].textContent])")
    done = [o for e, o in outcomes if e == "downstream/completion"]
    assert len(done) == len(models)
    assert all(o.startswith("no tests ran") and "passed" not in o for o in done)
    assert "no score on this unit" in clean.evaluate(
        "document.querySelector('#part-scores').textContent")


def test_the_model_filter_highlights_its_model(
        clean: Browser, site: tuple[Path, dict[str, Any]]) -> None:
    units, models = site[1]["units"], site[1]["models"]
    # As the report's low-score table links: a unit and a model.
    _load(clean, site, f"#unit={units[4]['id']}&model={models[3].replace('/', '%2F')}")
    assert clean.evaluate("Array.from(document.querySelectorAll('#detail .card.sel'))"
                          ".map(c => c.getAttribute('data-model'))") == [models[3]]
    for model in (models[3], models[1]):
        _choose(clean, "f-model", model)
        assert clean.evaluate("Array.from(document.querySelectorAll('#list-head .sel'))"
                              ".map(s => s.getAttribute('data-model'))") == [model]
        for _, cells in clean.evaluate(CELLS):
            assert ["sel" in c[0].split() for c in cells] == [m == model for m in models]
        assert clean.evaluate(TITLE) == units[4]["name"]
        assert clean.evaluate("Array.from(document.querySelectorAll('#detail .card.sel'))"
                              ".map(c => c.getAttribute('data-model'))") == [model]


def test_links_inside_the_page_keep_the_list_as_it_is(
        clean: Browser, site: tuple[Path, dict[str, Any]]) -> None:
    _load(clean, site)
    data = site[1]
    models = data["models"]
    by_id = {u["id"]: u for u in data["units"]}
    _choose(clean, "f-b", models[2])
    _choose(clean, "f-sort", "disagree")
    clean.evaluate("document.getElementById('fooled-panel').open = true")
    follow = ("(() => {{ const a = document.querySelector({}); a.click(); return new "
              "URLSearchParams(a.getAttribute('href').slice(1)).get('unit'); }})()")
    link = clean.evaluate(follow.format(json.dumps("#fooled tbody a[href^='#']")))
    assert _until(clean, TITLE) == by_id[link]["name"]
    state = clean.evaluate("location.hash")
    assert "sort=disagree" in state and f"b={models[2].replace('/', '%2F')}" in state
    assert clean.evaluate("document.getElementById('f-sort').value") == "disagree"
    # A link in a unit's contrastive table, after the sort changed with the unit open.
    _choose(clean, "f-sort", "a-b")
    option = clean.evaluate(follow.format(json.dumps("#detail table.options a[href^='#']")))
    assert _until(clean, f"{TITLE} === {json.dumps(by_id[option]['name'])}")
    assert "sort=a-b" in clean.evaluate("location.hash")
    # j / k: the next and the previous unit of the list as sorted.
    order = clean.evaluate("Array.from(document.querySelectorAll('#spacer a.row'))"
                           ".sort((x, y) => parseFloat(x.style.top) - parseFloat(y.style.top))"
                           ".map(r => r.getAttribute('data-unit'))")
    for key, step in (("j", 1), ("k", -1)):
        before = order.index(clean.evaluate("new URLSearchParams(location.hash.slice(1))"
                                            ".get('unit')"))
        clean.evaluate(f"document.body.dispatchEvent(new KeyboardEvent('keydown',"
                       f" {{key: '{key}', bubbles: true}}))")
        expected = order[(before + step) % len(order)]
        assert _until(clean, f"{TITLE} === {json.dumps(by_id[expected]['name'])}"), key
        assert "sort=a-b" in clean.evaluate("location.hash")


def test_the_most_picked_options_are_at_hand_and_say_who_was_fooled(
        clean: Browser, site: tuple[Path, dict[str, Any]]) -> None:
    data = site[1]
    models, fooled = data["models"], data["fooled"]
    unit = next(u for u in data["units"] if u["contrastive"])
    _load(clean, site, f"#unit={unit['id']}")
    # Linked from the unit's contrastive section and from the toolbar; above the unit.
    assert clean.evaluate("!!document.querySelector('#detail a[data-show=fooled-panel]')")
    clean.evaluate("document.querySelector('#controls ~ p a[data-show]').click()")
    assert clean.evaluate("document.getElementById('fooled-panel').open")
    assert clean.evaluate(
        "!!(document.getElementById('fooled-panel').compareDocumentPosition("
        "document.getElementById('detail')) & Node.DOCUMENT_POSITION_FOLLOWING)")
    assert "picked instead of their target" in clean.evaluate(
        "document.getElementById('fooled-panel').textContent")
    rows = clean.evaluate("Array.from(document.querySelectorAll('#fooled tbody tr'))"
                          ".map(r => Array.from(r.cells).map(c => c.textContent))")
    assert len(rows) == len(fooled) and any(f["tied"] for f in fooled)
    for f, row in zip(fooled, rows, strict=True):
        assert row[2].startswith(("= " if f["tied"] else "") + str(f["count"]) + " on ")
        for m, n in enumerate(f["byModel"]):
            assert (f"{models[m].split('/', 1)[1]} {n}" in row[3]) == (n > 0)
    # An option that is not a sampled unit shows its code in place.
    outside = [f["id"] for f in fooled if f["id"] in data["refs"]]
    assert outside
    codes = clean.evaluate("Array.from(document.querySelectorAll('#fooled tbody tr')).map(r =>"
                           " r.querySelector('details.ref pre')).map(p => p && p.textContent)")
    assert [c for c in codes if c] == [data["refs"][i]["code"] for i in outside]


def test_search_finds_qualified_names_and_says_when_nothing_matches(
        clean: Browser, site: tuple[Path, dict[str, Any]]) -> None:
    _load(clean, site)
    unit = next(u for u in site[1]["units"] if u["id"] == "u0003")
    module = unit["path"].rsplit(".", 1)[0]
    for query in (f"{module.replace('/', '.')}.{unit['name']}",
                  f"{module.rsplit('/', 1)[1]}.{unit['name']}",
                  f"{unit['path']}:{unit['name']}"):
        _choose(clean, "f-q", query)
        assert [r[0] for r in clean.evaluate(ROWS)] == ["u0003"], query
    _open(clean, unit)
    assert not clean.evaluate("document.getElementById('detail').classList.contains('stale')")
    _choose(clean, "f-q", "no.such.unit")
    assert "nothing matches" in clean.evaluate("document.getElementById('count').textContent")
    assert clean.evaluate("document.getElementById('detail').classList.contains('stale')"
                          " && !document.getElementById('stale-note').hidden")


def test_the_helper_pick_is_numbered_as_the_table_and_its_reasoning_labelled(
        clean: Browser, site: tuple[Path, dict[str, Any]]) -> None:
    data = site[1]
    unit = next(u for u in data["units"] if u["id"] == "u0003")
    _load(clean, site, "#unit=u0003")
    llm = next(c for c in unit["contrastive"] if c["ev"] == "contrastive/llm")
    notes = clean.evaluate("Array.from(document.querySelectorAll('#part-contrastive-llm li'))"
                           ".map(li => li.textContent)")
    assert len(notes) == len(llm["byModel"])
    assert any(one["picked"] and one["order"].index(one["picked"]) + 1 != one["picked"]
               for one in llm["byModel"]), "a model saw its pick under another number"
    for one, note in zip(llm["byModel"], notes, strict=True):
        k = one["picked"]
        assert note.startswith(data["models"][one["m"]] + ": picked " +
                               ("the target" if k == 0 else f"option {k}, "))
        assert "Helper's reasoning: " + one["reasoning"] in note


def test_the_judge_reasoning_is_the_judge_own_text(
        clean: Browser, site: tuple[Path, dict[str, Any]]) -> None:
    biased = next(u for u in site[1]["units"] if u["id"] == "u0005")
    _load(clean, site, "#unit=u0005")
    cells = clean.evaluate(
        "Array.from(document.querySelectorAll('#part-pairwise tbody tr')).map(r => "
        "[r.querySelector('td.order') && r.querySelector('td.order').textContent,"
        " r.querySelector('td.reasoning').textContent])")
    assert {c[1] for c in cells} == {p[5] for p in biased["pairwise"]}
    assert {c[0] for c in cells} == {"changed with the order"}
