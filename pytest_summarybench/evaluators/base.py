"""The one small protocol every evaluator implements, and the matrix item it scores.

An evaluator contributes matrix items (by default every sampled unit x every model under
test), may prepare shared artefacts once on the controller before any test runs (embeddings,
an index, generated queries), and scores one item at a time inside a test, in whichever
xdist worker the item lands. ``evaluate`` must be deterministic given the store's contents
and the run's seed, so rankings are identical with and without xdist.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from ..core.errors import RunError
from ..core.vocabulary import PAIR_SEP

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Iterable

    from ..context import RunContext
    from ..llm.requests import ModelRequest
    from ..llm.types import Completion, ModelCallError
    from ..schemas import ScoreRecord


@dataclass(frozen=True, order=True)
class MatrixItem:
    """One cell of the matrix: a unit, a model (or a pair of models) and an evaluator."""

    evaluator: str
    """Evaluator name, ``family/method`` (e.g. ``contrastive/embedding``)."""
    family: str
    """The evaluator's family (its marker, its share of the ranking)."""
    unit_id: str
    """The code unit's id (or a task id for task-based evaluators)."""
    models: tuple[str, ...]
    """The models under test whose summaries it scores: one, or the two of a pair."""
    variant: str = ""
    """Extra axis when an evaluator needs one (a judge id, a task id)."""
    label: str = ""
    """Readable unit label for the test id (``language-path-name``)."""
    ladder: bool = field(init=False)
    """Whether it scores the validity ladder's models (``-m validate``), which are kept
    out of the ranking: known by their ids (``generate.ladder.LADDER_MODEL_IDS``)."""

    def __post_init__(self) -> None:
        if not self.models:
            raise ValueError(f"the matrix item of {self.evaluator} on {self.unit_id} names "
                             "no model")
        # Here, not at the top: this module is read at startup, the ladder with pydantic.
        from ..generate.ladder import LADDER

        object.__setattr__(self, "ladder", not LADDER.isdisjoint(self.models))

    @property
    def model_id(self) -> str:
        """The id of its model, or of its pair (``a~b``): its test id's, its records'."""
        return PAIR_SEP.join(self.models)

    @property
    def test_id(self) -> str:
        parts = [self.label or self.unit_id, self.model_id, self.evaluator]
        if self.variant:
            parts.append(self.variant)
        return "-".join(parts)


@dataclass(frozen=True)
class Component:
    """How one metric of an evaluator counts in its family's score (docs/methods.md#aggregation).

    Declared on the evaluator class (``components``); aggregation, the reports and the
    gate read these declarations (``aggregate/scoring.py``) and nothing else.
    """

    metric: str
    """The record metric whose mean over the evaluator's items is the component."""
    weight: str
    """The component's weight key within its family (docs/methods.md#weights: ``pointwise``,
    ``precision1``...; ``scoring.<family>Weights.<key>`` in summarybench.yaml, in
    camelCase). Its default is the family's declaration's (``Family.weights``), 1 when it
    declares none."""
    label: str
    """How reports name it (``judge rubric score``)."""
    low: float = 0.0
    high: float = 1.0
    """The metric's range: a mean ``x`` counts as ``(x - low) / (high - low)``."""
    family: str | None = None
    """The family it counts for (default: the evaluator's)."""


