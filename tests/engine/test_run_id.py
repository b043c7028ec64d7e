"""The configuration id (the run id) depends on the configuration and the code, never on
what the run itself writes: an output folder or a store inside the codebase used to give
every run a new id, so nothing cached by run was reused."""

from __future__ import annotations

from pathlib import Path

from pytest_summarybench.engine.pipeline import run_id_for
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.settings import load_settings


def _settings(code: Path, **overrides: str):  # type: ignore[no-untyped-def]
    return load_settings(None, {"codebase.root": str(code), **overrides},
                         families=BUILTIN_FAMILIES, base_dir=code)


def test_what_the_run_writes_inside_the_codebase_leaves_the_id_alone(tmp_path: Path) -> None:
    code = tmp_path / "code"
    (code / "pkg").mkdir(parents=True)
    (code / "pkg" / "mod.py").write_text("def f(a):\n    b = a\n    return b\n")
    settings = _settings(code, **{"output.directory": "summarybench-results"})
    before = run_id_for(settings)
    out = code / "summarybench-results"
    (out / "runs" / "abc").mkdir(parents=True)
    for name in ("results.json", "report.md", "results.previous.json", "store.sqlite",
                 "store.sqlite-wal", "store.sqlite.lock", "runs/abc/report.html"):
        (out / name).write_text("written by a run")
    assert run_id_for(settings) == before
    # A store configured elsewhere in the codebase, with its journal and lock beside it.
    elsewhere = _settings(code, **{"output.directory": "summarybench-results",
                                   "output.store": ".cache/bench.sqlite"})
    first = run_id_for(elsewhere)
    (code / ".cache").mkdir()
    for name in ("bench.sqlite", "bench.sqlite-shm", "bench.sqlite.lock"):
        (code / ".cache" / name).write_text("store")
    assert run_id_for(elsewhere) == first
    # The code itself still counts, next to them and anywhere else.
    (code / ".cache" / "notes.py").write_text("x = 1\n")
    assert run_id_for(elsewhere) != first
    (code / "pkg" / "mod.py").write_text("def f(a):\n    return a\n")
    assert run_id_for(settings) != before
