"""The README's quickstart runs both benchmarks in one session (issue 21, item 7): the
code-summary ranking leads, and the compliance benchmark follows in a few lines (each
classifier's accuracy and macro-F1, its skipped LLM tests and why, where the full tables
are); ``-v`` or the benchmark's own run prints the full tables."""

from __future__ import annotations

import compliance_project as project
import pytest

#: A codebase of two documented functions for the code-summary benchmark.
CODE = '''
def to_fahrenheit(celsius):
    """Convert a temperature from degrees Celsius to degrees Fahrenheit."""
    return celsius * 9 / 5 + 32


def warmest(readings):
    """The highest of a list of temperature readings, or None when there are none."""
    return max(readings) if readings else None
'''

#: Lines of the full tables, absent from the compact summary.
TABLE_LINES = ("overall accuracy", "true \\ predicted", "framework  correct")


@pytest.fixture
def both(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with the compliance benchmark (in compliance/) and the code-summary one
    (its test module, the harness's, as benchmarks/summary holds it)."""
    (pytester.path / "compliance").mkdir()
    project.write_project(pytester.path / "compliance")
    (pytester.path / "code" / "weather").mkdir(parents=True)
    (pytester.path / "code" / "weather" / "temperature.py").write_text(CODE, encoding="utf-8")
    pytester.makepyfile(test_bench="from pytest_summarybench.suite.test_summary import "
                                   "test_summary  # noqa: F401\n")
    return pytester


#: Where no Ollama listens (the discard port: the connection is refused).
NO_OLLAMA = "http://127.0.0.1:9"


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "summarybench", "-p", "no:cacheprovider", "--sb-codebase", "code",
        "--sb-eval", "contrastive", "--compliance-test-mode",
        "--compliance-endpoint", NO_OLLAMA, *args)


def test_the_ranking_leads_and_the_compliance_benchmark_takes_a_few_lines(
        both: pytest.Pytester) -> None:
    result = _run(both)
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
        f"{NO_OLLAMA}*--compliance-no-llm*)",
        "the full tables: pytest -p summarybench_compliance benchmarks/compliance (or this "
        "run with -v); results: *eval_results.json",
        "*= 30 passed, 10 skipped in *",
    ], consecutive=False)
    out = result.stdout.str()
    section = out.split("= compliance benchmark =")[1].split("\n")[1:]
    assert len([line for line in section if not line.startswith("=")]) <= 4, section
    for line in TABLE_LINES:
        assert line not in out


def test_verbose_prints_the_full_tables(both: pytest.Pytester) -> None:
    result = _run(both, "-v")
    result.stdout.fnmatch_lines(["*= summarybench ranking =*", "*= compliance benchmark =*",
                                 "*overall accuracy*", "*true \\ predicted*"])


def test_the_benchmark_alone_prints_the_full_tables(both: pytest.Pytester,
                                                    ) -> None:
    result = _run(both, "compliance")
    result.stdout.fnmatch_lines(["*= compliance benchmark =*", "*overall accuracy*"])
    assert "summarybench ranking" not in result.stdout.str()
