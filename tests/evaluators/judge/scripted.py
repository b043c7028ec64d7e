"""Scripted judges (and one scripted model under test) for the fake OpenAI server.

``ScriptedJudges`` is the ``respond`` callable given to ``FakeOpenAIServer``; it answers
by the requested model name:

- ``claude-position-judge`` always prefers the summary shown first and gives every
  summary 3 on every criterion;
- ``gpt-length-judge`` prefers the longer summary (by words) and scores rubric criteria
  by length;
- ``gemini-flaky-judge`` is competent (it prefers, and scores higher, the summary that
  shares more words with the code) but answers a third of its prompts, chosen by a hash
  of the prompt, with malformed JSON, also when asked again; its valid answers come in
  varied shapes (code fences with prose, numbers as strings, plain JSON);
- ``gpt-4o-mini`` is a model under test (generation requests): it summarizes from the
  identifiers in the code block of the prompt.

It logs every judge prompt it saw, so tests can compute the expected error rate and
check who judged what.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

POSITION = "claude-position-judge"
LENGTH = "gpt-length-judge"
FLAKY = "gemini-flaky-judge"
MODEL_UNDER_TEST = "gpt-4o-mini"
JUDGES = (POSITION, LENGTH, FLAKY)

_WORD = re.compile(r"[A-Za-z]+")
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def words(text: str) -> list[str]:
    """Lower-case words, identifiers split at underscores and camel case."""
    out: list[str] = []
    for token in _WORD.findall(text):
        out.extend(w.lower() for w in _CAMEL.findall(token))
    return out


def quality(code: str, summary: str) -> float:
    """Share of the summary's distinct words (3+ letters) that occur in the code."""
    vocab = set(words(code))
    said = {w for w in words(summary) if len(w) >= 3}
    return len(said & vocab) / len(said) if said else 0.0


def _between(text: str, start: str, end: str) -> str:
    i = text.index(start) + len(start)
    return text[i:text.index(end, i)]


@dataclass
class Prompt:
    """A judge prompt as the scripted judges read it."""

    kind: str
    """``pointwise`` or ``pairwise``."""
    code: str
    summaries: tuple[str, ...]
    """One summary, or A then B."""
    text: str

    @property
    def malformed(self) -> bool:
        """Whether the flaky judge garbles this prompt (every time it sees it)."""
        return int(hashlib.sha256(self.text.encode()).hexdigest(), 16) % 3 == 0


def read_prompt(text: str) -> Prompt:
    code = _between(text, "## Original Code\n```", "\n```\n")
    code = code.split("\n", 1)[1] if "\n" in code else ""
    if text.startswith("Evaluate this code summary."):
        summary = _between(text, "## Summary to Evaluate\n", "\n\n## Evaluation Criteria")
        return Prompt("pointwise", code, (summary,), text)
    a = _between(text, "## Summary A\n", "\n\n## Summary B\n")
    b = _between(text, "## Summary B\n", "\n\n## Comparison Criteria")
    return Prompt("pairwise", code, (a, b), text)


def pointwise_json(score: int, shape: int = 0, reasoning: str = "scripted") -> str:
    scores = {c: (str(score) if shape == 1 else score) for c in (
        "accuracy", "completeness", "semantic_richness", "abstraction", "conciseness")}
    body = json.dumps({"scores": scores, "reasoning": reasoning, "weighted_average": score},
                      indent=1)
    if shape == 1:
        return f"Here is my evaluation.\n```json\n{body}\n```\nI hope this helps."
    return body


def pairwise_json(winner: str, shape: int = 0, reasoning: str = "scripted") -> str:
    body = json.dumps({"winner": winner, "confidence": "high", "reasoning": reasoning,
                       "criteria_breakdown": {c: winner for c in (
                           "accuracy", "completeness", "searchability", "clarity",
                           "conciseness")}})
    if shape == 1:
        return f"After comparing both summaries:\n```json\n{body}\n```"
    return body


@dataclass
class ScriptedJudges:
    """The ``respond`` callable of the fake server (see the module docstring)."""

    seen: dict[str, list[Prompt]] = field(default_factory=dict)
    """judge model -> first-attempt prompts it received, in arrival order."""
    retries: dict[str, int] = field(default_factory=dict)
    """judge model -> follow-up requests after an unreadable answer."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict[str, Any]) -> str:
        model = str(body.get("model", ""))
        messages = body.get("messages") or []
        if model == MODEL_UNDER_TEST:
            request = str(messages[-1].get("content", ""))
            fenced = re.search(r"```[^\n]*\n(.*?)```", request, re.DOTALL)
            code = fenced.group(1) if fenced else request
            vocab = list(dict.fromkeys(w for w in words(code) if len(w) >= 4))[:12]
            return "Computes " + ", ".join(vocab) + "."
        prompt = read_prompt(str(messages[1]["content"]))
        with self.lock:
            if len(messages) > 2:
                self.retries[model] = self.retries.get(model, 0) + 1
            else:
                self.seen.setdefault(model, []).append(prompt)
        if model == POSITION:
            return pairwise_json("A") if prompt.kind == "pairwise" else pointwise_json(3)
        if model == LENGTH:
            sizes = [len(s.split()) for s in prompt.summaries]
            if prompt.kind == "pointwise":
                return pointwise_json(max(1, min(5, 1 + sizes[0] // 5)))
            winner = "tie" if sizes[0] == sizes[1] else "A" if sizes[0] > sizes[1] else "B"
            return pairwise_json(winner)
        if model == FLAKY:
            return self._flaky(prompt)
        raise AssertionError(f"no script for model {model!r}")

    @staticmethod
    def _flaky(prompt: Prompt) -> str:
        if prompt.malformed:
            return ('{"winner": "A", "confidence": "hi' if prompt.kind == "pairwise"
                    else "The summary is decent, I would give it a 4 overall.")
        shape = int(hashlib.sha256(prompt.text.encode()).hexdigest(), 16) % 2
        q = [quality(prompt.code, s) for s in prompt.summaries]
        if prompt.kind == "pointwise":
            return pointwise_json(1 + round(4 * q[0]), shape)
        winner = "tie" if abs(q[0] - q[1]) < 1e-9 else "A" if q[0] > q[1] else "B"
        return pairwise_json(winner, shape)
