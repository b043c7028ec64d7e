"""Issue 20: evaluators' work on the code alone (``Evaluator.warm_up``) starts at
collection, before the first model call, and ``prepare`` runs only after it; deselected,
it is told to stop; and what it caches is what ``prepare`` would have computed."""

from __future__ import annotations

import json
import textwrap
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_summarybench.embeddings import Embedder
from pytest_summarybench.embeddings.hashing import HashingBackend
from pytest_summarybench.engine.warmup import WarmUp
from tests.fakes.project import write_bench_module

pytest_plugins = ["pytester"]
SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "sample_codebase"


class _Recorder:
    def __init__(self, name: str, log: list[str], *, wait: bool = False,
                 fail: bool = False) -> None:
        self.name = name
        self.log = log
        self.wait = wait
        self.fail = fail

    def warm_up(self, ctx: Any, stop: threading.Event, publish: Any) -> None:
        self.log.append(f"{self.name} start")
        if self.wait:
            stop.wait(10)
            self.log.append(f"{self.name} {'stopped' if stop.is_set() else 'timed out'}")
        if self.fail:
            raise RuntimeError("no weights")
        self.log.append(f"{self.name} end")


class _Plain:
    name = "family/plain"  # no warm_up: not started


def test_warm_ups_run_one_after_another_in_one_thread() -> None:
    log: list[str] = []
    warm = WarmUp()
    warm.start(None, [_Recorder("a", log), _Plain(), _Recorder("b", log)])  # type: ignore[list-item]
    warm.join()
    assert log == ["a start", "a end", "b start", "b end"]
    assert warm.names == ["a", "b"]


def test_stops_only_when_no_evaluator_that_warms_up_is_selected() -> None:
    log: list[str] = []
    warm = WarmUp()
    warm.start(None, [_Recorder("a", log, wait=True), _Recorder("b", log)])  # type: ignore[list-item]
    warm.keep_for({"family/plain", "b"})  # b is selected: a must finish its work
    assert not warm.stop.is_set()
    warm.keep_for({"family/plain"})
    warm.join()
    assert log == ["a start", "a stopped", "a end"]  # and b never started


def test_a_failing_warm_up_is_kept_for_prepare_and_the_next_one_runs() -> None:
    log: list[str] = []
    warm = WarmUp()
    warm.start(None, [_Recorder("a", log, fail=True), _Recorder("b", log)])  # type: ignore[list-item]
    warm.join()
    assert isinstance(warm.failed["a"], RuntimeError)
    assert log == ["a start", "b start", "b end"]


