"""The compliance benchmark run as pytest runs it: a project's test module importing the
benchmark's tests, over the shipped dataset or a file of its own, in every run mode, with
the LLM disabled, missing, or served by a local fake Ollama."""

from __future__ import annotations

import textwrap
from typing import Any

import compliance_project as project
import pytest
from fake_ollama import FakeOllama

from summarybench_compliance.dataset import DATA_DIR


def _stable(results: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in results.items() if k not in ("timestamp", "avg_scan_time_ms")}


SEED_KEYS = {"timestamp", "num_examples", "rule_based_metrics", "per_article_metrics",
             "framework_accuracy", "confusion_matrix", "avg_scan_time_ms", "ollama_available"}


def test_test_mode_without_llm_in_every_run_mode(bench: pytest.Pytester,
                                                 run_mode: list[str]) -> None:
    result = project.run(bench, "--compliance-no-llm", "--compliance-test-mode", *run_mode)
    result.assert_outcomes(passed=10, skipped=10)
    result.stdout.fnmatch_lines([
        "*= compliance benchmark =*",
        "rule-scanner: 10 examples scored, 0 failed*",
        "*overall accuracy*",
        "*Art. 14*",
        "*true \\ predicted*",
        "LLM classifier: not run (disabled: --compliance-no-llm, or --no-ollama of "
        "`summarybench compliance`)",
        "compliance results written to *eval_results.json",
        "SKIPPED [[]10] *LLM classifier disabled: --compliance-no-llm*",
    ])
    results = project.results(bench.path)
    assert SEED_KEYS <= set(results)
    assert results["num_examples"] == 10
    assert results["ollama_available"] is False
    assert set(results["per_article_metrics"]) == {"9", "10", "11", "12", "14", "15"}
    assert results["confidence_intervals"]["overall_accuracy"][0] <= \
        results["rule_based_metrics"]["overall_accuracy"]


def test_results_identical_with_and_without_xdist(bench: pytest.Pytester) -> None:
    seen = []
    for args in (["-n", "0"], ["-n", "2"], ["-p", "no:xdist"]):
        project.run(bench, "--compliance-no-llm", *args).assert_outcomes(passed=54, skipped=54)
        seen.append(_stable(project.results(bench.path)))
    assert seen[0] == seen[1] == seen[2]
    assert seen[0]["num_examples"] == 54


def test_unreachable_ollama_skips_llm_tests_with_one_reason(bench: pytest.Pytester) -> None:
    result = project.run(bench, "--compliance-test-mode", "--compliance-endpoint", "http://127.0.0.1:9")
    result.assert_outcomes(passed=10, skipped=10)
    result.stdout.fnmatch_lines([
        "SKIPPED [[]10] *LLM classifier unavailable: Ollama not reachable at "
        "http://127.0.0.1:9*--compliance-no-llm*",
    ])
    results = project.results(bench.path)
    assert results["ollama_available"] is False
    assert "not reachable" in results["llm_unavailable_reason"]


