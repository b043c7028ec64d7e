"""Issues 21 and 33: the new user's flow, as subprocesses, on a codebase of its own (not
the sample), with no API key at all (every model is at a local endpoint) and never an edit
of summarybench.yaml by hand: init, add-model, doctor (which finds a misspelt model),
remove-model, add-judge (with the same-family warning, then following its advice with
set-model), config (sampling, families, the task model, the contrastive methods),
extract, generate --dry-run, evaluate, a ``-k`` partial run, runs, report, compare,
validate (priced first, made with --yes).

Checked on the way: no complete run's results are replaced by the partial run or the
validity ladder, each kept run can be found again by a prefix of its id, and none of the
output the issue found in the way (pytest or library internals, a 900-character skip
line, arguments after ``--`` refused) appears in anything printed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.settings import load_settings
from tests.cli.test_cli_sequence import respond
from tests.fakes.openai_server import FakeOpenAIServer, Reply

CODE = {
    "inventory/stock.py": '''
        """Stock levels of a small warehouse."""

        class Stock:
            """Quantities on hand per SKU, never negative."""

            def __init__(self) -> None:
                self.levels: dict[str, int] = {}

            def receive(self, sku: str, quantity: int) -> int:
                """Add delivered items to a SKU and return the new level."""
                self.levels[sku] = self.levels.get(sku, 0) + quantity
                return self.levels[sku]

            def ship(self, sku: str, quantity: int) -> int:
                """Take items out for an order; refuse to go below zero."""
                have = self.levels.get(sku, 0)
                if quantity > have:
                    raise ValueError(f"only {have} of {sku} in stock")
                self.levels[sku] = have - quantity
                return self.levels[sku]


        def reorder_list(stock: Stock, minimum: int) -> list[str]:
            """SKUs whose level fell below the reorder minimum, sorted."""
            return sorted(s for s, q in stock.levels.items() if q < minimum)
        ''',
    "inventory/pricing.py": '''
        def unit_price(cost: float, margin: float) -> float:
            """Selling price of one item from its cost and a margin in percent."""
            return round(cost * (1 + margin / 100), 2)


        def bulk_discount(quantity: int) -> float:
            """Discount rate for an order of this many items."""
            if quantity >= 100:
                return 0.1
            if quantity >= 10:
                return 0.05
            return 0.0


        def order_total(cost: float, margin: float, quantity: int) -> float:
            """Total price of an order after the bulk discount."""
            price = unit_price(cost, margin) * quantity
            return round(price * (1 - bulk_discount(quantity)), 2)
        ''',
    "web/cart.js": '''
        // The shopping cart of the web shop.
        function addItem(cart, sku, quantity) {
          const line = cart.lines.find((l) => l.sku === sku);
          if (line) { line.quantity += quantity; } else { cart.lines.push({ sku, quantity }); }
          return cart;
        }

        function cartSize(cart) {
          return cart.lines.reduce((n, l) => n + l.quantity, 0);
        }

        module.exports = { addItem, cartSize };
        ''',
}

#: What the issue saw printed and a user must not see (internals, refusals, long lines).
FORBIDDEN = ["_pytest", "!!!!!!!", "Handle with litellm", "ssl:<", "object at 0x",
             "UserWarning", "Traceback", "unrecognized arguments", "eligible judges of"]


def answer(body: dict[str, Any]) -> str | Reply:
    """The models of the flow: a misspelt one (404), doctor's questions, the helper's
    contrastive picks, the task model's choices, and summaries and verdicts."""
    prompt = str(body["messages"][-1]["content"])
    if body["model"] == "fake-alpah":
        return Reply("The model `fake-alpah` does not exist.", status=404)
    if prompt.startswith("Reply with exactly this JSON object"):
        return '{"ok": true}'
    if prompt.startswith("Reply with the single word"):
        return "ok"
    if "identify which code snippet it describes" in prompt:
        return json.dumps({"selected": 1, "confidence": "low", "reasoning": "the first"})
    if prompt.startswith("You need to accomplish a task"):
        first = re.search(r"^### (.+)$", prompt, re.M)
        return json.dumps({"selected_function": first.group(1) if first else "",
                           "confidence": "low", "reasoning": "the first listed"})
    return respond(body)


