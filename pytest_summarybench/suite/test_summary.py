"""One parametrized test scores every code unit x model under test x evaluator."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_summarybench.plugin.state import BoundItem


def test_summary(sb_case: BoundItem) -> None:
    records = sb_case.evaluate()
    assert records, f"{sb_case.item.evaluator} returned no score for {sb_case.item.test_id}"
