"""Figures of a finished run from its store: calls, tokens, latency, calls per minute and
how many judge and contrastive answers parse as valid structured output.

Every successful model call is a row of the response cache (``llm_cache``), so a run into
a fresh output directory has exactly its own calls there. Answers are read back with the
evaluators' own parsers. Used for docs/local-llm.md::

    python tests/llm/local/measure_run.py summarybench-results/local-llm/store.sqlite --wall 600
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from pytest_summarybench.evaluators.contrastive.llm import parse_selection
from pytest_summarybench.evaluators.judge.prompts import PAIRWISE_TAG, POINTWISE_TAG
from pytest_summarybench.evaluators.judge.verdicts import (
    InvalidVerdict,
    parse_pairwise,
    parse_pointwise,
)

#: cache tag -> (what it is, a parser that raises on an answer that is not valid).
PARSERS: dict[str, tuple[str, Callable[[str], Any]]] = {
    POINTWISE_TAG: ("judge pointwise", parse_pointwise),
    PAIRWISE_TAG: ("judge pairwise", parse_pairwise),
    "contrastive/llm": ("contrastive", lambda text: parse_selection(text, 1000)),
}


def measure(store: str, wall_s: float | None) -> dict[str, Any]:
    rows = sqlite3.connect(store).execute(
        "SELECT model_id, tag, json, created_at FROM llm_cache ORDER BY created_at").fetchall()
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for model_id, tag, payload, _ in rows:
        groups[(model_id, tag)].append(json.loads(payload))
    out: dict[str, Any] = {"calls": len(rows), "groups": []}
    if rows and wall_s:
        out["calls_per_minute"] = round(len(rows) / (wall_s / 60), 2)
    valid = checked = 0
    for (model_id, tag), answers in sorted(groups.items()):
        kind, parser = PARSERS.get(tag, ("generation" if "summar" in tag or "/" not in tag
                                         else tag, None))
        group: dict[str, Any] = {
            "model": model_id, "kind": kind, "calls": len(answers),
            "input_tokens": sum(a.get("input_tokens", 0) for a in answers),
            "output_tokens": sum(a.get("output_tokens", 0) for a in answers),
            "mean_latency_s": round(sum(a.get("latency_ms", 0) for a in answers)
                                    / len(answers) / 1000, 2)}
        if parser is not None:
            ok = 0
            for answer in answers:
                try:
                    parser(answer.get("text", ""))
                    ok += 1
                except (InvalidVerdict, ValueError):
                    pass
            group["valid"] = ok
            valid, checked = valid + ok, checked + len(answers)
        out["groups"].append(group)
    if checked:
        out["structured_valid"] = f"{valid}/{checked} ({valid / checked:.1%})"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--wall", type=float, help="wall-clock seconds of the run")
    args = parser.parse_args()
    print(json.dumps(measure(args.store, args.wall), indent=2))


if __name__ == "__main__":
    main()
