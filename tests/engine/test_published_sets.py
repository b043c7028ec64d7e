"""Issue 32: a contrastive-LLM item is asked as soon as its own unit's distractor set is
stored, while the warm-up still searches the sets of other groups (``engine/warmup.py``:
``Published``; ``plan.CallRun``; ``contrastive/sets.py``), not once every set exists.

The real warm-up, call engine and contrastive-LLM evaluator run against the fake server,
no pytest session. The order is asserted with events (the second group's search waits
until a contrastive-LLM question has arrived), never with durations."""

from __future__ import annotations

import threading
import zlib
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.engine.prepare import prepare_run
from pytest_summarybench.engine.warmup import WarmUp
from pytest_summarybench.evaluators.contrastive import sets
from pytest_summarybench.evaluators.contrastive.llm import ContrastiveLLM
from tests.engine.toy import CODE, served
from tests.fakes.openai_server import FakeOpenAIServer

#: Bound on a wait for an event the code under test must cause (reached only when it is
#: wrong, never on a loaded machine's normal path).
EVENT_WAIT_S = 60.0

#: Two groups of the same language: the three functions of ``CODE``, and three methods.
METHODS = '''

class Ledger:
    def post(self, amount):
        """Record a payment."""
        self.entries.append(amount)

    def balance(self):
        """The sum of every payment."""
        return sum(self.entries)

    def clear(self):
        """Forget every payment."""
        self.entries = []
'''


@pytest.fixture
def codebase(tmp_path: Path) -> Path:
    root = tmp_path / "code"
    root.mkdir()
    (root / "billing.py").write_text(CODE + METHODS)
    return root


def _is_pick(body: dict[str, Any]) -> bool:
    return "### Option 1" in str(body["messages"][-1]["content"])


def test_an_item_of_a_stored_set_is_asked_while_another_group_is_searched(
        make_run, monkeypatch: pytest.MonkeyPatch) -> None:
    picked = threading.Event()
    picks: list[int] = []

    def respond(body: dict[str, Any]) -> str:
        if _is_pick(body):
            picks.append(1)
            picked.set()
            return '{"selected": 1, "confidence": "high", "reasoning": "the first"}'
        # a summary of its own per unit, so that no two questions are the same
        return f"Handles invoices and payments ({zlib.crc32(str(body).encode())})."

    searched: list[set[str]] = []
    held: list[bool] = []
    real = sets.select_sampled

    def select(ctx: Any, embedder: Any, targets: list[Any], *args: Any) -> Any:
        searched.append({t.id for t in targets})
        if len(searched) == 2:  # the second group waits for a question of the first
            held.append(picked.wait(EVENT_WAIT_S))
        return real(ctx, embedder, targets, *args)

    monkeypatch.setattr(sets, "select_sampled", select)
    with FakeOpenAIServer(respond=respond) as server:
        ctx = make_run(test=[served(server, "alpha")], judges=[served(server, "gamma")],
                       **{"extraction.types": ["function", "method"],
                          "evaluation.contrastive.embeddingModel": "builtin/hashing",
                          "evaluation.contrastive.methods": ["llm"]})
        llm = ContrastiveLLM()
        items = llm.items(ctx)
        assert {u.type for u in ctx.units} == {"function", "method"}
        warm = WarmUp()
        warm.start(ctx, [llm])
        prepared = prepare_run(ctx, {llm.name: llm}, items, warm_up=warm,
                               say=lambda *a, **k: None)
    # Two groups searched one after the other, and while the second was searched the
    # first group's question had arrived: it did not wait for every set.
    assert len(searched) == 2 and not searched[0] & searched[1], searched
    assert held == [True]
    assert len(picks) == len(items) == 6
    assert prepared.ctx is not None
    records = [r for item in items for r in llm.evaluate(item, prepared.ctx)]
    assert [r.metrics["correct"] in (0.0, 1.0) for r in records] == [True] * 6
