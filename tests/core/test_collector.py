"""The cyclic collector around work that makes no garbage (``core.collector``)."""

from __future__ import annotations

import gc
import threading
import weakref

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


def test_long_lived_freezes_what_lives_and_collects_what_does_not(collector_state) -> None:
    gc.collect()
    gc.unfreeze()
    with long_lived():
        kept = _Node()
        kept.other = _Node()
        kept.other.other = kept
        garbage = _Node()
        garbage.other = _Node()
        garbage.other.other = garbage
        dropped = weakref.ref(garbage)
        del garbage
        assert not gc.isenabled()
    assert dropped() is None, "the block's cyclic garbage was frozen instead of collected"
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0
    assert all(obj is not kept for obj in gc.get_objects())  # frozen: no longer walked
