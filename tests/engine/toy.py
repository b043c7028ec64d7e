"""What the engine's unit tests run: a small codebase, a toy evaluator family whose calls
and artefacts the tests can watch, and model entries for the fake OpenAI-compatible server.

The toy family (``toy/echo``) asks the judge one question per item ("is this summary
about the unit?"); its answers are scripted by the test. It declares what the engine
reads (``requests``, ``prepare_requests``, ``prepare``, ``warm_up``) and logs when the
engine calls each, so that a test asserts the order of events, never a duration.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pytest_summarybench.context import RunContext
from pytest_summarybench.evaluators import Component, Evaluator, MatrixItem
from pytest_summarybench.evaluators.base import gather
from pytest_summarybench.llm.requests import ModelRequest
from pytest_summarybench.schemas import ScoreRecord
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.project import TAX_MODULE

#: Three small functions: enough for a matrix of a few items, extracted in milliseconds
#: (the two of ``TAX_MODULE``, and a third, written last, that some tests wait for).
CODE = TAX_MODULE + '''

def late_fee(days, daily=0.5, cap=20.0):
    """The fee for an invoice paid ``days`` late, capped."""
    fee = days * daily
    return min(fee, cap)
'''

#: The phase the toy family's item calls are counted under.
PHASE = "toy/echo"
#: The phase of its run-wide calls.
PREPARE_PHASE = "toy/setup"


def phase_of(body: dict[str, Any]) -> str:
    """Which phase sent a request to the fake server (by the first words of its prompt)."""
    last = str(body["messages"][-1]["content"])
    if last.startswith("TOY ITEM"):
        return PHASE
    if last.startswith("TOY SETUP"):
        return PREPARE_PHASE
    return "generation"


@dataclass
class Log:
    """Events in the order they happened, from any thread."""

    events: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, event: str) -> None:
        with self.lock:
            self.events.append(event)

    def index(self, event: str) -> int:
        return self.events.index(event)


class Toy(Evaluator):
    """``toy/echo``: one judge call per item (``rounds`` of them: a re-ask after each
    answer but the last), run-wide ``setup`` calls, and a logged ``prepare``."""

    name: ClassVar[str] = "toy/echo"
    family: ClassVar[str] = "toy"
    components: ClassVar[tuple[Component, ...]] = (
        Component(metric="match", weight="match", label="toy match"),)
    prepare_reads_summaries: ClassVar[bool] = True

    def __init__(self, log: Log, *, rounds: int = 1, setup_calls: int = 0,
                 fail_prepare: bool = False, warm: bool = False) -> None:
        self.log = log
        self.rounds = rounds
        self.setup_calls = setup_calls
        self.fail_prepare = fail_prepare
        self.warm = warm

    def items(self, ctx: RunContext) -> list[MatrixItem]:
        return [MatrixItem(self.name, self.family, u.id, (m.id,), label=u.name)
                for u in ctx.units for m in ctx.models]

    def _ask(self, item: MatrixItem, ctx: RunContext, n: int) -> ModelRequest:
        summary = ctx.summary(item.unit_id, item.model_id)
        text = summary.summary if summary is not None else "(none)"
        return ModelRequest.chat(
            ctx.judges[0], [{"role": "user", "content": f"TOY ITEM {item.unit_id} "
                             f"{item.model_id} round {n}: {text}"}],
            role="judge", phase=PHASE, tag="toy-1", output_tokens=5)

    def requests(self, item: MatrixItem, ctx: RunContext,
                 answers: dict[str, Any]) -> list[ModelRequest]:
        for n in range(self.rounds):
            request = self._ask(item, ctx, n)
            if request.key not in answers:
                return [request]
        return []

    def prepare_requests(self, ctx: RunContext) -> list[ModelRequest]:
        return [ModelRequest.chat(ctx.judges[0], [{"role": "user",
                                                   "content": f"TOY SETUP {i}"}],
                                  role="judge", phase=PREPARE_PHASE, tag="toy-1")
                for i in range(self.setup_calls)]

    def warm_up(self, ctx: RunContext, stop: threading.Event, publish: Any) -> None:
        if self.warm:
            self.log.add(f"{self.name} warm-up")

    def prepare(self, ctx: RunContext) -> None:
        self.log.add(f"{self.name} prepare")
        if self.fail_prepare:
            raise RuntimeError("the index could not be built")

    def evaluate(self, item: MatrixItem, ctx: RunContext) -> list[ScoreRecord]:
        answers = gather(self, item, ctx)
        texts = [getattr(a, "text", "") for a in answers.values()]
        return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                            evaluator=self.name,
                            metrics={"match": float(all(t.startswith("yes") for t in texts))})]


class CodeOnly(Toy):
    """``toy/code``: an evaluator whose artefacts read only the code (built while the
    summaries are still being written), and makes no call."""

    name: ClassVar[str] = "toy/code"
    components: ClassVar[tuple[Component, ...]] = (
        Component(metric="match", weight="code", label="toy code"),)
    prepare_reads_summaries: ClassVar[bool] = False
    requests = Evaluator.requests  # type: ignore[assignment]


class ToyResponder:
    """Answers summaries with a sentence and toy questions with ``judge(body)`` (default:
    "yes"); ``phases`` lists the phase of every request, in arrival order."""

    def __init__(self, judge: Callable[[dict[str, Any]], str] | None = None) -> None:
        self.judge = judge
        self.phases: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        phase = phase_of(body)
        with self._lock:
            self.phases.append(phase)
        if phase == "generation":
            return "Computes the invoice amounts it is given."
        return self.judge(body) if self.judge is not None else "yes"


def served(server: FakeOpenAIServer, name: str, family: str | None = None,
           **extra: Any) -> dict[str, Any]:
    """A YAML model entry for ``name`` on the fake server (a local model: no key)."""
    return {"provider": "local", "model": name, "apiEndpoint": server.base_url,
            "family": family or name, **extra}
