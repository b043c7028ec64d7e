"""The SQLite store: round trips, replacement semantics, and concurrent writers."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from pytest_summarybench.schemas import (
    BenchmarkConfig,
    BenchmarkRun,
    CodebaseInfo,
    CodeUnit,
    GeneratedSummary,
    GenerationMetadata,
    ScoreRecord,
    UnitMetadata,
)
from pytest_summarybench.store import Store


def _unit(i: int) -> CodeUnit:
    return CodeUnit(id=f"u{i}", path=f"f{i % 3}.py", name=f"fn{i}", type="function",
                    language="python", content=f"def fn{i}(): return {i}",
                    metadata=UnitMetadata(start_line=1, end_line=1))


def test_units_runs_and_summaries_round_trip(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    units = [_unit(i) for i in range(5)]
    store.save_units("r1", units, {"u1", "u3"})
    assert store.load_units("r1") == units
    assert [u.id for u in store.load_units("r1", sampled_only=True)] == ["u1", "u3"]
    run = BenchmarkRun(id="r1", name="n", config=BenchmarkConfig(), started_at="t",
                       codebase_info=CodebaseInfo(name="c"), models_under_test=[])
    store.save_run(run)
    assert store.load_run("r1") == run and store.latest_run_id() == "r1"
    s = GeneratedSummary(id="s1", code_unit_id="u1", model_id="m", summary="x",
                         generation_metadata=GenerationMetadata(
                             model_name="m", prompt_version="v", temperature=0.3,
                             max_tokens=500, generated_at="t", latency_ms=1.0,
                             input_tokens=1, output_tokens=1, cost=None))
    store.save_summary(s)
    store.link_summary("r1", "u1", "m", "s1")
    store.link_summary("r1", "u3", "m", None, error="provider said 500")
    assert store.run_summaries("r1") == {("u1", "m"): s, ("u3", "m"): "provider said 500"}
    # Read again only once the database changed: by this store, or by another connection
    # (another process) that linked a summary in between.
    store.link_summary("r1", "u3", "m", "s1")
    assert store.run_summaries("r1")[("u3", "m")] == s
    other = Store(tmp_path / "s.sqlite")
    other.link_summary("r1", "u4", "m", None, error="timeout")
    assert store.run_summaries("r1")[("u4", "m")] == "timeout"
    assert store.run_summaries("r2") == {}
    first = store.run_summaries("r1")
    first.clear()  # each call has its own mapping
    assert len(store.run_summaries("r1")) == 3
    other.close()


def test_records_of_a_test_are_replaced_not_added(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    rec = ScoreRecord(unit_id="u", model_id="m", evaluator="e", metrics={"x": 1.0})
    store.save_records("r", "t::a", [rec, rec])
    store.save_records("r", "t::a", [rec])
    store.save_records("r", "t::b", [rec])
    assert len(store.load_records("r")) == 2


def _writer(path: str, worker: int, n: int) -> None:
    store = Store(path)
    for i in range(n):
        rec = ScoreRecord(unit_id=f"u{i}", model_id=f"w{worker}", evaluator="e",
                          metrics={"x": float(i)})
        store.save_records("run", f"t::w{worker}-{i}", [rec])
    store.close()


def test_concurrent_writers_lose_no_rows(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sqlite")
    Store(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 150)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = Store(path)
    assert store.execute("PRAGMA integrity_check") == [("ok",)]
    assert len(store.load_records("run")) == 4 * 150
