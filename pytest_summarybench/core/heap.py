"""Giving freed memory back to the system after a phase that churned through large texts.

glibc's allocator raises its mmap threshold when a large block is freed, so blocks of a
few hundred kilobytes (long units' source, read, parsed and stored a batch at a time) are
then served from the heap, and the heap keeps their pages after they are freed: extracting
300 files of 250 KB left the process 290 MB larger with nothing alive in them
(docs/performance.md#long-units). ``malloc_trim`` returns those pages. Elsewhere (musl,
macOS, Windows) there is nothing to call, and nothing is done.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable


def release_freed_memory() -> None:
    """Return the heap's free pages to the system (glibc only; otherwise nothing)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        # The process's own symbols: glibc's malloc_trim when glibc is the allocator.
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    return trim
