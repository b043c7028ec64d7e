"""The one small protocol every evaluator implements, and the matrix item it scores.

An evaluator contributes matrix items (by default every sampled unit x every model under
test), may prepare shared artefacts once on the controller before any test runs (embeddings,
an index, generated queries), and scores one item at a time inside a test, in whichever
xdist worker the item lands. ``evaluate`` must be deterministic given the store's contents
and the run's seed, so rankings are identical with and without xdist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..context import RunContext
    from ..schemas import ScoreRecord


@dataclass(frozen=True, order=True)
class MatrixItem:
    """One cell of the matrix: a unit, a model (or model pair) and an evaluator."""

    evaluator: str
    """Evaluator name, ``family/method`` (e.g. ``contrastive/embedding``)."""
    unit_id: str
    """The code unit's id (or a task id for task-based evaluators)."""
    model_id: str
    """The model under test whose summary is scored; ``a~b`` for a pair."""
    variant: str = ""
    """Extra axis when an evaluator needs one (a judge id, a task id)."""
    label: str = ""
    """Readable unit label for the test id (``language-path-name``)."""

    @property
    def test_id(self) -> str:
        parts = [self.label or self.unit_id, self.model_id, self.evaluator]
        if self.variant:
            parts.append(self.variant)
        return "-".join(parts)


@dataclass(frozen=True)
class Component:
    """How one metric of an evaluator counts in its family's score (spec 9.1).

    Declared on the evaluator class (``components``); aggregation, the reports and the
    gate read these declarations (``aggregate/scoring.py``) and nothing else.
    """

    metric: str
    """The record metric whose mean over the evaluator's items is the component."""
    weight: str
    """The component's weight key within its family (spec 9.2: ``pointwise``,
    ``precision1``...; ``scoring.<family>Weights.<key>`` in summarybench.yaml)."""
    label: str
    """How reports name it (``judge rubric score``)."""
    low: float = 0.0
    high: float = 1.0
    """The metric's range: a mean ``x`` counts as ``(x - low) / (high - low)``."""
    default_weight: float = 1.0
    """The weight when the configuration names none (families the spec does not name)."""
    family: str | None = None
    """The family it counts for (default: the evaluator's)."""


@runtime_checkable
class Evaluator(Protocol):
    """What the plugin needs from an evaluator.

    An evaluator may subclass this protocol to inherit the defaults (always runs, scores
    every sampled unit x model, prepares nothing) and write only ``evaluate``.
    """

    name: ClassVar[str]
    """``family/method``; the family is one of ``vocabulary.FAMILIES`` (or a
    benchmark-specific family)."""
    family: ClassVar[str]
    components: ClassVar[tuple[Component, ...]] = ()
    """What of its metrics enters its family's score (none: reported, not scored)."""

    def skip_reason(self, ctx: RunContext) -> str | None:
        """Why this evaluator cannot run with this configuration (None when it can).

        Called at collection; an evaluator that returns a reason contributes no items and
        the report lists the family as skipped with this reason.
        """
        return None

    def items(self, ctx: RunContext) -> list[MatrixItem]:
        """The matrix items this evaluator scores, in a stable order."""
        return unit_items(self.name, ctx)

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


class EvaluationError(RuntimeError):
    """An item could not be scored (bad judge answer, missing summary, provider error).

    The message names what and where; the plugin records it as an error for the item and
    the run goes on.
    """


def unit_items(evaluator: str, ctx: RunContext) -> list[MatrixItem]:
    """The default item set: every sampled unit x every model under test."""
    return [
        MatrixItem(evaluator=evaluator, unit_id=u.id, model_id=m.id, label=ctx.unit_label(u))
        for u in ctx.units for m in ctx.models
    ]
