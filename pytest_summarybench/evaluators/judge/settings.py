"""The judge family's section of summarybench.yaml, ``evaluation.judge``: which evaluations,
how many judges, and how strictly judge answers are read (docs/configuration.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from ...llm.structured import StructuredMode
from ...settings import FamilySection

if TYPE_CHECKING:
    from ...settings import Settings


class JudgeSettings(FamilySection):
    """LLM-as-judge settings (docs/methods.md#judge-family): which evaluations, how many
    judges, and how strictly judge answers are read."""

    pointwise: bool = True
    """Score each summary on the rubric (docs/methods.md#judge-pointwise)."""
    pairwise: bool = True
    """Run the tournament (docs/methods.md#judge-pairwise): every pair of models, both orders."""
    min_judges: int = Field(default=2, ge=1)
    """Rule 2 of docs/methods.md#judge-selection: judges each model (and each pair) should be
    judged by."""
    max_judges: int = Field(default=3, ge=1, validate_default=True)
    """Rule 3 of docs/methods.md#judge-selection: at most this many judges per model or pair,
    diverse families first."""
    allow_fewer: bool = True
    """With fewer eligible judges than ``minJudges``, judge with those there are (and say so
    in the report); when false, a model or pair short of judges is not judged."""
    family_patterns: dict[str, list[str]] = Field(default_factory=dict)
    """Extra family -> regular expressions matched against model names, checked before the
    built-in table (e.g. ``{acme: ["^acme-"]}``)."""
    structured_output: StructuredMode = "auto"
    """Ask for JSON output: ``auto`` uses a JSON schema where the provider supports one and
    JSON mode where it has that, ``off`` relies on the prompt alone."""
    parse_retries: int = Field(default=1, ge=0, le=5)
    """How often a judge is asked again after an answer that is not valid JSON."""
    bootstrap_samples: int = Field(default=1000, ge=50, le=100_000)
    """Resamples of units for the confidence intervals of strengths and averages."""

    @field_validator("family_patterns")
    @classmethod
    def _patterns_compile(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        import re

        for family, patterns in v.items():
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ValueError(f"familyPatterns.{family}: {pattern!r} is not a valid "
                                     f"regular expression ({exc})") from None
        return v

    @field_validator("max_judges")
    @classmethod
    def _at_least_min(cls, v: int, info: Any) -> int:
        # ``info`` is pydantic's ValidationInfo; min_judges is validated first.
        low = info.data.get("min_judges")
        if low is not None and v < low:
            raise ValueError(f"maxJudges ({v}) must be at least minJudges ({low})")
        return v

    def configuration(self, settings: Settings) -> dict[str, Any]:
        return {"enabled": self.enabled,
                "judgeModels": [m.id for m in settings.judge_models()],
                "usePairwise": self.pairwise}
