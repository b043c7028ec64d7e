"""The HTML report in a real headless Chromium: the ranking and charts render, nothing is
fetched from the network, nothing logs an error, and HTML payloads in a summary show as
text. Skipped when no Chromium is installed (``apt-get install chromium``)."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

import pytest
from cdp import Browser, find_browser
from synthetic_report import make_report

from pytest_summarybench.report.render import write_reports

BAR_RGB = (0x4F, 0x7F, 0xD6)  # the score bars' fill in report.html.jinja2


def png_pixels(data: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """Width, height and RGB pixels of an 8-bit, non-interlaced RGB(A) PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and color in (2, 6)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    pixels: list[tuple[int, int, int]] = []
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, row = line[0], bytearray(line[1:])
        for i in range(stride):
            left = row[i - channels] if i >= channels else 0
            up = previous[i]
            upper_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                row[i] = (row[i] + left) & 0xFF
            elif kind == 2:
                row[i] = (row[i] + up) & 0xFF
            elif kind == 3:
                row[i] = (row[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - upper_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - upper_left)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else upper_left
                row[i] = (row[i] + pred) & 0xFF
        pixels += [tuple(row[x:x + 3]) for x in range(0, stride, channels)]  # type: ignore[misc]
        previous = row
    return width, height, pixels


@pytest.fixture(scope="module")
def browser_exe() -> str:
    exe = find_browser()
    if exe is None:
        pytest.skip("no Chromium installed (as root: apt-get install -y chromium chromium-driver)")
    return exe


def test_report_renders_offline_without_errors(browser_exe: str, tmp_path: Path) -> None:
    report = make_report()
    # A real summary is a paragraph: the one issue 33 saw squeezed the Issue column.
    example = next(e for fa in report.failures.by_model.values() for e in fa.examples)
    example.summary = " ".join(["Sends a request through the transport and returns the "
                                "response, following redirects when asked."] * 6)
    page = write_reports(report, tmp_path, ["html"])["html"]
    url = page.resolve().as_uri()
    with Browser(browser_exe, tmp_path / "profile") as browser:
        browser.send("Page.navigate", {"url": url}, page=True)
        browser.wait_for("Page.loadEventFired")
        title = browser.evaluate("document.title")
        ranking = browser.evaluate(
            "Array.from(document.querySelectorAll('#rankings-table tbody tr'))"
            ".map(r => r.cells[1].textContent)")
        bars = browser.evaluate(
            "document.querySelectorAll('#chart-scores rect').length")
        visible = browser.evaluate(
            "['chart-scores', 'chart-cost', 'chart-languages'].map(id => "
            "document.querySelector('#' + id + ' svg').getBoundingClientRect().width)")
        issue = browser.evaluate(
            "(() => { const t = document.querySelector('#failures-table');"
            " const c = t.querySelector('tbody tr td:last-child');"
            " return [c.getBoundingClientRect().width, t.getBoundingClientRect().width]; })()")
        xss = browser.evaluate("window.__xss === undefined")
        shown = browser.evaluate("document.body.innerText")
        # Sorting: clicking "Model" twice orders the rows by model id, descending.
        order = browser.evaluate(
            "(() => { const th = document.querySelectorAll('#rankings-table th')[1];"
            " th.click(); th.click(); return Array.from(document.querySelectorAll("
            "'#rankings-table tbody tr')).map(r => r.cells[1].textContent); })()")
        shot = base64.b64decode(browser.send(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
            page=True)["data"])
        box = browser.evaluate(
            "(() => { const r = document.querySelector('#chart-scores')"
            ".getBoundingClientRect(); return [r.x, r.y + window.scrollY, r.width, r.height];"
            " })()")
        chart = base64.b64decode(browser.send(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True,
             "clip": dict(zip(("x", "y", "width", "height"), box, strict=True), scale=1)},
            page=True)["data"])
        events = list(browser.events)

    # The whole page is kept for a human look; the score chart's pixels are checked.
    (tmp_path / "report.png").write_bytes(shot)
    print(f"screenshot: {tmp_path / 'report.png'}")
    assert title.startswith("Synthetic <Bench>")
    assert ranking == ["openai/alpha", "anthropic/beta", "local/gamma"]
    assert bars == 3 and all(w > 100 for w in visible)
    # Issue 33: the failure table squeezed its Issue column to about five characters.
    issue_width, table_width = issue
    assert issue_width >= 0.2 * table_width and issue_width >= 160, issue
    assert order == ["openai/alpha", "local/gamma", "anthropic/beta"]
    # The payloads are shown as text and did not run.
    assert xss is True
    assert '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">' in shown

    requests = [e["params"]["request"]["url"] for e in events
                if e["method"] == "Network.requestWillBeSent"]
    assert requests == [url], f"unexpected requests: {requests}"
    errors = [e for e in events
              if e["method"] == "Runtime.exceptionThrown"
              or (e["method"] == "Runtime.consoleAPICalled"
                  and e["params"]["type"] in ("error", "warning", "assert"))
              or (e["method"] == "Log.entryAdded"
                  and e["params"]["entry"]["level"] in ("error", "warning"))]
    assert errors == []

    assert shot[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, pixels = png_pixels(chart)
    assert width >= 400 and height >= 80
    blue = sum(1 for p in pixels if all(abs(a - b) <= 8 for a, b in zip(p, BAR_RGB,
                                                                        strict=True)))
    assert blue > 1000, "the score bars are not visible in the screenshot"
