"""Pydantic schemas of every data model: units, summaries, records, the run and the report
(docs/reports.md#the-results-file)."""

from ._base import SBModel
from .config import (
    BenchmarkConfig,
    EvalWeights,
    ModelConfig,
    ScoringConfig,
)
from .evaluations import (
    ContrastiveResults,
    DownstreamResults,
    EvaluationResult,
    JudgeResults,
    JudgeScores,
    RetrievalResults,
    ScoreRecord,
)
from .report import (
    BenchmarkReport,
    CostBreakdown,
    Costs,
    Detailed,
    ErrorCount,
    FailureAnalysis,
    FamilyScores,
    GroupScores,
    ModelComparison,
    ModelRanking,
    ReportMetadata,
    SignificanceTest,
    Statistics,
)
from .run import BenchmarkRun, CodebaseInfo
from .summaries import GeneratedSummary, GenerationMetadata
from .units import CodeUnit, Parameter, UnitMetadata, UnitRelationships

__all__ = [
    "BenchmarkConfig", "BenchmarkReport", "BenchmarkRun",
    "CodeUnit", "CodebaseInfo", "ContrastiveResults", "CostBreakdown",
    "Costs", "Detailed", "DownstreamResults", "ErrorCount",
    "EvalWeights", "EvaluationResult", "FailureAnalysis", "FamilyScores",
    "GeneratedSummary", "GenerationMetadata", "GroupScores", "JudgeResults",
    "JudgeScores", "ModelComparison", "ModelConfig", "ModelRanking", "Parameter",
    "ReportMetadata", "RetrievalResults", "SBModel", "ScoreRecord",
    "ScoringConfig", "SignificanceTest", "Statistics", "UnitMetadata", "UnitRelationships",
]
