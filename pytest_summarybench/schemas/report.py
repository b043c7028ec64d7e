"""The report schema of spec section 10.1 (``results.json``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ._base import SBModel
from .config import BenchmarkConfig
from .run import CodebaseInfo


class ReportMetadata(SBModel):
    benchmark_id: str
    name: str
    run_date: str
    duration: str
    codebase: CodebaseInfo
    configuration: BenchmarkConfig
    families_run: list[str] = Field(default_factory=list)
    """Evaluator families that produced scores in this run."""
    families_skipped: dict[str, str] = Field(default_factory=dict)
    """Families that did not run, with the reason."""


class FamilyScores(SBModel):
    """Per-family scores on a 0-1 scale; ``None`` where the family did not run."""

    judge: float | None = None
    contrastive: float | None = None
    retrieval: float | None = None
    downstream: float | None = None


class ModelRanking(SBModel):
    rank: int
    model_id: str
    model_name: str
    overall_score: float
    scores: FamilyScores
    delta_from_baseline: float | None = None
    scored_items: int = 0
    """Matrix items that produced a score for this model."""
    errors: int = 0
    """Matrix items that ended in an error for this model."""


class PairwiseRecord(SBModel):
    a_wins: int = 0
    b_wins: int = 0
    ties: int = 0


class ModelComparison(SBModel):
    model_a: str
    model_b: str
    winner: str
    score_difference: float
    significant: bool
    pairwise_record: PairwiseRecord = Field(default_factory=PairwiseRecord)
    strengths_a: list[str] = Field(default_factory=list)
    strengths_b: list[str] = Field(default_factory=list)


class SignificanceTest(SBModel):
    model_a: str
    model_b: str
    metric: str
    mean_difference: float
    p_value: float
    significant: bool
    confidence_interval: tuple[float, float]


class Statistics(SBModel):
    significance_tests: list[SignificanceTest] = Field(default_factory=list)
    correlations: dict[str, dict[str, float]] = Field(default_factory=dict)


class FailureExample(SBModel):
    code_unit_id: str
    summary: str
    issue: str
    category: str


class FailureAnalysis(SBModel):
    model_id: str
    weakest_metric: str | None = None
    weakest_language: str | None = None
    weakest_code_type: str | None = None
    examples: list[FailureExample] = Field(default_factory=list)


class FailurePattern(SBModel):
    category: str
    description: str
    share_of_low_scores: float
    models: dict[str, int] = Field(default_factory=dict)


class Failures(SBModel):
    by_model: dict[str, FailureAnalysis] = Field(default_factory=dict)
    common_patterns: list[FailurePattern] = Field(default_factory=list)


class CostBreakdown(SBModel):
    total: float | None = None
    """USD; ``None`` when any call's price is unknown."""
    per_1k_summaries: float | None = None
    by_phase: dict[str, float | None] = Field(default_factory=dict)
    unknown_price_calls: int = 0


class Costs(SBModel):
    by_model: dict[str, CostBreakdown] = Field(default_factory=dict)
    total: float | None = None


class GroupScores(SBModel):
    """Mean scores of one group (a language, a code type) per model."""

    units: int = 0
    by_model: dict[str, FamilyScores] = Field(default_factory=dict)
    overall_by_model: dict[str, float] = Field(default_factory=dict)


class Detailed(SBModel):
    by_model: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Per model, every metric's mean over the items it was scored on."""
    by_language: dict[str, GroupScores] = Field(default_factory=dict)
    by_code_type: dict[str, GroupScores] = Field(default_factory=dict)


class ErrorCount(SBModel):
    model_id: str
    evaluator: str
    count: int
    examples: list[str] = Field(default_factory=list)


class BenchmarkReport(SBModel):
    metadata: ReportMetadata
    rankings: list[ModelRanking]
    detailed: Detailed = Field(default_factory=Detailed)
    comparisons: list[ModelComparison] = Field(default_factory=list)
    statistics: Statistics = Field(default_factory=Statistics)
    failures: Failures = Field(default_factory=Failures)
    costs: Costs = Field(default_factory=Costs)
    errors: list[ErrorCount] = Field(default_factory=list)
    """Matrix items that could not be scored, counted per model and evaluator."""
    evaluator_details: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per evaluator, the figures its ``summarize`` contributed (see ``SummarizingEvaluator``)."""
