"""Attack: a provider (the model under test or a judge) answers with hostile content: JSON
nested 10,000 deep, 5,000-digit numbers, megabytes of braces, a summary of megabytes,
a body that is not UTF-8, escape sequences. Each is a bounded, named failure (an invalid
verdict taking the re-ask path, a rejected answer), never a traceback, a quadratic parse,
a 5xx retried six times or an unbounded page."""

from __future__ import annotations

import json
import re
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.evaluators.judge.prompts import PAIRWISE_SYSTEM_PROMPT
from pytest_summarybench.evaluators.judge.verdicts import (
    InvalidVerdict,
    extract_json,
    parse_pointwise,
)
from pytest_summarybench.llm import ModelCallError, RetryPolicy, complete
from pytest_summarybench.schemas import ModelConfig
from pytest_summarybench.store import Store
from tests.evaluators.judge.scripted import pointwise_json
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.project import write_bench_module, write_code
from tests.fakes.security_project import KEY_ENV, make_project, run

FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)
DEEP = '{"scores": ' + "[" * 10_000 + "]" * 10_000 + "}"
HUGE_NUMBER = '{"winner": "A", "confidence": ' + "9" * 5000 + "}"


@pytest.mark.parametrize(("payload", "complaint"), [
    (DEEP, "nests deeper than 64"),
    ('{"a": ' * 100_000 + "1" + "}" * 100_000, "characters, more than"),
    (HUGE_NUMBER, "5,000 characters"),
    ('{"scores": {"accuracy": NaN}}', "NaN"),
    ("{" * 200_000, "characters, more than"),
])
def test_hostile_judge_json_is_an_invalid_verdict(payload: str, complaint: str) -> None:
    with pytest.raises(InvalidVerdict, match=complaint):
        parse_pointwise(payload)


@pytest.mark.parametrize("payload", [
    "{" * 90_000,                             # depth, found in one pass
    '{"' * 45_000,                            # an unclosed string at every level
    "{}" * 45_000,                            # 45,000 candidates
    " {x} " * 18_000 + '{"winner": "B"}',     # prose braces before the object
    "```\n" * 24_000,                         # fences that never hold JSON
    '{"a": 1' + "," * 90_000 + "}",           # a run of commas for the trailing-comma fix
])
def test_extract_json_is_linear_on_adversarial_text(payload: str) -> None:
    """Payload: ~90 KB built to make a naive scanner quadratic (the base took 16.7 s on
    200 KB of ``{``); it must take well under 2 s of CPU here (it takes milliseconds). CPU
    time, not wall time: on a loaded machine the wall clock failed it at 2.04 s."""
    started = time.process_time()
    try:
        extract_json(payload)
    except InvalidVerdict:
        pass
    assert time.process_time() - started < 2.0


def test_200_kb_of_braces_is_refused_fast() -> None:
    started = time.process_time()
    with pytest.raises(InvalidVerdict):
        extract_json("{" * 200_000)
    assert time.process_time() - started < 2.0


def test_real_judge_shapes_still_read() -> None:
    assert extract_json('Sure. {note} then ```json\n{"winner": "A",}\n``` ok') == {"winner": "A"}
    assert extract_json('I use { a lot. {"winner": "B", "why": "a } in a string"}') == {
        "winner": "B", "why": "a } in a string"}


def _hostile_judge(body: dict[str, Any]) -> str:
    """Pairwise: a 5,000-digit number, every time. Pointwise: JSON nested 10,000 deep,
    then a valid verdict when asked again."""
    messages = body["messages"]
    if messages[0]["content"] == PAIRWISE_SYSTEM_PROMPT:
        return HUGE_NUMBER
    return DEEP if len(messages) <= 2 else pointwise_json(4)


def test_hostile_judge_answers_take_the_reask_path_end_to_end(
        pytester: pytest.Pytester, fake_server: Any) -> None:
    """Payload: a judge answering pointwise prompts with JSON nested 10,000 deep and
    pairwise prompts with a 5,000-digit number. Afterwards no test failed with a
    traceback: pointwise items pass on the re-ask, pairwise items fail as the judge's
    invalid output, each after exactly two answers."""
    server: FakeOpenAIServer = fake_server(respond=_hostile_judge)
    write_code(pytester, {f"m{i}.py": f'''
        def rule_{i}(price: float) -> float:
            """Apply pricing rule {i}."""
            return price * 0.{i + 1}
        ''' for i in range(3)})
    write_bench_module(pytester)
    pytester.makefile(".yaml", summarybench=textwrap.dedent(f"""
        name: hostile-judge
        codebase: {{root: code, languages: [python]}}
        extraction: {{types: [function], minLines: 2}}
        models:
          test:
            - {{provider: builtin, model: docstring}}
            - {{provider: builtin, model: shuffled}}
          judge:
            - {{provider: local, model: hostile-judge, apiEndpoint: "{server.base_url}"}}
        evaluation:
          sampling: all
          judge: {{bootstrapSamples: 50}}
          contrastive: {{enabled: false}}
          retrieval: {{enabled: false}}
          downstream: {{enabled: false}}
        """))
    result = run(pytester)
    text = result.stdout.str() + result.stderr.str()
    for crash in ("INTERNALERROR", "Traceback", "RecursionError", "ValueError"):
        assert crash not in text, crash
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) > 0 and outcomes.get("failed", 0) > 0, text
    result.stdout.fnmatch_lines(["*judge local/hostile-judge invalid_output: *no valid verdict "
                                 "in 2 answers (a number in the JSON has 5,000 characters*"])
    results = json.loads((pytester.path / "out" / "results.json").read_text())
    failed = sum(e["count"] for e in results["errors"])
    assert failed == outcomes["failed"]
    # Every item was asked once and asked again once, never more.
    assert server.chat_requests == 2 * (outcomes["passed"] + outcomes["failed"])


