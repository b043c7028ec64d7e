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
    collector's way: the block runs with the collector paused, and ``gc.freeze`` then
    moves every object it made to the permanent generation, which collections skip.
    Objects made later are collected as before.

    The block's own cyclic garbage is frozen with the rest, not collected: finding it
    means walking everything the block made once more. For litellm's import that walk
    took 0.23 s of CPU on the path to the first request, to free 1,830 objects of some
    309,000 (no measurable resident memory): not worth it (docs/performance.md,
    "Start-up and teardown")."""
    try:
        with cycle_collection_paused():
            yield
    finally:
        gc.freeze()
