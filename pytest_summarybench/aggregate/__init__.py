"""Aggregation: from per-item score records to per-model family scores, per-unit paired
statistics, failure and cost analysis, and the ranking (spec sections 9 and 10)."""

from .ranking import ReportInputs, build_report, rank_models
from .scores import COMPONENTS, Component, FamilyBreakdown, family_scores, unit_breakdowns

__all__ = ["COMPONENTS", "Component", "FamilyBreakdown", "ReportInputs", "build_report",
           "family_scores", "rank_models", "unit_breakdowns"]