@runtime_checkable
class Evaluator(Protocol):
    """What the plugin needs from an evaluator.

    An evaluator may subclass this protocol to inherit the defaults (always runs, scores
    every sampled unit x model, prepares nothing) and write only ``evaluate``.
    """

    name: ClassVar[str]
    """``family/method``: the name of its family, ``/``, its method."""
    family: ClassVar[str]
    """The name of its family (``core.family.Family``): a built-in one, one a plugin
    declares, or, for an evaluator of a hook, any (weighed by ``weights.<family>``)."""
    components: ClassVar[tuple[Component, ...]] = ()
    """What of its metrics enters its family's score (none: reported, not scored)."""
    prepare_reads_summaries: ClassVar[bool] = True
    """Its ``prepare`` reads the summaries (an index of them). One that does not (distractor
    sets chosen from the code) is built while the summaries are still being written."""
    requests_need_prepare: ClassVar[bool] = False
    """Its ``requests`` read what ``prepare`` builds (contrastive/llm's distractor sets):
    the controller makes an item's calls only once ``prepare`` is done, or once a warm-up
    published what the item reads (``requests_read``), whichever comes first."""

    def skip_reason(self, ctx: RunContext) -> str | None:
        """Why this evaluator cannot run with this configuration (None when it can).

        Called at collection; an evaluator that returns a reason contributes no items and
        the report lists the family as skipped with this reason.
        """
        return None

    def models_left_out(self, ctx: RunContext) -> dict[str, str]:
        """Models under test whose items this evaluator skips although it runs for the
        others, each with the reason (a rule of the method, not a failure): the report
        names them, and run health counts a family that scored none of a model's items
        so (``engine/health.py``). Default: none."""
        return {}

    def requested(self, ctx: RunContext) -> bool:
        """Whether the configuration asks for this evaluator (a downstream task listed in
        ``tasks``, a contrastive method in ``methods``). One that is asked for and cannot
        run says why in a line of its own even when its family runs; one that is not
        asked for is left out without a word. Default: asked for."""
        return True

    def items(self, ctx: RunContext) -> list[MatrixItem]:
        """The matrix items this evaluator scores, in a stable order."""
        return unit_items(self, ctx)

    def summaries(self, item: MatrixItem, ctx: RunContext) -> list[tuple[str, str]]:
        """The (unit id, model id) summaries the item reads. The controller has them
        written before the item's model calls start (default: the item's unit, by each of
        its models)."""
        return [(item.unit_id, m) for m in item.models]

    def requests(self, item: MatrixItem, ctx: RunContext,
                 answers: Answers) -> list[ModelRequest]:
        """The model calls the item still needs, given the answers so far (none at
        first); none once it has what it needs.

        The controller makes them ahead of the tests, concurrently with every other
        item's, asking again with the new answers until nothing is left (a judge asked
        again after an unreadable verdict is a second round). ``evaluate`` then reads them
        with ``gather``, cache hits all. Must depend on nothing but its arguments, so the
        dry run and every process build the same requests.
        """
        return []

    def prepare_requests(self, ctx: RunContext) -> list[ModelRequest]:
        """Model calls the evaluator needs once for the run rather than per item (e.g.
        writing retrieval's queries), made before ``prepare``."""
        return []

    def warm_up(self, ctx: RunContext, stop: threading.Event,
                publish: Callable[[Iterable[str]], None]) -> None:
        """Optional: work ``prepare`` will need that reads only the code (not the summaries,
        not the selection), such as embedding every unit's code into the store's cache.

        The controller runs it in a thread of its own from the moment the units exist,
        while pytest still collects and before the first model call (``engine/warmup.py``), and
        runs ``prepare`` only after it returned. Return soon after ``stop`` is set (the
        evaluator's items were all deselected, or the session ends early); a failure is
        left for ``prepare`` to meet and report. ``publish(names)`` says that what the
        names stand for is stored (one unit's distractor set): the items whose
        ``requests_read`` is one of them make their calls from then on.
        """
        return None

    def requests_read(self, item: MatrixItem, ctx: RunContext) -> str | None:
        """With ``requests_need_prepare``: the name a warm-up publishes once what the item's
        ``requests`` read is stored (contrastive: its unit's distractor set), so that its
        calls start then rather than after ``prepare``. None (the default): after
        ``prepare``."""
        return None

    def prepare(self, ctx: RunContext) -> None:
        """Build shared artefacts once, on the controller, after summaries exist.

        Writes go to the store or to files under ``ctx.work_dir``; workers only read them.
        """
        return None

    def evaluate(self, item: MatrixItem, ctx: RunContext) -> list[ScoreRecord]:
        """Score one item. Raise ``EvaluationError`` for an item that cannot be scored."""