def _oracle(answers: dict[str, str]) -> Any:
    """A fake model that answers from a table keyed by a line of the code."""
    def respond(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        for needle, answer in answers.items():
            if needle in prompt:
                return answer
        return "Hmm. ARTICLE: NONE\nSEVERITY: NONE"
    return respond


def test_llm_through_fake_ollama_with_disagreements(bench: pytest.Pytester,
                                                   run_mode: list[str]) -> None:
    # --compliance-test-mode picks lines 1, 6, 11, 17, 22, 28, 33, 38, 44 and 49 of
    # eval_data.jsonl
    respond = _oracle({"max_iterations=None": "ARTICLE: 12\nSEVERITY: LOW",
                       "def send_reminder": "**ARTICLE:** 14\n**SEVERITY:** Critical",
                       "/var/log/nginx": "I would rather not say."})
    with FakeOllama(respond=respond) as server:
        result = project.run(bench, "--compliance-test-mode", "--compliance-endpoint", server.url,
                      *run_mode)
        calls = len(server.chat_requests)
    result.assert_outcomes(passed=20)
    assert calls == 10
    result.stdout.fnmatch_lines([
        "ollama/air-compliance-v2: 10 examples scored, 0 failed, 1 unparsed answers*",
        "rule-scanner vs ollama/air-compliance-v2: * disagreements",
        "*langchain-art9-noncompliant-001*9*12*rule-scanner*",
    ])
    results = project.results(bench.path)
    assert results["ollama_available"] is True
    block = results["llm_models"]["ollama/air-compliance-v2"]
    assert block["num_scored"] == 10 and block["unparsed"] == 1
    assert block["per_article_metrics"]["14"]["recall"] == pytest.approx(0.5)
    assert block["confusion_matrix"]["15"] == {"unparsed": 1}
    assert block["metrics"]["severity_n"] == 2
    rows = results["disagreements"]["ollama/air-compliance-v2"]
    assert {"example": "langchain-art9-noncompliant-001", "truth": "9", "first": "9",
            "second": "12", "first_correct": True, "second_correct": False} in rows


def test_malformed_dataset_is_a_usage_error_naming_the_line(bench: pytest.Pytester) -> None:
    lines = (DATA_DIR / "eval_data.jsonl").read_text(encoding="utf-8").splitlines()
    lines[4] = lines[4].replace('"article": 9', '"article": 13')
    (bench.path / "broken.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = project.run(bench, "--compliance-no-llm", "--compliance-data", "broken.jsonl")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*broken.jsonl:5: metadata.article 13 is not one of*"])
    assert "Traceback" not in result.stdout.str()


def test_other_benchmarks_records_are_left_alone(bench: pytest.Pytester) -> None:
    bench.makepyfile(test_other=textwrap.dedent("""
        from pytest_summarybench.schemas import ScoreRecord

        def test_other(sb_record):
            sb_record(ScoreRecord(benchmark="other", unit_id="u", model_id="m",
                                  evaluator="e", metrics={"x": 1.0}))
    """))
    result = project.run(bench, "--compliance-no-llm", "test_other.py")
    result.assert_outcomes(passed=1)
    assert "compliance benchmark" not in result.stdout.str()
    assert not (bench.path / "summarybench-results" / "eval_results.json").exists()


def test_sb_output_chooses_the_directory(bench: pytest.Pytester) -> None:
    # --sb-output engages the summary benchmark's settings, which want its codebase.
    bench.mkdir("codebase")
    result = project.run(bench, "--compliance-no-llm", "--compliance-test-mode", "--sb-output",
                  "elsewhere", "--sb-codebase", "codebase")
    result.assert_outcomes(passed=10, skipped=10)
    assert project.results(bench.path, "elsewhere")["num_examples"] == 10


# -- how the plugins are enabled -------------------------------------------------------------
# The compliance benchmark is its own plugin (entry point summarybench_compliance), hosted on
# the harness (entry point summarybench). Both autoload; these runs turn autoloading off or
# block one of them, and check that the benchmark either runs or says what to pass.


def test_compliance_plugin_alone_brings_the_harness_with_autoload_off(
        bench: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = bench.runpytest_subprocess("-p", "summarybench_compliance", "-p",
                                        "no:cacheprovider", "--compliance-no-llm",
                                        "--compliance-test-mode")
    result.assert_outcomes(passed=10, skipped=10)
    result.stdout.fnmatch_lines(["*= compliance benchmark =*"])
    assert project.results(bench.path)["num_examples"] == 10


def test_harness_alone_says_which_plugin_to_add(bench: pytest.Pytester,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # -p summarybench enables the harness only: the summary plugin knows nothing of the
    # compliance benchmark. Its conftest then fails collection with what to pass.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = bench.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*the compliance benchmark needs its pytest plugin, which "
                                 "is not active: pass -p summarybench_compliance*"])
    assert "Traceback" not in result.stdout.str()


