"""A small plugin project for the reliability scenarios: a codebase, a conftest with two
hook-provided evaluators and a ``summarybench.yaml`` whose models call a fake server.

``contrastive/embedding`` scores a unit from its summary alone; ``contrastive/llm`` asks
the judge model through the model layer (cache in the run's store), so a run exercises
generation and evaluation calls, both against the fake provider. A unit whose summary
could not be generated is recorded as an error with the generation's reason.
"""

from __future__ import annotations

import json
import sqlite3
import textwrap
from typing import Any

import pytest

from tests.fakes.project import write_bench_module

EVALUATORS = '''
    from pytest_summarybench.evaluators import EvaluationError, Evaluator
    from pytest_summarybench.llm import ModelCallError, complete
    from pytest_summarybench.schemas import ScoreRecord


    def _summary(item, ctx):
        summary = ctx.summary(item.unit_id, item.model_id)
        if summary is None:
            raise EvaluationError(ctx.summary_error(item.unit_id, item.model_id)
                                  or "no summary")
        return summary


    class FromSummary(Evaluator):
        name = "contrastive/embedding"
        family = "contrastive"

        def evaluate(self, item, ctx):
            text = _summary(item, ctx).summary.lower()
            hit = ctx.unit(item.unit_id).short_name.lower() in text
            return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                                evaluator=self.name, metrics={"correct": float(hit)})]


    class AskJudge(FromSummary):
        name = "contrastive/llm"

        def evaluate(self, item, ctx):
            summary = _summary(item, ctx)
            judge = ctx.judges[0]
            try:
                answer = complete(judge, [{"role": "user", "content":
                                           f"Does this describe {item.unit_id}? "
                                           f"{summary.summary}"}],
                                  cache=ctx.store, cache_tag="reliability", temperature=0,
                                  endpoints=ctx.endpoints)
            except ModelCallError as exc:
                raise EvaluationError(f"judge {exc}") from None
            return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                                evaluator=self.name,
                                metrics={"correct": float("Summary" in answer.text)})]


    def pytest_summarybench_evaluators(config):
        return [FromSummary(), AskJudge()]
'''


def function_source(i: int) -> str:
    return (f"def rule_{i}(price: float, rate: float = 0.{i % 9 + 1}) -> float:\n"
            f'    """Apply pricing rule {i}."""\n'
            f"    if rate < 0 or rate > 1:\n"
            f"        raise ValueError('rule {i}: rate out of range')\n"
            f"    return round(price * (1 - rate), 2)\n\n\n")


def make_project(pytester: pytest.Pytester, base_url: str, *, functions: int,
                 parallel: int = 4, timeout_s: float = 2.0) -> None:
    """Write the project: ``functions`` functions in modules of ten, one model under test
    and one judge, both ``openai/...`` at ``base_url`` (the key comes from the env)."""
    for start in range(0, functions, 10):
        path = pytester.path / "code" / f"rules_{start // 10}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(function_source(i)
                                for i in range(start, min(functions, start + 10))))
    pytester.makeconftest(textwrap.dedent(EVALUATORS))
    write_bench_module(pytester)
    pytester.makefile(".yaml", summarybench=textwrap.dedent(f"""
        name: reliability
        codebase:
          root: code
          languages: [python]
        extraction:
          types: [function]
        models:
          test:
            - {{provider: openai, model: gpt-4o-mini, apiEndpoint: "{base_url}",
                timeoutS: {timeout_s}}}
          judge:
            - {{provider: openai, model: gpt-4o, apiEndpoint: "{base_url}",
                timeoutS: {timeout_s}}}
        evaluation:
          sampling: all
          sampleSize: {functions}
          parallel: {parallel}
          judge: {{enabled: false}}
          retrieval: {{enabled: false}}
          downstream: {{enabled: false}}
        """))


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                         "-p", "no:randomly", "--sb-output", "out", *args)


def results(pytester: pytest.Pytester) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pytester.path / "out" / "results.json").read_text())
    return data


def store_rows(pytester: pytest.Pytester, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(pytester.path / "out" / "store.sqlite")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()
