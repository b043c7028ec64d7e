"""The command sequence of docs/cli.md#the-summarybench-command, end to end, against the fake local
model server: each step's effect on the config, the store and the reports is checked.

The commands run as real subprocesses (``python -m pytest_summarybench.cli``), so the
path is the user's: argument parsing, pytest with the plugin, HTTP to 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.evaluators.judge.scripted import pairwise_json, pointwise_json
from tests.fakes.openai_server import FakeOpenAIServer

SENTINEL_KEY = "sk-cli-sequence-SENTINEL-0123456789"

CODE = {
    "billing/tax.py": '''
        def add_vat(net: float, rate: float = 0.2) -> float:
            """Add value-added tax to a net amount."""
            gross = net * (1 + rate)
            return round(gross, 2)


        def split_invoice(total: float, parts: int) -> list[float]:
            """Split an invoice total into equal instalments."""
            share = round(total / parts, 2)
            return [share] * (parts - 1) + [round(total - share * (parts - 1), 2)]
        ''',
    "billing/ledger.py": '''
        class Ledger:
            """An append-only ledger of customer payments."""

            def __init__(self) -> None:
                self.entries: list[tuple[str, float]] = []

            def record(self, customer: str, amount: float) -> None:
                """Append a payment for a customer."""
                self.entries.append((customer, amount))
                return None
        ''',
}


def respond(body: dict[str, Any]) -> str:
    """Summaries for the writer; rubric and tournament answers for the judges."""
    messages = body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    prompt = messages[-1]["content"]
    if "code documentation expert" in system:
        code = re.search(r"```[^\n]*\n(.*?)```", prompt, re.DOTALL)
        names = re.findall(r"[a-z]{4,}", code.group(1) if code else prompt)
        return "Handles " + ", ".join(dict.fromkeys(names[:8])) + "."
    summaries = re.findall(r"## Summary(?: to Evaluate| A| B)\n(.*?)\n\n", prompt, re.DOTALL)
    if "compare two summaries" in system:
        a, b = (len(s) for s in summaries[:2])
        return pairwise_json("A" if a > b else "B" if b > a else "tie")
    return pointwise_json(1 + min(4, len(summaries[0]) // 40) if summaries else 3)


def sb(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": SENTINEL_KEY, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run([sys.executable, "-m", "pytest_summarybench.cli", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, f"summarybench {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def rows(store: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(store) as conn:
        return conn.execute(sql).fetchall()


@pytest.mark.slow
def test_spec_11_1_sequence(tmp_path: Path) -> None:
    for rel, text in CODE.items():
        path = tmp_path / "code" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    with FakeOpenAIServer(respond=respond) as server:
        url = server.base_url
        sb(tmp_path, "init", "--name", "CLI sequence", "--codebase", "code")
        cfg = tmp_path / "summarybench.yaml"
        store = tmp_path / "summarybench-results" / "store.sqlite"
        assert cfg.is_file() and store.is_file()

        sb(tmp_path, "add-model", "openai/fake-writer", "--api-endpoint", url)
        sb(tmp_path, "add-model", "builtin/docstring")
        sb(tmp_path, "add-judge", "openai/fake-claude-judge", "--api-endpoint", url)
        sb(tmp_path, "add-judge", "openai/fake-gemini-judge", "--api-endpoint", url)
        sb(tmp_path, "config", "--sample-size", "50", "--eval", "judge,contrastive")
        text = cfg.read_text()
        assert "model: fake-writer" in text and "model: fake-gemini-judge" in text
        assert "sampleSize: 50" in text and "# How evaluator families combine" in text

        out = sb(tmp_path, "extract", "--languages", "python").stdout
        assert "python" in out and "units" in out

        sb(tmp_path, "generate", "--parallel", "2")
        linked = rows(store, "SELECT model_id, COUNT(*) FROM run_summaries "
                             "WHERE summary_id IS NOT NULL GROUP BY model_id")
        units = dict(linked)["builtin/docstring"]
        assert dict(linked) == {"builtin/docstring": units, "openai/fake-writer": units}
        calls_after_generate = server.successes
        assert calls_after_generate == units

        sb(tmp_path, "generate")
        assert server.successes == calls_after_generate  # resumed: nothing re-bought

        sb(tmp_path, "evaluate", "--only", "contrastive")
        evaluators = {e for (e,) in rows(store, "SELECT DISTINCT evaluator FROM records")}
        assert evaluators == {"contrastive/embedding"}
        assert server.successes == calls_after_generate

        sb(tmp_path, "evaluate", "--all")
        evaluators = {e for (e,) in rows(store, "SELECT DISTINCT evaluator FROM records")}
        assert {"judge/pointwise", "judge/pairwise", "contrastive/embedding"} <= evaluators
        calls_after_evaluate = server.successes
        assert calls_after_evaluate > calls_after_generate

        for fmt, name in (("json", "r.json"), ("markdown", "r.md"), ("html", "r.html")):
            sb(tmp_path, "report", "--format", fmt, "--output", name)
            assert (tmp_path / name).stat().st_size > 0
        assert server.successes == calls_after_evaluate  # reports call no model
        report = json.loads((tmp_path / "r.json").read_text())
        assert {r["modelId"] for r in report["rankings"]} == {"openai/fake-writer",
                                                              "builtin/docstring"}
        assert "Rankings" in (tmp_path / "r.md").read_text()

        cmp = sb(tmp_path, "compare", "openai/fake-writer", "builtin/docstring",
                 "--detailed").stdout
        assert "openai/fake-writer" in cmp and "builtin/docstring" in cmp

    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SENTINEL_KEY.encode() not in path.read_bytes(), path