def _raw_completion(content: bytes) -> bytes:
    return (b'{"id": "x", "object": "chat.completion", "created": 1, "model": "m", '
            b'"choices": [{"index": 0, "finish_reason": "stop", "message": '
            b'{"role": "assistant", "content": "' + content + b'"}}], '
            b'"usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}')


def test_a_body_that_is_not_utf8_is_a_rejected_answer_tried_twice(fake_server: Any) -> None:
    """Payload: a 200 whose JSON body holds the bytes 0xff 0xfe. It was an "HTTP 500"
    retried six times; it is a rejected answer, retried once, and nothing is cached."""
    server: FakeOpenAIServer = fake_server(
        respond=lambda body: Reply("", raw=_raw_completion(b"abc \xff\xfe def")))
    model = ModelConfig(provider="local", model_name="m", api_endpoint=server.base_url)
    with pytest.raises(ModelCallError) as info:
        complete(model, [{"role": "user", "content": "hi"}], retry_policy=FAST)
    assert "not valid UTF-8" in info.value.reason and "500" not in info.value.reason
    assert info.value.status is None
    assert server.chat_requests == 2


def test_an_answer_far_longer_than_max_tokens_is_rejected_and_not_cached(
        fake_server: Any, tmp_path: Any) -> None:
    # 1 MB: refused by its length before it is read (llm/transport.py); 100,000
    # characters: within the body's limit, refused as an answer (llm/answers.py).
    for words, says in ((200_000, r"rejected answer: the answer is 1,000,\d{3} bytes \(its "
                                  r"Content-Length\), more than the 202,240 bytes"),
                        (20_000, "rejected answer: the answer is 99,999 characters, more "
                                 "than 11,392")):
        server: FakeOpenAIServer = fake_server(respond=lambda body, n=words: "word " * n)
        model = ModelConfig(provider="local", model_name="m", api_endpoint=server.base_url,
                            max_tokens=100)
        store = Store(tmp_path / f"{words}.sqlite")
        with pytest.raises(ModelCallError, match=says):
            complete(model, [{"role": "user", "content": "hi"}], cache=store,
                     retry_policy=FAST)
        assert server.chat_requests == 2
        assert store.execute("SELECT COUNT(*) FROM llm_cache") == [(0,)]


def _generation(body: dict[str, Any]) -> str:
    """The model under test: a 3 MB summary for rule_0, escape sequences for rule_1."""
    prompt = body["messages"][-1]["content"]
    if body.get("model") != "gpt-4o-mini":
        return "Summary"
    if "def rule_0(" in prompt:
        return "Summary " + "A" * 3_000_000
    if "def rule_1(" in prompt:
        return "Applies rule 1.\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b[31m red \x9b0m"
    return "Applies a pricing rule."


def test_oversized_and_escaped_summaries_stay_out_of_pages_and_terminals(
        pytester: pytest.Pytester, fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Payload: a 3 MB summary for a 256-token request, and a summary carrying OSC 52,
    a screen clear and colour codes. Afterwards the big one is a generation error (asked
    twice, never cached), pytest-html stays small, and no page or terminal holds a raw
    ESC byte."""
    server: FakeOpenAIServer = fake_server(respond=_generation)
    monkeypatch.setenv(KEY_ENV, "sk-unused-key-000000")
    make_project(pytester, server.base_url, functions=3, max_tokens=256)
    result = run(pytester, "--html", "out/page.html")
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text and "\x1b" not in text
    result.stdout.fnmatch_lines(["*error: openai/gpt-4o-mini: rejected answer: the answer is "
                                 "3,000,* bytes (its Content-Length), more than the 262,144 "
                                 "bytes allowed*"])
    out = pytester.path / "out"
    # One summary of three refused: an unhealthy run (issue 33), its reports in runs/<id>/.
    found = re.search(r"^results: (.+)$", result.stdout.str(), re.M)
    assert found is not None
    reports = Path(found.group(1)).parent
    assert (out / "page.html").stat().st_size < 1_000_000
    for path in (out / "page.html", *(reports / name for name in (
            "report.html", "report.md", "results.json", "explorer.html"))):
        assert b"\x1b" not in path.read_bytes(), path
    page = (out / "page.html").read_text()
    assert "\\x1b]52;c;cm0gLXJmIH4=" in page  # shown, as inert text
    # The explorer shows it the same way (its data is JSON, read by JSON.parse).
    blob = re.search(r'<script type="application/json" id="sb-data">(.*?)</script>',
                     (reports / "explorer.html").read_text(), re.S)
    assert blob is not None
    shown = [s for u in json.loads(blob.group(1))["units"] for s in u["sum"]
             if s and s.startswith("Applies rule 1.")]
    assert shown and all("\\x1b]52;c;cm0gLXJmIH4=" in s and "\x1b" not in s for s in shown)
    import sqlite3

    conn = sqlite3.connect(out / "store.sqlite")
    biggest = conn.execute("SELECT MAX(LENGTH(json)) FROM llm_cache").fetchone()[0]
    conn.close()
    assert biggest < 20_000
