"""``summarybench view`` says where a run's explorer is and opens it when a browser is at
hand (never failing when none is); ``compare --detailed`` gives each unit it lists its
address in the explorer."""

from __future__ import annotations

import sys
import webbrowser
from pathlib import Path

import pytest

from pytest_summarybench.cli import main
from pytest_summarybench.report import save_session_run, write_session_reports
from pytest_summarybench.report.explorer import render_explorer
from pytest_summarybench.report.json_report import report_json
from pytest_summarybench.schemas import BenchmarkReport
from pytest_summarybench.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from synthetic_explorer import make_explorer_inputs, make_explorer_report  # noqa: E402


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BenchmarkReport]:
    """An output directory with a store holding one run, its reports and explorer."""
    out = tmp_path_factory.mktemp("project") / "summarybench-results"
    inputs = make_explorer_inputs(12, hostile=False)
    report = make_explorer_report(inputs)
    out.mkdir()
    store = Store(out / "store.sqlite")
    try:
        save_session_run(store, report, report_json(report))
    finally:
        store.close()
    write_session_reports(report, out, ["json", "html"],
                          explorer=render_explorer(report, inputs))
    return out, report


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no summarybench.yaml here
    for var in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)


def _view(out: Path, *args: str) -> int:
    return main(["view", "--store", str(out / "store.sqlite"), *args])


def test_view_prints_where_the_explorer_is_without_a_browser(
        saved: tuple[Path, BenchmarkReport], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    out, report = saved
    assert report.metadata.run is not None
    page = out / "runs" / report.metadata.run.id / "explorer.html"
    monkeypatch.setattr(webbrowser, "open", pytest.fail)  # never tried without a display
    assert _view(out) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"explorer of run {report.metadata.run.id}: {page}"
    assert lines[1].strip() == page.resolve().as_uri()
    assert "no browser at hand" in lines[2]
    assert _view(out, "--no-open", "--run", report.metadata.run.id[:6]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_view_opens_the_page_and_survives_a_browser_that_fails(
        saved: tuple[Path, BenchmarkReport], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    out, report = saved
    assert report.metadata.run is not None
    opened: list[str] = []
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(webbrowser, "open", lambda uri: opened.append(uri) or True)
    assert _view(out) == 0
    assert opened == [(out / "runs" / report.metadata.run.id / "explorer.html")
                      .resolve().as_uri()]
    assert len(capsys.readouterr().out.splitlines()) == 2

    def broken(uri: str) -> bool:
        raise webbrowser.Error("could not locate runnable browser")

    monkeypatch.setattr(webbrowser, "open", broken)
    assert _view(out) == 0
    assert "could not locate runnable browser" in capsys.readouterr().out
    monkeypatch.setattr(webbrowser, "open", lambda uri: False)
    assert _view(out) == 0
    assert "no browser could be started" in capsys.readouterr().out


def test_view_names_what_is_missing(saved: tuple[Path, BenchmarkReport],
                                    capsys: pytest.CaptureFixture[str],
                                    tmp_path: Path) -> None:
    out, report = saved
    assert _view(out, "--run", "nosuchrun") == 2
    assert "no run 'nosuchrun'" in capsys.readouterr().err
    # A run whose explorer is gone (an older version wrote it, or the folder was cleaned).
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "store.sqlite").write_bytes((out / "store.sqlite").read_bytes())
    assert _view(bare) == 1
    err = capsys.readouterr().err
    assert "has no explorer at" in err and "explorer.html" in err


def test_compare_detailed_links_each_unit_to_the_explorer(
        saved: tuple[Path, BenchmarkReport], capsys: pytest.CaptureFixture[str]) -> None:
    out, report = saved
    assert report.metadata.run is not None
    c = report.comparisons[0]
    assert main(["compare", c.model_a, c.model_b, "--detailed",
                 "--store", str(out / "store.sqlite")]) == 0
    lines = capsys.readouterr().out.splitlines()
    page = (out / "runs" / report.metadata.run.id / "explorer.html").resolve().as_uri()
    listed = [line for line in lines if line.startswith("  ") and "#unit=" in line]
    assert listed, lines
    for line in listed:
        label, _, rest = line.strip().partition(": ")
        diff, link = rest.split("  ")
        assert link == (f"{page}#unit={label}&a={c.model_a.replace('/', '%2F')}"
                        f"&b={c.model_b.replace('/', '%2F')}")
        float(diff)
    assert lines[-1].endswith(f"{page}#sort=disagree&a={c.model_a.replace('/', '%2F')}"
                              f"&b={c.model_b.replace('/', '%2F')}")
