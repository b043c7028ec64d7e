"""The spec prompts, and reading judge answers the way real judges write them."""

from __future__ import annotations

import hashlib
import json

import pytest

from pytest_summarybench.evaluators.judge import prompts
from pytest_summarybench.evaluators.judge.verdicts import (
    InvalidVerdict,
    extract_json,
    parse_pairwise,
    parse_pointwise,
)

# sha256 of the four texts as copied from the design specification (docs/methods.md#judge-family
# says what they ask): an edit must be deliberate.
SPEC_DIGESTS = {
    "JUDGE_SYSTEM_PROMPT": "5f118df95c917f7d35cbceeb99c9e3c56f56dd9783e6fef6b246614f0e249673",
    "JUDGE_USER_PROMPT": "4ade397a220518df044e820c0d69cbfc65fbf54998331b152a90e3577d3786a4",
    "PAIRWISE_SYSTEM_PROMPT":
        "457a8c910725aceecca650c4a09269a69cacb90323eef81d377aef96b4cf4a3a",
    "PAIRWISE_USER_PROMPT": "51b96860c48dfcc3b717f919c1b210edfbd2f2e579c89a6c978b95959e31c6d7",
}


@pytest.mark.parametrize("name", sorted(SPEC_DIGESTS))
def test_prompts_are_the_spec_texts(name: str) -> None:
    text = getattr(prompts, name)
    assert hashlib.sha256(text.encode()).hexdigest() == SPEC_DIGESTS[name]


def test_prompt_texts_spot_check() -> None:
    assert prompts.JUDGE_SYSTEM_PROMPT.startswith(
        "You are an expert evaluator assessing the quality of code summaries")
    assert prompts.JUDGE_USER_PROMPT.endswith(
        "Weights for weighted_average: accuracy=0.25, completeness=0.20, "
        "semantic_richness=0.25, abstraction=0.15, conciseness=0.15")
    assert prompts.PAIRWISE_SYSTEM_PROMPT.endswith(
        "Be decisive. You must pick a winner or declare a tie only if they are truly "
        "equivalent.")
    assert '"winner": "A" | "B" | "tie",' in prompts.PAIRWISE_USER_PROMPT
    assert prompts.CRITERIA_WEIGHTS == {"accuracy": 0.25, "completeness": 0.20,
                                        "semantic_richness": 0.25, "abstraction": 0.15,
                                        "conciseness": 0.15}
    assert sum(prompts.CRITERIA_WEIGHTS.values()) == pytest.approx(1.0)


def test_placeholders_are_filled_once() -> None:
    """A summary or code containing a placeholder is not expanded again."""
    messages = prompts.pairwise_messages("python", "x = '{summary_b}'", "says {code}", "B!")
    user = messages[1]["content"]
    assert "```python\nx = '{summary_b}'\n```" in user
    assert "## Summary A\nsays {code}\n\n## Summary B\nB!\n" in user
    assert '"criteria_breakdown": {' in user  # the JSON braces of the format stay
    assert messages[0] == {"role": "system", "content": prompts.PAIRWISE_SYSTEM_PROMPT}


def _rubric(**scores: object) -> dict[str, object]:
    base: dict[str, object] = {"accuracy": 4, "completeness": 3, "semantic_richness": 5,
                               "abstraction": 2, "conciseness": 4}
    base.update(scores)
    return base


def test_weighted_average_is_ours_not_the_judges() -> None:
    text = json.dumps({"scores": _rubric(), "reasoning": "ok", "weighted_average": 1.0})
    verdict = parse_pointwise(text)
    expected = 0.25 * 4 + 0.20 * 3 + 0.25 * 5 + 0.15 * 2 + 0.15 * 4
    assert verdict.score == pytest.approx(expected)
    assert verdict.weighted_average == 1.0  # kept for the record only


@pytest.mark.parametrize("text", [
    "```json\n" + json.dumps({"scores": _rubric(), "reasoning": "r"}) + "\n```",
    "Sure! Here is my evaluation:\n" + json.dumps({"scores": _rubric()}) + "\nThanks.",
    "```\n" + json.dumps({"scores": _rubric(accuracy="4", completeness="3/5")}) + "\n```",
    json.dumps({"Scores": {"Accuracy": 4, "Completeness": 3, "Semantic Richness": 5,
                           "abstraction_level": 2, "Conciseness": "4.0"}}),
    json.dumps(_rubric()),  # the wrapper left out
    json.dumps({"scores": _rubric(accuracy={"score": 4, "why": "right"})}),
    '{"scores": {"accuracy": 4, "completeness": 3, "semantic_richness": 5, '
    '"abstraction": 2, "conciseness": 4,},}',  # trailing commas
])
def test_pointwise_survives_real_judges(text: str) -> None:
    verdict = parse_pointwise(text)
    assert verdict.scores.model_dump() == {"accuracy": 4.0, "completeness": 3.0,
                                           "semantic_richness": 5.0, "abstraction": 2.0,
                                           "conciseness": 4.0}


@pytest.mark.parametrize(("text", "complaint"), [
    ("", "empty"),
    ("I would rate this summary 4 out of 5.", "no JSON object"),
    ('{"scores": {"accuracy": 4, "completeness": 3', "no JSON object"),
    (json.dumps({"scores": _rubric(accuracy=7)}), "scores.accuracy"),
    (json.dumps({"scores": _rubric(conciseness="great")}), "scores.conciseness"),
    (json.dumps({"scores": {"accuracy": 4}}), "scores.completeness"),
    (json.dumps({"scores": _rubric(abstraction=True)}), "scores.abstraction"),
])
def test_pointwise_invalid_answers_say_why(text: str, complaint: str) -> None:
    with pytest.raises(InvalidVerdict, match=complaint):
        parse_pointwise(text)


@pytest.mark.parametrize(("winner", "expected"), [
    ("A", "A"), ("b", "B"), ("Summary A", "A"), (" tie ", "tie"), ("Tie.", "tie"),
    ("equal", "tie"), ("**B**", "B"),
])
def test_pairwise_winner_spellings(winner: str, expected: str) -> None:
    verdict = parse_pairwise(json.dumps({"winner": winner, "confidence": "HIGH"}))
    assert verdict.winner == expected
    assert verdict.confidence == "high"


def test_pairwise_breakdown_kept_and_partial() -> None:
    text = ("Comparing...\n```json\n" + json.dumps({
        "winner": "B", "confidence": "sure", "reasoning": "B names the side effects",
        "criteria_breakdown": {"accuracy": "B", "Completeness": "tie",
                               "searchability": "A"}}) + "\n```")
    verdict = parse_pairwise(text)
    assert verdict.winner == "B"
    assert verdict.confidence is None  # unrecognised, not invented
    assert verdict.criteria_breakdown.model_dump() == {
        "accuracy": "B", "completeness": "tie", "searchability": "A", "clarity": None,
        "conciseness": None}


@pytest.mark.parametrize("text", [
    '{"winner": "C"}', '{"confidence": "high"}', '{"winner": "A", "confidence": "hi',
    "A is better.",
])
def test_pairwise_invalid(text: str) -> None:
    with pytest.raises(InvalidVerdict):
        parse_pairwise(text)


def test_extract_json_prefers_the_fenced_object() -> None:
    text = 'The format {"x": 1} was asked.\n```json\n{"winner": "A"}\n```'
    assert extract_json(text) == {"winner": "A"}
