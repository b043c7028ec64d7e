"""Statistics over per-unit scores: significance tests, intervals, correlations, and
(``ir``) the ranking metrics of retrieval and contrastive matching.

Public: ``mean_interval``, the seeded percentile-bootstrap interval of a mean that the
report's intervals use (a hosted benchmark uses it for its own; docs/harness.md). It is
resolved on first use, so that importing one of the submodules does not load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .significance import mean_interval

__all__ = ["mean_interval"]


def __getattr__(name: str) -> Any:
    if name == "mean_interval":
        from .significance import mean_interval

        return mean_interval
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
