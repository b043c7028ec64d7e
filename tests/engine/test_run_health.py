"""Issue 33, "a broken run still ends complete with a winner": a run is healthy only when
every model under test summarized the sampled units, every family that was to run scored
most of its items and every judge gave verdicts. An unhealthy run says what is wrong
first, names no best model, leaves the output directory's reports as they were, and fails
a configured gate; it is still kept (``runs/<id>/``).

Both scenarios script real HTTP on 127.0.0.1 (``tests/fakes/openai_server.py``): a model
name the server does not know (HTTP 404, as OpenAI answers a misspelt model), and a judge
whose port refuses connections.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli_sequence import respond as writer_and_judge
from tests.evaluators.downstream.conftest import CODEBASE
from tests.evaluators.downstream.scripted import ScriptedTaskModel
from tests.fakes.openai_server import Reply
from tests.fakes.project import session_results, write_bench_module

#: What the output directory held before the run: an unhealthy run must leave it as is.
EARLIER = '{"earlier": "the reports of the last healthy run"}\n'
NO_SUMMARY = "[No summary available]"
#: Two offline models under test: their summaries never fail.
BUILT_IN = """
    - {provider: builtin, model: docstring}
    - {provider: builtin, model: identifiers}
    """


class Provider:
    """Two models under test (``lazy-codr`` unknown to the server: 404), a judge and a task
    model; keeps every prompt it was sent."""

    def __init__(self) -> None:
        self.tasks = ScriptedTaskModel()
        self.prompts: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str | Reply:
        model = str(body.get("model", ""))
        text = json.dumps(body.get("messages"))
        with self.lock:
            self.prompts.append(text)
        if model == "lazy-codr":
            return Reply("The model `lazy-codr` does not exist or you do not have access "
                         "to it.", status=404)
        if model == "task-7b":
            return self.tasks(body)
        return writer_and_judge(body)


def _project(pytester: pytest.Pytester, *, models: str, judge: str,
             downstream: str = "downstream: {enabled: false}") -> Path:
    write_bench_module(pytester)

    def listed(entries: str) -> str:
        return "\n".join("    " + line.strip() for line in entries.strip().splitlines())

    pytester.makefile(".yaml", summarybench="\n".join([
        "name: run-health",
        "codebase:",
        f"  root: {CODEBASE}",
        "  languages: [python]",
        "extraction:",
        "  types: [function, method]",
        "models:",
        "  test:",
        listed(models),
        "  judge:",
        listed(judge),
        "evaluation:",
        "  sampleSize: 8",
        "  judge: {pairwise: false}",
        # the lexical embedding: health is under test, not the embedding (MiniLM was
        # most of these sessions' CPU time)
        "  contrastive: {enabled: true, distractors: 3, embeddingModel: builtin/hashing}",
        "  retrieval: {enabled: false}",
        f"  {downstream}",
        "gate:",
        "  minOverall: 0.0",
        ""]))
    out = pytester.path / "out"
    out.mkdir()
    (out / "results.json").write_text(EARLIER)
    return out


def _good_coder_and(pytester: pytest.Pytester, url: str, other: str, *, task: str) -> Path:
    """A project of openai/good-coder and ``other`` (a YAML entry) at ``url``, a judge of
    its own family and the function-selection task done by ``task``."""
    return _project(
        pytester,
        models=f"""
            - {{provider: openai, model: good-coder, apiEndpoint: "{url}"}}
            - {other}
            """,
        judge=f'- {{provider: local, model: judge-7b, family: gamma, apiEndpoint: "{url}"}}',
        downstream=f"downstream: {{enabled: true, tasks: [function_selection], "
                   f"completionModel: {task}, apiEndpoint: \"{url}\"}}")


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                         "-p", "no:randomly", "--sb-output", "out", *args)


def _ranking_section(result: pytest.RunResult) -> list[str]:
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "summarybench ranking" in line)
    return lines[start + 1:]


def _assert_unhealthy(result: pytest.RunResult, out: Path, first: str) -> dict[str, Any]:
    section = _ranking_section(result)
    assert section[0].startswith("UNHEALTHY RUN"), "\n".join(section)
    assert first in section[0], section[0]
    text = result.stdout.str()
    for winner in ("Best overall", "No single best", "Best value"):
        assert winner not in text, text
    assert "GATE FAILED: " in text and "unhealthy" in text
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert (out / "results.json").read_text() == EARLIER       # left as it was
    data = session_results(result)                             # kept, in runs/<id>/
    assert data["metadata"]["run"]["complete"] is False
    health = data["metadata"]["health"]
    assert health["healthy"] is False and first in health["problems"][0]
    assert not data["recommendations"]
    assert data["gateFailures"]
    md = Path(re.search(r"^markdown report: (.+)$", text, re.M).group(1)).read_text()
    html = Path(re.search(r"^html report: (.+)$", text, re.M).group(1)).read_text()
    for report in (md, html):
        assert "Unhealthy run" in report and first in report
        assert "Best overall" not in report and "No single best" not in report
    assert md.index("Unhealthy run") < md.index("Rankings")
    return data


def test_a_misspelt_model_makes_the_run_unhealthy_and_is_never_sent_to_a_task(
        pytester: pytest.Pytester, fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-run-health")
    provider = Provider()
    server = fake_server(respond=provider)
    url = server.base_url
    out = _good_coder_and(pytester, url, '{provider: openai, model: lazy-codr, '
                                         f'apiEndpoint: "{url}"}}', task="local/task-7b")
    result = _run(pytester)
    data = _assert_unhealthy(result, out, "openai/lazy-codr produced no summary")
    assert "404" in data["metadata"]["health"]["problems"][0]
    # The model without a summary was never shown to the task model as one; its task
    # items are errors, and nothing was asked on its behalf.
    assert not any(NO_SUMMARY in p for p in provider.prompts)
    errors = {(e["modelId"], e["evaluator"]): e for e in data["errors"]}
    assert errors[("openai/lazy-codr", "downstream/function_selection")]["count"] > 0
    lazy = next(r for r in data["rankings"] if r["modelId"] == "openai/lazy-codr")
    assert lazy["scoredItems"] == 0
    assert "openai/lazy-codr" in result.stdout.str()


def test_a_dead_judge_makes_the_run_unhealthy_with_no_bias_verdict(
        pytester: pytest.Pytester, refusing_port: int, run_mode: list[str]) -> None:
    base = f"http://127.0.0.1:{refusing_port}/v1"
    out = _project(
        pytester,
        models=BUILT_IN,
        judge=f'- {{provider: local, model: judge-7b, apiEndpoint: "{base}"}}')
    result = _run(pytester, *run_mode)      # the same with two xdist workers
    data = _assert_unhealthy(result, out, "judge local/judge-7b gave no verdict")
    assert "connection refused" in data["metadata"]["health"]["problems"][0]
    text = result.stdout.str()
    assert "showed position or length bias" not in text
    # The judge family was to run and scored none of its items.
    assert any("judge scored 0 of" in p for p in data["metadata"]["health"]["problems"])


def test_a_healthy_run_says_so_and_replaces_the_reports(
        pytester: pytest.Pytester, fake_server: Any) -> None:
    server = fake_server(respond=writer_and_judge)
    out = _project(
        pytester,
        models=BUILT_IN,
        judge=f'- {{provider: local, model: judge-7b, apiEndpoint: "{server.base_url}"}}')
    result = _run(pytester)
    assert result.ret == 0, result.stdout.str()
    assert "UNHEALTHY" not in result.stdout.str()
    data = json.loads((out / "results.json").read_text())
    assert data["metadata"]["health"]["healthy"] is True
    assert data["metadata"]["health"]["problems"] == []
    assert data["metadata"]["run"]["complete"] is True


def test_a_task_model_of_some_tested_models_family_makes_the_run_unhealthy(
        pytester: pytest.Pytester, fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new user's pass on ``rich``: a task model of the openai family, like one of the
    two models under test, skips that model's downstream items (the family rule), so
    downstream drops out of its overall score; the run said only "scored for only some
    models" and stayed healthy with a winner."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-run-health")
    provider = Provider()
    server = fake_server(respond=provider)
    url = server.base_url
    out = _good_coder_and(pytester, url, "{provider: builtin, model: docstring}",
                          task="openai/task-7b")
    # The dry run, before anything is spent, says what the counted calls leave out.
    dry = _run(pytester, "--sb-dry-run")
    assert ("warning: task model openai/task-7b is of the same family (openai) as "
            "openai/good-coder") in dry.stdout.str(), dry.stdout.str()
    result = _run(pytester)
    data = _assert_unhealthy(result, out, "downstream scored none of the items of "
                                          "openai/good-coder")
    problem = data["metadata"]["health"]["problems"][0]
    assert "task model openai/task-7b is of the same family (openai)" in problem
    assert "summarybench set-model openai/good-coder --family NAME" in problem
    assert "--task-family NAME" in problem
    # The skipped line of the report says why, not only that some models lack the family.
    skipped = data["metadata"]["familiesSkipped"]["downstream in overall"]
    assert "not for openai/good-coder" in skipped and "same family (openai)" in skipped