class Flow:
    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.printed: list[str] = []

    def sb(self, *args: str, code: int | tuple[int, ...] = 0) -> subprocess.CompletedProcess[str]:
        # No key at all: every model is served at 127.0.0.1 and needs none.
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        env.pop("PYTEST_ADDOPTS", None)
        proc = subprocess.run([sys.executable, "-m", "pytest_summarybench.cli", *args],
                              cwd=self.cwd, env=env, capture_output=True, text=True,
                              timeout=600)
        self.printed.append(f"$ summarybench {' '.join(args)}\n{proc.stdout}\n{proc.stderr}")
        codes = (code,) if isinstance(code, int) else code
        assert proc.returncode in codes, self.printed[-1][-4000:]
        return proc


@pytest.mark.slow
def test_a_new_user_goes_from_init_to_compare_without_losing_a_run(tmp_path: Path) -> None:
    for rel, text in CODE.items():
        path = tmp_path / "shop" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    flow = Flow(tmp_path)
    out = tmp_path / "summarybench-results"
    with FakeOpenAIServer(respond=answer) as server:
        url = server.base_url
        flow.sb("init", "--name", "Shop", "--codebase", "shop")
        config = tmp_path / "summarybench.yaml"
        added = flow.sb("add-model", "openai/fake-alpah", "--api-endpoint", url)
        assert "will need the environment variable" not in added.stderr  # a local endpoint
        flow.sb("add-model", "openai/fake-beta", "--api-endpoint", url)

        # doctor asks each model one question: the misspelt name is found before a run.
        checked = flow.sb("doctor", code=1)
        assert "FAIL openai/fake-alpah (model under test): model not found: HTTP 404" \
            in checked.stdout
        assert "ok   openai/fake-beta (model under test)" in checked.stdout
        flow.sb("remove-model", "openai/fake-alpah")
        flow.sb("add-model", "openai/fake-alpha", "--api-endpoint", url)

        # A judge of the tested models' family: warned at once, with the way out, which
        # works when followed.
        warned = flow.sb("add-judge", "openai/fake-judge", "--api-endpoint", url)
        assert "warning" in warned.stderr and "openai" in warned.stderr
        advice = re.search(r"`(summarybench set-model openai/fake-judge --family NAME)`",
                           warned.stderr)
        assert advice, warned.stderr
        text = config.read_text()
        assert text.index("model: fake-beta") < text.index("# Judges") \
            < text.index("model: fake-judge")  # each entry in its own list
        flow.sb(*advice.group(1).split()[1:-1], "gamma")
        quiet = flow.sb("add-judge", "openai/fake-judge-2", "--api-endpoint", url,
                        "--family", "delta")
        assert "warning" not in quiet.stderr

        configured = flow.sb("config", "--sample-size", "8", "--eval",
                             "judge,contrastive,downstream", "--contrastive-methods",
                             "embedding,llm", "--task-model", "local/fake-task",
                             "--task-endpoint", url, "--tasks", "function_selection")
        assert "family" not in configured.stderr  # the rule is satisfied now
        settings = load_settings(config, families=BUILTIN_FAMILIES)
        assert settings.evaluation.contrastive.methods == ["embedding", "llm"]
        assert settings.evaluation.downstream.completion_model == "local/fake-task"
        assert [m.id for m in settings.models.test] == ["openai/fake-beta",
                                                        "openai/fake-alpha"]
        assert settings.models.judge[0].family == "gamma"
        checked = flow.sb("doctor")
        assert "ok   openai/fake-judge (judge, helper)" in checked.stdout
        assert "ok   local/fake-task (task model)" in checked.stdout
        assert checked.stdout.splitlines()[-1] == "doctor: 6 of 6 answered as the run needs"

        extracted = flow.sb("extract")
        assert "units" in extracted.stdout

        asked = server.successes               # doctor's questions
        dry = flow.sb("generate", "--dry-run")
        assert server.successes == asked
        assert "calls" in dry.stdout + dry.stderr

        evaluated = flow.sb("evaluate", "--all")
        assert "UNHEALTHY" not in evaluated.stdout
        top = out / "results.json"
        complete = json.loads(top.read_text())
        run_id = complete["metadata"]["run"]["id"]
        assert complete["metadata"]["run"]["complete"] is True
        assert {r["modelId"] for r in complete["rankings"]} == {"openai/fake-alpha",
                                                                "openai/fake-beta"}
        assert {"judge", "contrastive", "downstream"} <= set(complete["metadata"]["familiesRun"])
        assert complete["metadata"]["health"]["healthy"] is True
        kept = top.read_bytes()

        # A -k selection is a partial run: kept apart, labelled, the complete one stays.
        partial = flow.sb("evaluate", "--all", "--", "-k", "fake-alpha and not fake-beta")
        assert "PARTIAL RUN" in partial.stdout
        assert top.read_bytes() == kept
        listed = flow.sb("runs").stdout
        ids = re.findall(r"^[* ] ([0-9a-f]{12})\s", listed, re.M)
        assert len(ids) == 2 and run_id in ids, listed
        assert "complete" in listed and "partial" in listed
        partial_id = next(i for i in ids if i != run_id)
        # `summarybench runs | head -1`: the reader leaves early, no traceback.
        piped = subprocess.Popen([sys.executable, "-m", "pytest_summarybench.cli", "runs"],
                                 cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert piped.stdout is not None and piped.stderr is not None
        piped.stdout.close()
        assert piped.wait(timeout=120) == 0
        assert "Traceback" not in piped.stderr.read().decode()
        shown = json.loads((out / "runs" / partial_id / "results.json").read_text())
        assert shown["metadata"]["run"]["complete"] is False

        # Arguments after -- reach pytest (--lf here: the last failures, none).
        flow.sb("evaluate", "--only", "judge", "--", "--lf", code=(0, 5))
        assert top.read_bytes() == kept

        # Reports and comparisons find runs by a prefix of their id and by name parts.
        flow.sb("report", "--run", partial_id[:6], "--format", "json", "-o", "partial.json")
        assert json.loads((tmp_path / "partial.json").read_text())["metadata"]["run"][
            "id"] == partial_id
        flow.sb("report", "--format", "html", "-o", "report.html")
        html = (tmp_path / "report.html").read_text()
        assert "Key findings" in html and "fake-alpha" in html
        compared = flow.sb("compare", "alpha", "beta").stdout
        assert "openai/fake-alpha" in compared and "openai/fake-beta" in compared

        # The validity ladder is its own (partial) run: the complete run stays the default.
        # It calls the judges: priced first, made only when asked (no terminal: --yes).
        priced = flow.sb("validate", code=1)
        assert "summarybench dry run" in priced.stdout and "pass --yes" in priced.stderr
        flow.sb("validate", "--yes", code=(0, 1))
        assert top.read_bytes() == kept
        compared = flow.sb("compare", "fake-alpha", "fake-beta").stdout
        assert "openai/fake-alpha" in compared
        assert (out / "runs" / run_id / "results.json").is_file()

    printed = "\n".join(flow.printed)
    for text in FORBIDDEN:
        assert text not in printed, f"{text!r} printed:\n" + next(
            p for p in flow.printed if text in p)[-3000:]
    for line in printed.splitlines():
        if line.startswith(("skipped judge", "  skipped judge")):
            assert len(line) <= 240, line
