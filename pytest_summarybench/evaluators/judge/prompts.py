"""The judge prompts: the pointwise rubric (docs/methods.md#judge-pointwise) and the pairwise
comparison (docs/methods.md#judge-pairwise).

The four texts are copied verbatim from the spec. ``PROMPT_VERSION`` is derived from them
and is the cache tag of every judge call, so an edit misses the response cache instead of
reusing verdicts given to another prompt. Placeholders are filled in one pass, so code or
a summary that happens to contain ``{summary}`` is never expanded twice.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

JUDGE_SYSTEM_PROMPT = """You are an expert evaluator assessing the quality of code summaries for use in RAG-based code search systems.

You will evaluate summaries on 5 criteria, scoring each from 1-5.

The summaries will be used to:
1. Match developer search queries to relevant code
2. Provide context to LLMs helping developers
3. Help developers quickly understand unfamiliar code

Be strict but fair. A score of 3 is average/acceptable. Reserve 5 for exceptional summaries and 1 for summaries that would actively harm retrieval or understanding."""  # noqa: E501

JUDGE_USER_PROMPT = """Evaluate this code summary.

## Original Code
```{language}
{code}
```

## Summary to Evaluate
{summary}

## Evaluation Criteria

### 1. Accuracy (1-5)
Does the summary correctly describe what the code does?
- 1: Fundamentally wrong, misleading, or describes different functionality
- 2: Major errors or significant misunderstandings
- 3: Mostly correct with some inaccuracies or ambiguities
- 4: Accurate with only minor issues or omissions
- 5: Completely accurate representation of the code's functionality

### 2. Completeness (1-5)
Does the summary cover the important aspects?
- 1: Missing most key information (inputs, outputs, purpose, side effects)
- 2: Missing several important aspects
- 3: Covers main functionality but misses some relevant details
- 4: Covers all important aspects with minor omissions
- 5: Comprehensively covers all relevant aspects without being verbose

### 3. Semantic Richness (1-5)
Would this summary help match natural language queries to this code?
- 1: Uses only generic terms, wouldn't match relevant searches
- 2: Limited vocabulary, would miss many relevant queries
- 3: Decent terminology, would match obvious queries
- 4: Good use of domain terms, would match most relevant queries
- 5: Excellent vocabulary coverage, would match diverse query phrasings

### 4. Abstraction Level (1-5)
Does it describe WHAT/WHY rather than HOW?
- 1: Just restates code in English, line-by-line description
- 2: Mostly implementation details with some purpose
- 3: Mix of implementation and intent
- 4: Focuses on purpose with minimal implementation details
- 5: Clearly captures intent and purpose, implementation only when essential

### 5. Conciseness (1-5)
Is it appropriately brief without losing important information?
- 1: Extremely verbose OR so brief it's useless
- 2: Notably too long OR missing key information due to brevity
- 3: Acceptable length but could be tighter OR slightly more detailed
- 4: Well-balanced length, minor room for improvement
- 5: Optimal length - complete yet concise

## Response Format
Respond with a JSON object:
```json
{
  "scores": {
    "accuracy": <1-5>,
    "completeness": <1-5>,
    "semantic_richness": <1-5>,
    "abstraction": <1-5>,
    "conciseness": <1-5>
  },
  "reasoning": "<Brief explanation of scores, 2-3 sentences>",
  "weighted_average": <calculated weighted average>
}
```

Weights for weighted_average: accuracy=0.25, completeness=0.20, semantic_richness=0.25, abstraction=0.15, conciseness=0.15"""  # noqa: E501

PAIRWISE_SYSTEM_PROMPT = """You are an expert evaluator comparing code summaries for use in RAG-based code search systems.

You will compare two summaries of the same code and determine which is more useful for:
1. Matching developer search queries to relevant code
2. Providing context to LLMs helping developers
3. Helping developers quickly understand unfamiliar code

