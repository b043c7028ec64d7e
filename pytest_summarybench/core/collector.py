"""The cyclic garbage collector around work that makes many objects and no garbage.

Reference counting frees almost everything the package makes; the cyclic collector
only finds objects that refer to each other in a loop. Each full collection walks every
object of the process (all of pytest's, in the plugin), so two kinds of work pay for it
without gaining anything: a burst of objects that form no cycles (extraction's units:
3% of a one-process extraction, 10% with workers, whose results arrive as one burst of
unpickled objects), and objects that live as long as the process (an import's modules,
classes and schemas), which every later full collection walks again.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block (reference counting goes on).

    The collector is switched back on only if it was on, so nested or concurrent
    pauses (extraction in the main thread, an import in another) leave it on at the end
    whatever their order."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def long_lived() -> Iterator[None]:
    """Make objects that stay alive as long as the process, then keep them out of the
    collector's way: the block runs with the collector paused, its garbage is collected
    once at the end, and ``gc.freeze`` moves every object still alive to the permanent
    generation, which collections skip. Objects made later are collected as before."""
    try:
        with cycle_collection_paused():
            yield
    finally:
        gc.collect()
        gc.freeze()