@runtime_checkable
class SummarizingEvaluator(Evaluator, Protocol):
    """An evaluator that also contributes its own section to the report."""

    def summarize(self, records: list[ScoreRecord], ctx: RunContext) -> dict[str, Any]:
        """Evaluator-specific figures over this run's records of this evaluator (a
        breakdown by query type, a judge bias audit...): JSON-serializable, written to
        ``results.json`` under ``evaluatorDetails[<name>]`` and shown in the reports."""


#: A request's key -> its completion, or why it failed for good.
Answers = dict[str, "Completion | ModelCallError"]
#: Rounds of calls an item may take (a first answer, re-asks); more is a bug.
MAX_ROUNDS = 8


def summaries_of(evaluator: Evaluator, item: MatrixItem, ctx: RunContext
                 ) -> list[tuple[str, str]]:
    """``evaluator.summaries``, or the protocol's default for an evaluator that implements
    the protocol without subclassing it."""
    method = getattr(evaluator, "summaries", None)
    if method is None:
        return Evaluator.summaries(evaluator, item, ctx)
    return method(item, ctx)  # type: ignore[no-any-return]


def requested_of(evaluator: Evaluator, ctx: RunContext) -> bool:
    """``evaluator.requested`` (asked for, for an evaluator without the method)."""
    method = getattr(evaluator, "requested", None)
    return True if method is None else bool(method(ctx))


def requests_of(evaluator: Evaluator, item: MatrixItem, ctx: RunContext,
                answers: Answers) -> list[ModelRequest]:
    """``evaluator.requests`` (none for an evaluator without the method)."""
    method = getattr(evaluator, "requests", None)
    return [] if method is None else method(item, ctx, answers)  # type: ignore[no-any-return]


def prepare_requests_of(evaluator: Evaluator, ctx: RunContext) -> list[ModelRequest]:
    """``evaluator.prepare_requests`` (none for an evaluator without the method)."""
    method = getattr(evaluator, "prepare_requests", None)
    return [] if method is None else method(ctx)  # type: ignore[no-any-return]


def makes_calls(evaluator: Evaluator) -> bool:
    """Whether ``evaluator`` asks for model calls per item (it has its own ``requests``)."""
    method = getattr(type(evaluator), "requests", None)
    return method is not None and method is not Evaluator.requests


def gather(evaluator: Evaluator, item: MatrixItem, ctx: RunContext) -> Answers:
    """The answers to every call ``evaluator.requests`` asks for ``item``, round after
    round: in a test these are the controller's answers from the response cache (or its
    recorded failures), so nothing is called twice."""
    from ..llm.scheduler import fetch
    from ..llm.types import ModelCallError

    answers: Answers = {}
    for _ in range(MAX_ROUNDS):
        pending = [r for r in requests_of(evaluator, item, ctx, answers)
                   if r.key not in answers]
        if not pending:
            return answers
        for request in pending:
            try:
                answers[request.key] = fetch(request, ctx.store, ctx.session,
                                             endpoints=ctx.endpoints)
            except ModelCallError as exc:
                answers[request.key] = exc
    raise EvaluationError(f"{evaluator.name} asked for more than {MAX_ROUNDS} rounds of "
                          f"model calls for {item.test_id}")


def reject_answers(ctx: RunContext, keys: Iterable[str]) -> None:
    """The cached answers under ``keys`` (request keys) could not be used (a verdict still
    unreadable after the re-asks, queries with no JSON): this session keeps reading them,
    so that every process fails the item alike without a second call, and a later session
    asks again instead of failing on the same answers (``llm/cache.py``)."""
    from ..llm.cache import cache_reject

    cache_reject(ctx.store, keys, session=ctx.session)


class EvaluationError(RunError, RuntimeError):
    """An item could not be scored (bad judge answer, missing summary, provider error).

    The message names what and where; the plugin records it as an error for the item and
    the run goes on.
    """


def unit_items(evaluator: Evaluator, ctx: RunContext) -> list[MatrixItem]:
    """The default item set of ``evaluator``: every sampled unit x every model under test."""
    return [
        MatrixItem(evaluator=evaluator.name, family=evaluator.family, unit_id=u.id,
                   models=(m.id,), label=ctx.unit_label(u))
        for u in ctx.units for m in ctx.models
    ]
