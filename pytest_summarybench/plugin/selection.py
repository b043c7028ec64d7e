"""What a session selected of its run's matrix: complete or partial (``RunSelection``),
and, when nothing was selected, why in one line.

A session is complete when it selected every item of the configured matrix and ran to
its end; docs/reports.md ("Runs") says what that means for the reports. The matrix is what
``SummaryBenchState.matrix`` builds; the selection is what ``-k``, ``-m``,
``--deselect``, ``--lf`` or node ids on the command line left of it, whichever process
collected (the controller, or the xdist workers through the store).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..core.vocabulary import VALIDATE

if TYPE_CHECKING:
    import pytest

    from ..evaluators import MatrixItem
    from ..schemas.report import RunSelection


def _option(config: pytest.Config, name: str) -> object:
    return getattr(config.option, name, None)


def narrowing_options(config: pytest.Config) -> list[str]:
    """The options of this session that leave matrix items out, one phrase each."""
    out = []
    keyword, markers = _option(config, "keyword"), _option(config, "markexpr")
    if keyword:
        out.append(f"-k {keyword!r}")
    if markers == VALIDATE:
        out.append(f"the validity ladder alone (-m {VALIDATE})")
    elif markers:
        out.append(f"-m {markers!r}")
    if _option(config, "deselect"):
        out.append("--deselect")
    if _option(config, "lf"):
        out.append("--lf (the tests that failed last time)")
    if _option(config, "stepwise"):
        out.append("--sw")
    return out


def session_selection(config: pytest.Config, run_id: str, matrix: Iterable[MatrixItem],
                      selected: Iterable[MatrixItem]) -> RunSelection:
    """The session's ``RunSelection`` as collection chose it: complete when ``selected``
    holds every item of ``matrix`` (the session's end may still make it partial:
    ``engine.finish``)."""
    from ..schemas.report import RunSelection

    chosen = {it.test_id for it in selected}
    everything = {it.test_id: it for it in matrix}
    left_out = [it for test_id, it in sorted(everything.items()) if test_id not in chosen]
    reasons = narrowing_options(config) if left_out else []
    if left_out and not reasons:
        reasons = ["node ids on the command line, or another plugin, left items out"]
    by_model: Counter[str] = Counter()
    for it in left_out:
        by_model.update(it.models)
    by_family = Counter(it.family for it in left_out)
    return RunSelection(
        id=run_id, complete=not reasons, matrix_items=len(everything),
        selected_items=len(chosen & set(everything)), deselected_items=len(left_out),
        deselected_by_family=dict(sorted(by_family.items())),
        deselected_by_model=dict(sorted(by_model.items())),
        keyword=str(_option(config, "keyword") or "") or None,
        markers=str(_option(config, "markexpr") or "") or None, reasons=reasons)


def nothing_selected(config: pytest.Config, deselected: Iterable[MatrixItem],
                     skipped_families: Mapping[str, str]) -> str:
    """Why a session that collected benchmark items selected none of them, in one line:
    the family ``-m`` asked for cannot run (and why), or which expression matched
    nothing."""
    items = list(deselected)
    markers = str(_option(config, "markexpr") or "")
    keyword = str(_option(config, "keyword") or "")
    words = markers.replace("(", " ").replace(")", " ").split()
    present = sorted({it.family for it in items})
    for family in dict.fromkeys(words):
        if family not in present and family in skipped_families:
            return (f"summarybench: no {family} item is runnable, so -m {markers!r} selected "
                    f"nothing: {skipped_families[family]}")
    if markers and not keyword:
        return (f"summarybench: -m {markers!r} matched none of the {len(items)} benchmark "
                f"items; their markers are the families {', '.join(present)}")
    example = items[0].test_id if items else ""
    expr = " and ".join(e for e in (f"-k {keyword!r}" if keyword else "",
                                    f"-m {markers!r}" if markers else "") if e)
    return (f"summarybench: {expr or 'the selection'} matched none of the {len(items)} "
            f"benchmark items (ids look like {example!r}: unit, model, evaluator)")
