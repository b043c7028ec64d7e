"""The explorer's size budget: page size, build time and time to first paint in headless
Chromium, at 100 and 1,000 units x 5 models (one judge, pointwise and pairwise, contrastive
with nine distractors and contrastive/llm on one unit in ten, retrieval with three queries
a unit, a downstream task on one unit in twenty and a completion task without tests on
another), and how fast it answers a reader at that size.

Usage::

    python benchmarks/perf/explorer_size.py [--sizes 100 1000] [--rounds 3] [--keep DIR]

The run is synthetic (``tests/report/synthetic_explorer.py``) with the texts of a real
one: code of ~1,500 characters a unit, summaries of ~250, judges' reasons of ~300. For
each size the script builds the report and the explorer page (CPU seconds of
``render_explorer``), then opens the page ``--rounds`` times in a fresh headless Chromium
(fresh profile, so nothing is cached) and reads, from the page's own clocks:

- first paint and first contentful paint (``performance.getEntriesByType("paint")``);
- ready: the ``explorer-ready`` mark, set when the data is parsed and the list drawn;
- the rows that exist in the page (only those in view are made);
- the JS heap in use once ready (``Performance.getMetrics``);
- filter: a language chosen, list redrawn (milliseconds, in the page);
- sort: disagreement between two models, list redrawn;
- open: a unit opened from the fragment, until the next frame (median of five units).

It prints the median of the rounds for each size, and the ratio of 1,000 to 100.
Skips (exit 0, with the install command) when no Chromium is installed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "report"))

from cdp import Browser, find_browser  # noqa: E402
from synthetic_explorer import make_explorer_inputs, make_explorer_report  # noqa: E402

from pytest_summarybench.report.explorer import render_explorer  # noqa: E402


def _await(browser: Browser, expression: str) -> Any:
    result = browser.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                               "returnByValue": True}, page=True)
    if "exceptionDetails" in result:
        raise RuntimeError(f"{expression!r} raised: {result['exceptionDetails']}")
    return result["result"].get("value")


def _ready(browser: Browser, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while browser.evaluate("document.body && document.body.getAttribute('data-ready')") != "1":
        if time.monotonic() > deadline:
            raise TimeoutError("the explorer did not get ready")
        time.sleep(0.02)


REDRAW = """new Promise(done => {{
  const c = document.getElementById({control!r});
  const t = performance.now();
  c.value = {value!r};
  c.dispatchEvent(new Event("change"));
  requestAnimationFrame(() => done(performance.now() - t));
}})"""

OPEN = """new Promise(done => {{
  const t = performance.now();
  addEventListener("hashchange", () => requestAnimationFrame(() =>
    done([performance.now() - t, document.getElementById("unit-title").textContent])),
    {{once: true}});
  location.hash = "#unit={unit}";
}})"""


def measure(exe: str, page: Path, units: list[str], models: list[str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as profile, \
            Browser(exe, Path(profile), height=1000) as browser:
        browser.send("Performance.enable", page=True)
        started = time.monotonic()
        browser.send("Page.navigate", {"url": page.resolve().as_uri()}, page=True)
        browser.wait_for("Page.loadEventFired", timeout=120)
        _ready(browser)
        wall = time.monotonic() - started
        paints = {p["name"]: p["startTime"] for p in browser.evaluate(
            "performance.getEntriesByType('paint').map(p => ({name: p.name, "
            "startTime: p.startTime}))")}
        ready = browser.evaluate(
            "performance.getEntriesByName('explorer-ready')[0].startTime")
        rows = browser.evaluate("document.querySelectorAll('#spacer a.row').length")
        metrics = {m["name"]: m["value"] for m in
                   browser.send("Performance.getMetrics", page=True)["metrics"]}
        filtered = _await(browser, REDRAW.format(control="f-lang", value="go"))
        _await(browser, REDRAW.format(control="f-lang", value=""))
        browser.evaluate(f"document.getElementById('f-a').value = {models[0]!r}")
        browser.evaluate(f"document.getElementById('f-b').value = {models[1]!r}")
        sorted_ms = _await(browser, REDRAW.format(control="f-sort", value="disagree"))
        opens = []
        for unit in units:
            opened, title = _await(browser, OPEN.format(unit=unit))
            assert title, f"unit {unit} did not open"
            opens.append(opened)
        errors = [e for e in browser.events if e["method"] == "Runtime.exceptionThrown"]
        assert not errors, errors
    return {"first paint ms": paints.get("first-paint", float("nan")),
            "first contentful paint ms": paints.get("first-contentful-paint", float("nan")),
            "ready ms": ready, "load to ready, wall s": wall, "rows in the page": rows,
            "JS heap MB": metrics.get("JSHeapUsedSize", 0) / 1e6,
            "filter ms": filtered, "sort by disagreement ms": sorted_ms,
            "open a unit ms": statistics.median(opens)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None,
                        help="write each page there as explorer-<units>.html")
    args = parser.parse_args()
    exe = find_browser()
    if exe is None:
        print("no Chromium installed: as root, apt-get install -y chromium chromium-driver")
        return 0
    results: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for n in args.sizes:
            inputs = make_explorer_inputs(n, args.models, hostile=False)
            report = make_explorer_report(inputs)
            started = time.process_time()
            text = render_explorer(report, inputs)
            build = time.process_time() - started
            page = folder / f"explorer-{n}.html"
            page.write_text(text, encoding="utf-8")
            opened = [f"u{i:04d}" for i in range(7, n, max(1, n // 5))][:5]
            rounds = [measure(exe, page, opened, [r.model_id for r in report.rankings])
                      for _ in range(args.rounds)]
            results[n] = {"page MB": page.stat().st_size / 1e6, "build CPU s": build,
                          **{k: statistics.median(r[k] for r in rounds) for k in rounds[0]}}
            print(f"{n} units x {args.models} models: {len(inputs.records):,} records, "
                  f"{page.stat().st_size:,} bytes", flush=True)
    keys = list(next(iter(results.values())))
    width = max(len(k) for k in keys)
    print(f"\n{'(median of ' + str(args.rounds) + ' rounds)':<{width}}  "
          + "  ".join(f"{n:>10,}" for n in results)
          + (f"  {'ratio':>7}" if len(results) == 2 else ""))
    for key in keys:
        values = [results[n][key] for n in results]
        ratio = (f"  {values[1] / values[0]:>7.2f}" if len(values) == 2 and values[0]
                 else "")
        print(f"{key:<{width}}  " + "  ".join(f"{v:>10.2f}" for v in values) + ratio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
