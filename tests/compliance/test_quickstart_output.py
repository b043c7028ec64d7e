"""The README's quickstart runs both benchmarks in one session (issue 21, item 7): the
code-summary ranking leads, and the compliance benchmark follows in a few lines (each
classifier's accuracy and macro-F1, its skipped LLM tests and why, where the full tables
are); ``-v`` or the benchmark's own run prints the full tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.project import TAX_MODULE, write_bench_module, write_code

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "compliance"

CODE = {"shop/tax.py": TAX_MODULE}

#: Lines of the full tables, absent from the compact summary.
TABLE_LINES = ("overall accuracy", "true \\ predicted", "framework  correct")


@pytest.fixture
def both(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with the compliance benchmark (in compliance/) and the code-summary one."""
    (pytester.path / "compliance").mkdir()
    for name in ("conftest.py", "test_compliance.py", "eval_data.jsonl"):
        (pytester.path / "compliance" / name).write_text(
            (BENCH / name).read_text(encoding="utf-8"), encoding="utf-8")
    write_code(pytester, CODE)
    write_bench_module(pytester)
    return pytester


def _run(pytester: pytest.Pytester, port: int, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "summarybench", "-p", "no:cacheprovider", "--sb-codebase", "code",
        "--sb-eval", "contrastive", "--compliance-test-mode",
        "--compliance-endpoint", f"http://127.0.0.1:{port}", *args)


def test_the_ranking_leads_and_the_compliance_benchmark_takes_a_few_lines(
        both: pytest.Pytester, refusing_port: int) -> None:
    result = _run(both, refusing_port)
    # 10 compliance examples, 2 units x 5 built-in models, and the validity ladder (on by
    # default offline): 2 documented units x 5 ladder models
    result.assert_outcomes(passed=10 + 2 * 5 + 2 * 5, skipped=10)
    result.stdout.fnmatch_lines([
        "*= summarybench ranking =*",
        "rank  model*",
        "instrument validity: *",
        "*= compliance benchmark =*",
        "rule-scanner: accuracy *% [[]*], macro-F1 * [[]*] on 10 examples",
        "LLM classifier: not run, its 10 tests skipped (Ollama not reachable at "
        f"http://127.0.0.1:{refusing_port}*--compliance-no-llm*)",
        "the full tables: pytest -p summarybench_compliance benchmarks/compliance (or this "
        "run with -v); results: *eval_results.json",
        "*= 30 passed, 10 skipped in *",
    ], consecutive=False)
    out = result.stdout.str()
    section = out.split("= compliance benchmark =")[1].split("\n")[1:]
    assert len([line for line in section if not line.startswith("=")]) <= 4, section
    for line in TABLE_LINES:
        assert line not in out


def test_verbose_prints_the_full_tables(both: pytest.Pytester, refusing_port: int) -> None:
    result = _run(both, refusing_port, "-v")
    result.stdout.fnmatch_lines(["*= summarybench ranking =*", "*= compliance benchmark =*",
                                 "*overall accuracy*", "*true \\ predicted*"])


def test_the_benchmark_alone_prints_the_full_tables(both: pytest.Pytester,
                                                    refusing_port: int) -> None:
    result = _run(both, refusing_port, "compliance")
    result.stdout.fnmatch_lines(["*= compliance benchmark =*", "*overall accuracy*"])
    assert "summarybench ranking" not in result.stdout.str()
