"""What summarybench prints holds no pytest or library internals (issue 21, item 3): a dry
run and a generate-only session end with their own line, not pytest's ``Exit`` exception;
a dependency's warning that a user cannot act on stays out of the warnings summary of the
benchmark's tests, and only of those."""

from __future__ import annotations

import textwrap

import pytest

from tests.fakes.project import TAX_MODULE, write_bench_module, write_code

pytest_plugins = ["pytester"]

CODE = {"shop/tax.py": TAX_MODULE}

#: What pytest prints around an exception that ends a session, and its internal names.
INTERNALS = ("_pytest", "!!!!", "Exit:", "outcomes.")


def _run(pytester: pytest.Pytester, *args: str, families: str = "contrastive"
         ) -> pytest.RunResult:
    write_code(pytester, CODE)
    write_bench_module(pytester)
    return pytester.runpytest_subprocess(
        "-p", "summarybench", "-p", "no:cacheprovider", "--sb-codebase", "code",
        "--sb-eval", families, "--sb-output", "out", *args)


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["plain", "xdist"])
@pytest.mark.parametrize(("flag", "line"), [
    ("--sb-dry-run", "summarybench dry run: no model was called"),
    ("--sb-generate-only", "summarybench: summaries generated (--sb-generate-only)*"),
])
def test_a_session_that_ends_before_its_tests_says_so_in_its_own_words(
        pytester: pytest.Pytester, flag: str, line: str, mode: list[str]) -> None:
    result = _run(pytester, flag, *mode)
    assert result.ret == 0
    result.stdout.fnmatch_lines([line, "*no tests ran*"])
    out = result.stdout.str() + result.stderr.str()
    for needle in INTERNALS:
        assert needle not in out, needle
    # Nothing was evaluated: no report, and no claim that scoring failed.
    assert "no unit was scored" not in out
    assert not (pytester.path / "out" / "results.json").exists()


#: A real pydantic serializer warning, as litellm's response objects raise it when dumped
#: holding a value of another type than declared.
WARN = '''
    import pydantic


    class Usage(pydantic.BaseModel):
        tokens: int


    def serializer_warning():
        usage = Usage(tokens=1)
        usage.tokens = "many"  # no validation on assignment, as in litellm's objects
        usage.model_dump()
    '''


def test_dependency_warnings_stay_out_of_the_benchmarks_warnings_summary(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(warn_source=textwrap.dedent(WARN))
    pytester.makeconftest(textwrap.dedent('''
        from typing import ClassVar

        from pytest_summarybench.evaluators import Component, Evaluator
        from pytest_summarybench.schemas import ScoreRecord
        from warn_source import serializer_warning


        class Noisy(Evaluator):
            name: ClassVar[str] = "noisy/one"
            family: ClassVar[str] = "noisy"
            components: ClassVar[tuple[Component, ...]] = (
                Component(metric="one", weight="one", label="always one"),)

            def evaluate(self, item, ctx):
                serializer_warning()
                return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                                    evaluator=self.name, metrics={"one": 1.0})]


        def pytest_summarybench_evaluators(config):
            return [Noisy()]
        '''))
    # The user's own test, in the same session, still sees the warning: the filter is the
    # benchmark's, not the whole session's.
    pytester.makepyfile(test_mine=textwrap.dedent('''
        from warn_source import serializer_warning


        def test_mine():
            serializer_warning()
        '''))
    pytester.path.joinpath("summarybench.yaml").write_text("weights: {noisy: 0.1}\n")
    # Only the custom family runs: the judge family has no judge here.
    result = _run(pytester, "-W", "default", "--sb-no-validate", families="judge")
    result.assert_outcomes(passed=1 + 3 * 5)
    summary = result.stdout.str().split("warnings summary")[1].split("-- Docs")[0]
    assert "test_mine.py" in summary
    assert "test_bench.py" not in summary  # the benchmark's 15 items warned too
    assert summary.count("Pydantic serializer warnings") == 1
