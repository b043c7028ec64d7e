"""Statistics over per-unit scores: significance tests, intervals, correlations, and
(``ir``) the ranking metrics of retrieval and contrastive matching.

Public: ``mean_interval``, the seeded percentile-bootstrap interval of a mean that the
report's intervals use, and ``sums_interval``, the same for a statistic of column sums (a
hosted benchmark uses them for its own; docs/harness.md). They are resolved on first
use, so that importing one of the submodules does not load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .significance import mean_interval, sums_interval

__all__ = ["mean_interval", "sums_interval"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import significance

        return getattr(significance, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
