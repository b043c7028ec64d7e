"""Aggregation: from per-item score records to per-model family scores, per-unit paired
statistics, failure and cost analysis, and the ranking (docs/methods.md#aggregation and
docs/reports.md#the-results-file)."""

from .ranking import ReportInputs, build_report, rank_models
from .scores import FamilyBreakdown, family_scores, unit_breakdowns
from .scoring import ScoreComponent, Scoring, ScoringError, scoring_for

__all__ = ["FamilyBreakdown", "ReportInputs", "ScoreComponent", "Scoring", "ScoringError",
           "build_report", "family_scores", "rank_models", "scoring_for", "unit_breakdowns"]
