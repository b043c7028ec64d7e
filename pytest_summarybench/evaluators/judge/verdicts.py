"""What a judge must answer, and how an answer is read: the pydantic schemas of the
rubric's answer (docs/methods.md#judge-pointwise) and the comparison's
(docs/methods.md#judge-pairwise), and a parser that survives real judges.

Real judges wrap their JSON in code fences, put prose before or after it, write numbers as
strings ("4", "4/5") and vary key spelling ("Semantic Richness", "abstraction_level").
All of that is accepted; what cannot be read as the schema raises ``InvalidVerdict``
naming what was wrong, so the caller can ask again and, failing that, record a judge
error with the raw text (never a score of 0).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ...core.errors import RunError
from ...llm.json_answer import JSONAnswerError, extract_json_object
from .prompts import CRITERIA, PAIRWISE_CRITERIA, weighted_average

Side = Literal["A", "B", "tie"]


class InvalidVerdict(RunError, ValueError):
    """A judge's answer cannot be read as the required JSON object; says why."""


def _number(value: Any) -> float:
    """A score from a number or a numeric string (``"4"``, ``" 4.5 "``, ``"4/5"``)."""
    if isinstance(value, bool):
        raise ValueError(f"expected a number from 1 to 5, got {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(?:/\s*5(?:\.0)?)?\s*", value)
        if m:
            return float(m.group(1))
    raise ValueError(f"expected a number from 1 to 5, got {value!r}")


def _side(value: Any) -> str:
    """``"A"``, ``"B"`` or ``"tie"`` from the spellings judges use."""
    if isinstance(value, str):
        text = value.strip().strip(".*\"'").strip().lower()
        text = re.sub(r"^(summary|response|option)\s+", "", text)
        if text in ("a", "b"):
            return text.upper()
        if text in ("tie", "draw", "equal", "none", "neither", "both", "tied"):
            return "tie"
    raise ValueError(f"expected \"A\", \"B\" or \"tie\", got {value!r}")


def _key(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


class RubricScores(BaseModel):
    """The five criteria of docs/methods.md#judge-pointwise, each from 1 to 5."""

    model_config = ConfigDict(extra="ignore")

    accuracy: float = Field(ge=1, le=5)
    """Does the summary correctly describe what the code does?"""
    completeness: float = Field(ge=1, le=5)
    """Does the summary cover the important aspects?"""
    semantic_richness: float = Field(ge=1, le=5)
    """Would this summary help match natural language queries to this code?"""
    abstraction: float = Field(ge=1, le=5)
    """Does it describe WHAT/WHY rather than HOW?"""
    conciseness: float = Field(ge=1, le=5)
    """Is it appropriately brief without losing important information?"""

    @field_validator(*CRITERIA, mode="before")
    @classmethod
    def _numeric(cls, v: Any) -> float:
        return _number(v)


class PointwiseVerdict(BaseModel):
    """A judge's answer to the rubric (docs/methods.md#judge-pointwise)."""

    model_config = ConfigDict(extra="ignore")

    scores: RubricScores
    """The five criteria scores."""
    reasoning: str = ""
    """The judge's brief explanation."""
    weighted_average: float | None = None
    """What the judge computed; kept for the record, never used as the score."""

    @field_validator("reasoning", mode="before")
    @classmethod
    def _text(cls, v: Any) -> str:
        return "" if v is None else str(v)

    @field_validator("weighted_average", mode="before")
    @classmethod
    def _claimed(cls, v: Any) -> float | None:
        try:
            return None if v is None else _number(v)
        except ValueError:
            return None

    @property
    def score(self) -> float:
        """The weighted average computed by us from the five scores."""
        return weighted_average(self.scores.model_dump())


class CriteriaBreakdown(BaseModel):
    """The per-criterion winners of docs/methods.md#judge-pairwise; a criterion the judge left out
    is None."""

    model_config = ConfigDict(extra="ignore")

    accuracy: Side | None = None
    completeness: Side | None = None
    searchability: Side | None = None
    clarity: Side | None = None
    conciseness: Side | None = None

    @field_validator(*PAIRWISE_CRITERIA, mode="before")
    @classmethod
    def _sides(cls, v: Any) -> str | None:
        return None if v is None else _side(v)


class PairwiseVerdict(BaseModel):
    """A judge's answer to the comparison (docs/methods.md#judge-pairwise), positions as shown:
    A first."""

    model_config = ConfigDict(extra="ignore")

    winner: Side
    """The summary the judge preferred, by position, or ``tie``."""
    confidence: Literal["high", "medium", "low"] | None = None
    """The judge's stated confidence, when it gave a recognisable one."""
    reasoning: str = ""
    criteria_breakdown: CriteriaBreakdown = Field(default_factory=CriteriaBreakdown)

    @field_validator("winner", mode="before")
    @classmethod
    def _winner(cls, v: Any) -> str:
        return _side(v)

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, v: Any) -> str | None:
        text = str(v).strip().lower() if v is not None else ""
        return text if text in ("high", "medium", "low") else None

    @field_validator("reasoning", mode="before")
    @classmethod
    def _text(cls, v: Any) -> str:
        return "" if v is None else str(v)