class _CountingBackend(HashingBackend):
    """Hashing vectors, in small batches, counting the batches it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    @property
    def batch_size(self) -> int:
        return 2

    def embed_batch(self, texts: list[str]) -> Any:
        self.batches.append(list(texts))
        return super().embed_batch(texts)


def test_fill_makes_the_batches_embed_would_make_and_embed_then_computes_nothing(
        tmp_path: Path) -> None:
    from pytest_summarybench.store import Store

    texts = [f"def f{i}(x):\n    return x * {i}\n" + "# pad\n" * i for i in range(7)]
    cold = _CountingBackend()
    expected = Embedder(cold).embed(texts)
    warm_backend = _CountingBackend()
    store = Store(tmp_path / "store.sqlite")
    try:
        assert Embedder(warm_backend, store).fill(texts, "code", threading.Event())
        assert warm_backend.batches == cold.batches
        again = Embedder(warm_backend, store)
        vectors = again.embed(texts)
        assert again.computed == 0
        np.testing.assert_array_equal(vectors, expected)
    finally:
        store.close()


def test_fill_stops_between_batches() -> None:
    stop = threading.Event()
    backend = _CountingBackend()

    class _StopAfterOne(_CountingBackend):
        def embed_batch(self, texts: list[str]) -> Any:
            stop.set()
            backend.batches.append(list(texts))
            return HashingBackend.embed_batch(self, texts)

    done = Embedder(_StopAfterOne()).fill([f"text {i}" * (i + 1) for i in range(6)],
                                          "code", stop)
    assert done is False
    assert len(backend.batches) == 1


CONFTEST = '''
import json, threading, time
from pathlib import Path
from typing import ClassVar

from pytest_summarybench.evaluators import Component, Evaluator, MatrixItem
from pytest_summarybench.schemas import ScoreRecord

LOG = Path("events.jsonl")


def note(event, **data):
    with LOG.open("a") as f:
        f.write(json.dumps({"event": event, "t": time.monotonic(),
                            "thread": threading.current_thread().name, **data}) + "\\n")


class Warming(Evaluator):
    name: ClassVar[str] = "warmth/check"
    family: ClassVar[str] = "warmth"
    components: ClassVar[tuple[Component, ...]] = (
        Component(metric="ok", weight="ok", label="ok"),)

    def __init__(self):
        self.warmed = False

    def warm_up(self, ctx, stop, publish):
        note("warm start", units=len(ctx.all_units))
        stopped = stop.wait(3)
        self.warmed = not stopped
        note("warm end", stopped=stopped)

    def prepare(self, ctx):
        note("prepare", warmed=self.warmed)

    def evaluate(self, item: MatrixItem, ctx) -> list[ScoreRecord]:
        return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                            evaluator=self.name, metrics={"ok": 1.0})]


def pytest_summarybench_evaluators(config):
    return [Warming()]


def pytest_itemcollected(item):
    time.sleep(0.05)  # a collection that takes a while, as a large matrix's does


def pytest_collection_modifyitems(items):
    note("collection finish")
'''


def _project(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(textwrap.dedent(CONFTEST))
    pytester.path.joinpath("summarybench.yaml").write_text(
        f"codebase:\n  root: {SAMPLE}\n  languages: [python]\n"
        "evaluation:\n  sampleSize: 4\n  retrieval: {enabled: false}\n"
        "  contrastive: {enabled: false}\n  judge: {enabled: false}\n"
        "  downstream: {enabled: false}\nweights: {warmth: 0.1}\n")
    write_bench_module(pytester)


def _events(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    path = pytester.path / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_warm_up_starts_at_collection_and_prepare_waits_for_it(
        pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                           "--sb-output", "out")
    assert result.ret == 0, result.outlines[-20:]
    events = _events(pytester)
    names = [e["event"] for e in events]
    assert names == ["warm start", "collection finish", "warm end", "prepare"], names
    warm = events[0]
    assert warm["thread"] == "summarybench-warm-up" and warm["units"] > 0
    assert events[3]["warmed"] is True


def test_a_deselected_evaluator_s_warm_up_is_stopped(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                           "--sb-output", "out", "-k", "not warmth")
    names = [e["event"] for e in _events(pytester)]
    assert names[:2] == ["warm start", "collection finish"], names
    assert "prepare" not in names
    stopped = [e for e in _events(pytester) if e["event"] == "warm end"]
    assert stopped and stopped[0]["stopped"] is True
    assert result.ret in (0, 5)


def test_listing_tests_starts_no_warm_up(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                           "--sb-output", "out", "--collect-only", "-q")
    assert result.ret == 0
    assert [e["event"] for e in _events(pytester)] == ["collection finish"]


def test_generate_only_starts_no_warm_up_and_generates_no_ladder(
        pytester: pytest.Pytester) -> None:
    """Issue 32: a session that only writes summaries starts nothing it does not need: no
    warm-up (nothing is evaluated), no validity ladder (it is scored, never kept)."""
    _project(pytester)
    result = pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                           "--sb-output", "out", "--sb-generate-only")
    assert result.ret == 0, result.outlines[-20:]
    assert [e["event"] for e in _events(pytester)] == ["collection finish"]
    out = result.stdout.str()
    assert "summarybench generation:" in out
    assert "validate/" not in out  # the ladder's models generated nothing