Be decisive. You must pick a winner or declare a tie only if they are truly equivalent."""  # noqa: E501

PAIRWISE_USER_PROMPT = """Compare these two summaries of the same code.

## Original Code
```{language}
{code}
```

## Summary A
{summary_a}

## Summary B
{summary_b}

## Comparison Criteria
Consider:
- Accuracy: Which more correctly describes the code?
- Completeness: Which covers more important aspects?
- Searchability: Which would better match developer queries?
- Clarity: Which better captures intent vs implementation?
- Conciseness: Which is more appropriately sized?

## Response Format
Respond with a JSON object:
```json
{
  "winner": "A" | "B" | "tie",
  "confidence": "high" | "medium" | "low",
  "reasoning": "<2-3 sentences explaining your decision>",
  "criteria_breakdown": {
    "accuracy": "A" | "B" | "tie",
    "completeness": "A" | "B" | "tie",
    "searchability": "A" | "B" | "tie",
    "clarity": "A" | "B" | "tie",
    "conciseness": "A" | "B" | "tie"
  }
}
```"""  # noqa: E501

#: The weights of the rubric criteria (docs/methods.md#judge-pointwise); the weighted average
#: is computed from them.
CRITERIA_WEIGHTS: dict[str, float] = {
    "accuracy": 0.25,
    "completeness": 0.20,
    "semantic_richness": 0.25,
    "abstraction": 0.15,
    "conciseness": 0.15,
}
#: The rubric criteria in the spec's order.
CRITERIA: tuple[str, ...] = tuple(CRITERIA_WEIGHTS)
#: The comparison criteria of docs/methods.md#judge-pairwise, in the spec's order.
PAIRWISE_CRITERIA: tuple[str, ...] = (
    "accuracy", "completeness", "searchability", "clarity", "conciseness")

_DIGEST = hashlib.sha256("\x1f".join(
    (JUDGE_SYSTEM_PROMPT, JUDGE_USER_PROMPT, PAIRWISE_SYSTEM_PROMPT, PAIRWISE_USER_PROMPT)
).encode()).hexdigest()[:8]
#: The prompt set's version: recorded with every verdict and used as the cache tag.
PROMPT_VERSION = f"judge-1-{_DIGEST}"
POINTWISE_TAG = f"{PROMPT_VERSION}:pointwise"
PAIRWISE_TAG = f"{PROMPT_VERSION}:pairwise"

_PLACEHOLDER = re.compile(r"\{(language|code|summary|summary_a|summary_b)\}")


def fill(template: str, values: Mapping[str, str]) -> str:
    """``template`` with its placeholders replaced in a single pass.

    Only the named placeholders are touched: the JSON braces of the response format stay.
    Raises KeyError naming a placeholder that ``values`` lacks.
    """
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def weighted_average(scores: Mapping[str, float]) -> float:
    """The weighted average of the five criteria scores, 1-5 (docs/methods.md#judge-pointwise)."""
    return sum(CRITERIA_WEIGHTS[c] * float(scores[c]) for c in CRITERIA)


def pointwise_messages(language: str, code: str, summary: str) -> list[dict[str, str]]:
    """System and user messages of the rubric (docs/methods.md#judge-pointwise) for one summary."""
    user = fill(JUDGE_USER_PROMPT, {"language": language, "code": code, "summary": summary})
    return [{"role": "system", "content": JUDGE_SYSTEM_PROMPT},
            {"role": "user", "content": user}]


def pairwise_messages(language: str, code: str, summary_a: str,
                      summary_b: str) -> list[dict[str, str]]:
    """System and user messages of the comparison (docs/methods.md#judge-pairwise), ``summary_a``
    shown first."""
    user = fill(PAIRWISE_USER_PROMPT, {"language": language, "code": code,
                                       "summary_a": summary_a, "summary_b": summary_b})
    return [{"role": "system", "content": PAIRWISE_SYSTEM_PROMPT},
            {"role": "user", "content": user}]
