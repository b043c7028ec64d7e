"""Attacks through the queries file and the task files (issue 18, item 10).

Each test puts one bad line after a good one and runs the benchmark. What must hold
afterwards: the run stops with exit code 4 and one line naming the file, the line and the
field (the promise of docs/evaluators.md) instead of skipping the family with exit 0; the line is
bounded (length, nesting) before it is parsed; no traceback, no INTERNALERROR.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.fakes.project import write_bench_module, write_code

CODE = {"shop/pricing.py": '''
    def apply_discount(price: float, pct: float) -> float:
        """Reduce a price by a percentage discount, never below zero."""
        cut = price * pct / 100
        return max(price - cut, 0.0)
    '''}


def _run_with(pytester: pytest.Pytester, name: str, data: bytes,
              evaluation: str) -> tuple[Path, pytest.RunResult]:
    """Write the codebase, ``name`` holding ``data`` and a configuration whose evaluation
    section is ``evaluation`` (the other families off); run the benchmark."""
    write_code(pytester, CODE)
    write_bench_module(pytester)
    path = pytester.path / name
    path.write_bytes(data)
    pytester.makefile(".yaml", summarybench=textwrap.dedent("""
        name: input-file-attack
        codebase: {root: code, languages: [python]}
        extraction: {minLines: 2, types: [function]}
        evaluation:
          sampling: all
          judge: {enabled: false}
          contrastive: {enabled: false}
        """) + textwrap.indent(textwrap.dedent(evaluation), "  "))
    result = pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                           "--sb-output", "out", timeout=300)
    return path, result


GOOD_QUERY = json.dumps({"path": "shop/pricing.py", "name": "apply_discount",
                         "type": "vague", "query": "money off"})


def _assert_stopped(result: pytest.RunResult, *needles: str) -> None:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    text = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in text and "INTERNALERROR" not in text
    assert "skipped" not in result.stdout.str()
    errors = [line for line in result.stderr.lines if line.startswith("ERROR: summarybench:")]
    assert len(errors) == 1, text
    for needle in needles:
        assert needle in errors[0], errors[0]
    assert len(errors[0]) < 600


@pytest.mark.parametrize(("bad_line", "needle"), [
    (json.dumps({"path": "shop/pricing.py", "name": "apply_discount", "type": "vague"}),
     "field 'query': missing"),
    (json.dumps({"path": "shop/pricing.py", "name": "apply_discount", "type": "vague",
                 "query": ["not", "text"]}), "field 'query': expected a non-empty string"),
    ('{"path": "shop/pricing.py", "name": ', "not valid JSON"),
    ("[" * 50_000 + "]" * 50_000, "nested deeper than 100 levels"),
    (json.dumps({"path": "a", "name": "b", "type": "vague", "query": "x" * 2_000_000}),
     "characters; at most 1048576"),
], ids=["missing-field", "wrong-type", "broken-json", "deep", "huge-line"])
def test_a_malformed_queries_line_stops_the_run(pytester: pytest.Pytester, bad_line: str,
                                                needle: str) -> None:
    # Payload: one bad line after a good one in retrieval.queriesFile. Before: the
    # retrieval family was skipped ("1 skipped", reason only with -rs) and pytest exited 0.
    path, result = _run_with(pytester, "queries.jsonl",
                             (GOOD_QUERY + "\n" + bad_line + "\n").encode(), """
        downstream: {enabled: false}
        retrieval: {queriesFile: queries.jsonl, embeddingModel: builtin/hashing}
        """)
    _assert_stopped(result, f"retrieval/embedding: {path}:2: ", needle)


GOOD_TASK = json.dumps({"type": "function_selection", "id": "fs-1", "description": "d",
                        "correct": {"path": "shop/pricing.py", "name": "apply_discount"},
                        "candidates": [{"path": "shop/pricing.py",
                                        "name": "apply_discount"}]})


@pytest.mark.parametrize(("bad_line", "needle"), [
    (b'{"type": "function_selection", "id": "fs-2", "description": "caf\xe9"}',
     ":2: field '(file)': not valid UTF-8 (byte 0xe9)"),
    (b"[" * 50_000 + b"]" * 50_000, ":2: field '(line)': nested deeper than 100 levels"),
    (json.dumps({"type": "function_selection", "id": "fs-2", "description": "d",
                 "correct": {"path": "shop/pricing.py", "name": "apply_discount"},
                 "candidates": []}).encode(), ":2: field 'candidates': the candidate list "
                                              "is empty"),
], ids=["not-utf8", "deep", "empty-candidates"])
def test_a_malformed_task_line_stops_the_run(pytester: pytest.Pytester, bad_line: bytes,
                                             needle: str) -> None:
    # Payload: one bad line in evaluation.downstream.tasksFile. Before: a line that is
    # not UTF-8 or is nested too deeply skipped the downstream family with exit 0
    # (docs/evaluators.md says a bad task line stops the run, naming the file, the line
    # and the field).
    path, result = _run_with(pytester, "tasks.jsonl",
                             GOOD_TASK.encode() + b"\n" + bad_line + b"\n", """
        retrieval: {enabled: false}
        downstream:
          completionModel: local/task-model
          apiEndpoint: http://127.0.0.1:9/v1
          tasksFile: tasks.jsonl
          buildTasks: false
        """)
    _assert_stopped(result, f"{path}{needle}")
