"""The cyclic collector around work that makes no garbage (``core.collector``)."""

from __future__ import annotations

import gc
import threading

import pytest

from pytest_summarybench.core.collector import cycle_collection_paused, long_lived


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


@pytest.fixture
def collector_state():
    """Leave the collector as each test found it, with nothing left frozen."""
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()


def test_pauses_overlapping_in_any_order_leave_the_collector_on(collector_state) -> None:
    gc.enable()
    outer = cycle_collection_paused()
    inner = cycle_collection_paused()
    outer.__enter__()
    inner.__enter__()
    assert not gc.isenabled()
    outer.__exit__(None, None, None)  # the first to start ends first: the other's is on
    assert gc.isenabled()
    inner.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_pause_in_another_thread_leaves_the_collector_on(collector_state) -> None:
    gc.enable()
    started, release = threading.Event(), threading.Event()

    def pause() -> None:
        with cycle_collection_paused():
            started.set()
            release.wait(10)

    thread = threading.Thread(target=pause)
    thread.start()
    started.wait(10)
    with cycle_collection_paused():
        release.set()
        thread.join(10)
    assert gc.isenabled()


def test_long_lived_freezes_what_the_block_made(collector_state) -> None:
    gc.collect()
    gc.unfreeze()
    before = _Node()
    with long_lived():
        kept = _Node()
        kept.other = _Node()
        kept.other.other = kept
        assert not gc.isenabled()
    after = _Node()
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0
    tracked = {id(obj) for obj in gc.get_objects()}
    assert id(kept) not in tracked  # frozen: no longer walked by any collection
    assert id(before) not in tracked  # older objects too (gc.freeze takes them all)
    assert id(after) in tracked  # what is made afterwards is collected as before