# -- reading the JSON object out of a reply ----------------------------------------------
def extract_json(text: str) -> dict[str, Any]:
    """The first JSON object in ``text``: inside a code fence, or amid prose.

    Raises ``InvalidVerdict`` when there is none, and for hostile answers (too long, nested
    too deep, absurd numbers: see ``llm/json_answer.py``), so that they take the re-ask
    path like any other unreadable answer.
    """
    try:
        return extract_json_object(text)
    except JSONAnswerError as exc:
        raise InvalidVerdict(str(exc)) from None


def _normalise_keys(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {_key(str(k)): _normalise_keys(v) for k, v in obj.items()}
    return obj


_RUBRIC_ALIASES = {"abstraction_level": "abstraction", "semantic": "semantic_richness",
                   "richness": "semantic_richness"}


def _rubric_scores(data: dict[str, Any]) -> dict[str, Any]:
    scores = data.get("scores")
    if not isinstance(scores, dict):
        # Some judges drop the wrapper and put the criteria at the top level.
        scores = {k: v for k, v in data.items() if k in CRITERIA or k in _RUBRIC_ALIASES}
    out = {}
    for key, value in scores.items():
        key = _RUBRIC_ALIASES.get(key, key)
        # A criterion given as {"score": 4, "reason": ...}
        if isinstance(value, dict) and "score" in value:
            value = value["score"]
        out[key] = value
    return out


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "answer"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def parse_pointwise(text: str) -> PointwiseVerdict:
    """Read an answer (docs/methods.md#judge-pointwise); raises ``InvalidVerdict`` saying what is
    missing or wrong."""
    data = _normalise_keys(extract_json(text))
    payload = {"scores": _rubric_scores(data), "reasoning": data.get("reasoning"),
               "weighted_average": data.get("weighted_average")}
    try:
        return PointwiseVerdict.model_validate(payload)
    except ValidationError as exc:
        raise InvalidVerdict(_describe(exc)) from None


def parse_pairwise(text: str) -> PairwiseVerdict:
    """Read an answer (docs/methods.md#judge-pairwise); raises ``InvalidVerdict`` saying what is
    missing or wrong."""
    data = _normalise_keys(extract_json(text))
    breakdown = data.get("criteria_breakdown")
    payload = {"winner": data.get("winner"), "confidence": data.get("confidence"),
               "reasoning": data.get("reasoning"),
               "criteria_breakdown": breakdown if isinstance(breakdown, dict) else {}}
    try:
        return PairwiseVerdict.model_validate(payload)
    except ValidationError as exc:
        raise InvalidVerdict(_describe(exc)) from None


# -- structured output schemas -----------------------------------------------------------
_SIDE_SCHEMA = {"type": "string", "enum": ["A", "B", "tie"]}

POINTWISE_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "scores": {
            "type": "object",
            # enum rather than minimum/maximum: strict modes of some providers lack those
            "properties": {c: {"type": "integer", "enum": [1, 2, 3, 4, 5]} for c in CRITERIA},
            "required": list(CRITERIA),
            "additionalProperties": False,
        },
        "reasoning": {"type": "string"},
        "weighted_average": {"type": "number"},
    },
    "required": ["scores", "reasoning", "weighted_average"],
    "additionalProperties": False,
}

PAIRWISE_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "winner": _SIDE_SCHEMA,
        "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
        "reasoning": {"type": "string"},
        "criteria_breakdown": {
            "type": "object",
            "properties": {c: _SIDE_SCHEMA for c in PAIRWISE_CRITERIA},
            "required": list(PAIRWISE_CRITERIA),
            "additionalProperties": False,
        },
    },
    "required": ["winner", "confidence", "reasoning", "criteria_breakdown"],
    "additionalProperties": False,
}