def test_blocked_harness_leaves_pytest_working_and_says_so(bench: pytest.Pytester) -> None:
    bench.makepyfile(test_plain="def test_plain():\n    assert True\n")
    plain = bench.runpytest_subprocess("-p", "no:summarybench", "-p", "no:cacheprovider",
                                       "test_plain.py")
    plain.assert_outcomes(passed=1)
    result = bench.runpytest_subprocess("-p", "no:summarybench", "-p", "no:cacheprovider",
                                        "--compliance-no-llm")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*records its scores through the summarybench harness, "
                                 "which is not active: pass -p summarybench*"])


def test_blocked_compliance_plugin_removes_its_options(bench: pytest.Pytester) -> None:
    result = bench.runpytest_subprocess("-p", "no:summarybench_compliance",
                                        "--compliance-no-llm")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unrecognized arguments: --compliance-no-llm*"])


@pytest.mark.parametrize(("args", "message"), [
    (["--compliance-model", "gpt-4o"], "*--compliance-model 'gpt-4o': model 'gpt-4o' is not "
                                       "of the form PROVIDER/MODEL*"),
    (["--compliance-model", "builtin/docstring"], "*builtin/* summarizers cannot classify*"),
    (["--compliance-endpoint", "localhost:11434"],
     "*--compliance-endpoint 'localhost:11434': expected an http(s) base URL*"),
])
def test_bad_model_or_endpoint_is_a_usage_error(bench: pytest.Pytester, args: list[str],
                                                message: str) -> None:
    result = project.run(bench, "--compliance-test-mode", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_structured_answers_through_fake_ollama(bench: pytest.Pytester) -> None:
    """The run asks Ollama for the answer schema (its ``format``) and reads the JSON."""
    import json as _json

    def respond(body: dict[str, Any]) -> str:
        assert isinstance(body.get("format"), dict)
        verdict = "15" if "eval(" in body["messages"][-1]["content"] else "NONE"
        return _json.dumps({"article": verdict,
                            "severity": "CRITICAL" if verdict != "NONE" else "NONE",
                            "finding": "scripted"})

    with FakeOllama(respond=respond) as server:
        result = project.run(bench, "--compliance-test-mode", "--compliance-endpoint", server.url)
        formats = [r.get("format") for r in server.chat_requests]
    result.assert_outcomes(passed=20)
    assert len(formats) == 10
    assert all(f["properties"]["article"]["enum"][-1] == "NONE" for f in formats)
    block = project.results(bench.path)["llm_models"]["ollama/air-compliance-v2"]
    assert block["num_scored"] == 10 and block["unparsed"] == 0


def test_stack_and_idiom_accuracy_with_intervals(pytester: pytest.Pytester) -> None:
    project.write_project(pytester.path)
    lines = (DATA_DIR / "independent_dev.jsonl").read_text(encoding="utf-8").splitlines()
    (pytester.path / "data.jsonl").write_text("\n".join(lines[:30]) + "\n",
                                              encoding="utf-8")
    result = project.run(pytester, "--compliance-no-llm", "--compliance-data", "data.jsonl")
    result.assert_outcomes(passed=30, skipped=30)
    result.stdout.fnmatch_lines(["*stack (framework)*95% CI (bootstrap)*",
                                 "*idiom*correct*total*accuracy*",
                                 "*hard negatives*"])
    results = project.results(pytester.path)
    stacks, idioms = results["stack_accuracy"], results["idiom_accuracy"]
    assert sum(s["total"] for s in stacks.values()) == 30
    assert sum(i["total"] for i in idioms.values()) == 30
    for group in (*stacks.values(), *idioms.values()):
        low, high = group["ci"]
        assert low <= group["accuracy"] <= high
        assert group["accuracy"] == pytest.approx(group["correct"] / group["total"])
