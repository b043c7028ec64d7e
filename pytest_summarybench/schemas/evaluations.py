"""The evaluation result schema of docs/methods.md#score-records."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator

from ..core.family import family_of
from ..core.vocabulary import models_of
from ._base import SBModel

#: An evaluator family's name, or the validity ladder's ``validate``.
EvaluationType = str


class JudgeScores(SBModel):
    """The five rubric criteria of docs/methods.md#judge-pointwise, each 1-5."""

    accuracy: float
    completeness: float
    semantic_richness: float
    abstraction: float
    conciseness: float


class JudgeResults(SBModel):
    """A judge's pointwise verdict (and pairwise record, when aggregated)."""

    judge_model_id: str
    scores: JudgeScores
    reasoning: str = ""
    pairwise_wins: int | None = None
    pairwise_losses: int | None = None


class ContrastiveResults(SBModel):
    """Whether the summary picked its code out of distractors
    (docs/methods.md#contrastive-family)."""

    correct: bool
    predicted_rank: int
    distractor_ids: list[str]
    method: Literal["embedding", "lexical", "llm"]
    confidence_gap: float | None = None
    difficulty: Literal["easy", "medium", "hard"] | None = None


class RetrievalResults(SBModel):
    """Whether a developer query found the code through the summary
    (docs/methods.md#retrieval-family)."""

    query_id: str
    retrieved_at_k: list[int]
    """The K values at which the target was in the top K."""
    reciprocal_rank: float
    query_type: str | None = None


class DownstreamResults(SBModel):
    """Outcome of one downstream task (docs/methods.md#downstream-family)."""

    task_type: Literal["completion", "bug_localisation", "function_selection"]
    task_id: str
    success: bool
    partial_score: float | None = None


class EvaluationResult(SBModel):
    """One evaluation of one summary."""

    id: str
    summary_id: str
    evaluation_type: EvaluationType
    judge_results: JudgeResults | None = None
    contrastive_results: ContrastiveResults | None = None
    retrieval_results: RetrievalResults | None = None
    downstream_results: DownstreamResults | None = None
    evaluated_at: str


class ScoreRecord(SBModel):
    """What one matrix test records through ``pytest_summarybench_record_score``.

    This is the unit of data that crosses from xdist workers to the controller on the
    test report; it is benchmark-agnostic so that other benchmarks hosted by the
    harness (docs/harness.md) use the same path.
    """

    benchmark: str = "summary"
    """Which benchmark produced it (``summary`` for the code-summary benchmark)."""
    nodeid: str = ""
    """The pytest node id of the test that recorded it (filled in by the plugin)."""
    unit_id: str
    """The evaluated item: a code unit id, or an example id for other benchmarks."""
    model_id: str
    """The model (or system) under test."""
    evaluator: str
    """The evaluator, as ``family`` or ``family/method`` (e.g. ``contrastive/embedding``)."""
    metrics: dict[str, float] = Field(default_factory=dict)
    """Named numeric scores, each on the scale its evaluator documents."""
    details: dict = Field(default_factory=dict)
    """Free-form JSON details (ranks, distractors, raw verdicts) kept for reports."""
    error: str | None = None
    """Why the item could not be scored; a record with an error carries no metrics."""

    @field_validator("metrics")
    @classmethod
    def _finite(cls, metrics: dict[str, float]) -> dict[str, float]:
        for name, value in metrics.items():
            if not math.isfinite(value):
                raise ValueError(f"metric {name!r} is {value}: a score must be a finite "
                                 "number (the evaluator produced no usable value)")
        return metrics

    @property
    def family(self) -> str:
        """The evaluator family (``core.family.family_of`` its name)."""
        return family_of(self.evaluator)

    @property
    def models(self) -> tuple[str, ...]:
        """The models it scores: its model, or the two of a pair (``a~b``)."""
        return models_of(self.model_id)

    @classmethod
    def failed(cls, *, unit_id: str, model_id: str, evaluator: str, reason: str,
               benchmark: str = "summary") -> ScoreRecord:
        """A record for an item that could not be scored, with the reason."""
        return cls(benchmark=benchmark, unit_id=unit_id, model_id=model_id,
                   evaluator=evaluator, error=reason)
