"""Aggregation: from per-item score records to per-model family scores and a ranking
(spec section 9)."""

from .ranking import build_report, rank_models
from .scores import COMPONENTS, Component, FamilyBreakdown, family_scores

__all__ = ["COMPONENTS", "Component", "FamilyBreakdown", "build_report", "family_scores",
           "rank_models"]
