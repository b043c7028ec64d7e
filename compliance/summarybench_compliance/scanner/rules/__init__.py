"""One rule set per article, in article order."""

from __future__ import annotations

from .art09_risk import RiskManagementRule
from .art10_data import DataGovernanceRule
from .art11_docs import TechnicalDocumentationRule
from .art12_logging import RecordKeepingRule
from .art14_oversight import HumanOversightRule
from .art15_robustness import RobustnessRule

__all__ = ["DataGovernanceRule", "HumanOversightRule", "RecordKeepingRule",
           "RiskManagementRule", "RobustnessRule", "TechnicalDocumentationRule"]
