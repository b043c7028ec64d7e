"""One scripted provider for the end-to-end perf scripts: it answers every kind of prompt
the benchmark sends (summaries, judge verdicts, contrastive picks, queries, downstream
tasks) the way the test suite's scripted models do, and logs when each request arrived,
by phase.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from tests.evaluators.downstream.scripted import ScriptedTaskModel
from tests.evaluators.judge.scripted import pairwise_json, pointwise_json, words
from tests.evaluators.test_llm_paths import lexical_judge, query_writer

PHASES = ("generation", "judge/pointwise", "judge/pairwise", "contrastive/llm",
          "retrieval/queries", "downstream")


def phase_of(body: dict[str, Any]) -> str:
    """Which phase of the benchmark sent the request."""
    messages = body.get("messages") or []
    last = str(messages[-1].get("content", "")) if messages else ""
    first = str(messages[0].get("content", "")) if messages else ""
    if messages and messages[0].get("role") == "system" and "summar" in first.lower() \
            and not any(m.get("role") == "assistant" for m in messages):
        if "Evaluate this code summary." not in last and "## Summary A" not in last:
            return "generation"
    text = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    if "Evaluate this code summary." in text:
        return "judge/pointwise"
    if "## Summary A" in text:
        return "judge/pairwise"
    if last.startswith("Given a code summary"):
        return "contrastive/llm"
    if "Function/Class:" in last:
        return "retrieval/queries"
    return "downstream"


class ScriptedProvider:
    """``respond`` for ``FakeOpenAIServer``; ``arrivals`` logs (monotonic time, phase)."""

    def __init__(self) -> None:
        self.tasks = ScriptedTaskModel()
        self.arrivals: list[tuple[float, str]] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        phase = phase_of(body)
        with self.lock:
            self.arrivals.append((time.monotonic(), phase))
        last = str(body["messages"][-1]["content"])
        if phase == "generation":
            fenced = re.search(r"```[^\n]*\n(.*?)```", last, re.DOTALL)
            vocab = list(dict.fromkeys(w for w in words(fenced.group(1) if fenced else last)
                                       if len(w) >= 4))
            # each model its own wording, so that no two models' prompts to a judge agree
            if "beta" in str(body.get("model", "")):
                vocab.reverse()
            return "Computes " + ", ".join(vocab[:12]) + "."
        if phase == "judge/pointwise":
            return pointwise_json(4)
        if phase == "judge/pairwise":
            return pairwise_json("A")
        if phase == "contrastive/llm":
            return lexical_judge(body)
        if phase == "retrieval/queries":
            return query_writer(body)
        return self.tasks(body)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(PHASES, 0)
        for _, phase in self.arrivals:
            out[phase] += 1
        return out
