"""A small plugin project for the attacks on the model layer: a codebase, the reliability
scenarios' two hook-provided evaluators (one reads summaries, one asks the judge through
the model layer), and a ``summarybench.yaml`` whose models call a scripted fake server
through deployments whose key comes from ``OPENAI_KEY_TEAM_A`` (docs/hosts.md's example: a
name that does not end like a secret's). Contrastive matching, the one built-in family
these sessions run, uses the lexical embedding: the attacks are on the model layer."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.fakes.project import write_bench_module, write_code
from tests.fakes.reliability_project import EVALUATORS, function_source

KEY_ENV = "OPENAI_KEY_TEAM_A"


def make_project(pytester: pytest.Pytester, base_url: str, *, functions: int = 4,
                 timeout_s: float = 5.0, max_tokens: int = 256) -> None:
    write_code(pytester, {"rules.py": "".join(function_source(i) for i in range(functions))})
    pytester.makeconftest(textwrap.dedent(EVALUATORS))
    write_bench_module(pytester)
    pytester.makefile(".yaml", summarybench=textwrap.dedent(f"""
        name: security
        codebase:
          root: code
          languages: [python]
        extraction:
          types: [function]
        models:
          test:
            - provider: openai
              model: gpt-4o-mini
              timeoutS: {timeout_s}
              maxTokens: {max_tokens}
              deployments:
                - {{apiEndpoint: "{base_url}", apiKeyEnv: {KEY_ENV}}}
          judge:
            - provider: openai
              model: gpt-4o
              timeoutS: {timeout_s}
              deployments:
                - {{apiEndpoint: "{base_url}", apiKeyEnv: {KEY_ENV}}}
        evaluation:
          sampling: all
          sampleSize: {functions}
          parallel: 2
          judge: {{enabled: false}}
          contrastive: {{embeddingModel: builtin/hashing}}
          retrieval: {{enabled: false}}
          downstream: {{enabled: false}}
        output:
          formats: [markdown, json, html]
        """))


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                         "-p", "no:randomly", "--sb-output", "out", *args)


def output_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]
