"""An answer that could not be used is not a final answer: a later session asks again.

The user's report: the judge ``local/judge-llama`` (an OpenAI-compatible endpoint)
garbled some answers, so their items failed with ``invalid_output: no valid verdict in 2
answers``, and the helper's queries for some units could not be read. The user fixed the
endpoint and ran again: no request was made and the same items failed, because the
garbled answers were served from the response cache as if they were final (a call that
failed with HTTP 500 was asked again; an answer that arrived but could not be read was
not). Here, in each run mode: a first session with the garbled answers (each prompt paid
once, the re-ask included), a second after the fix (exactly the prompts whose answers
could not be used are asked again, once each, and every item scores), and a third that
asks nothing (usable answers stay cached).
"""

from __future__ import annotations

import json
import re
import textwrap
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from tests.evaluators.judge.scripted import pointwise_json
from tests.evaluators.judge.test_end_to_end import CODE as END_TO_END_CODE
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.project import write_bench_module, write_code

JUDGE = "judge-llama"
#: Three of the judge end-to-end test's functions (the first kept good, two garbled).
CODE = {path: source for path, source in END_TO_END_CODE.items()
        if path in ("shop/pricing.py", "geometry/shapes.py", "config/parser.py")}
#: The functions whose prompts the broken endpoint garbles (verdicts and queries alike).
GARBLED = ("circle_area", "parse_config_line")
QUERY_TYPES = ("vague", "wrong_terminology", "specific_behavior", "integration",
               "problem_based")


class LlamaEndpoint:
    """The fake judge: pointwise verdicts and retrieval queries; while ``broken`` it
    answers the prompts about ``GARBLED`` functions with chatter instead of JSON (also
    when asked again). ``asked`` counts each request by (kind, function, re-ask)."""

    def __init__(self) -> None:
        self.broken = True
        self.asked: Counter[tuple[str, str, bool]] = Counter()
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        text = "\n".join(str(m["content"]) for m in messages if m["role"] == "user")
        name = next(n for n in ("apply_discount", *GARBLED) if f"def {n}(" in text)
        kind = "queries" if "Function/Class:" in text else "verdict"
        with self.lock:
            self.asked[(kind, name, any(m["role"] == "assistant" for m in messages))] += 1
        if self.broken and name in GARBLED:
            return "Sure! This code looks good to me, I would rate it highly."
        if kind == "queries":
            return json.dumps({"queries": [{"type": t, "query": f"{name} {t}"}
                                           for t in QUERY_TYPES]})
        return pointwise_json(4)

    def take(self) -> Counter[tuple[str, str, bool]]:
        """What was asked since the last ``take``."""
        with self.lock:
            asked, self.asked = self.asked, Counter()
        return asked


def _project(pytester: pytest.Pytester, server: FakeOpenAIServer) -> None:
    write_code(pytester, CODE)
    write_bench_module(pytester)
    pytester.makefile(".yaml", summarybench=textwrap.dedent(f"""
        name: unusable-answers
        codebase: {{root: code, languages: [python]}}
        extraction: {{types: [function], minLines: 2}}
        models:
          test:
            - {{provider: builtin, model: docstring}}
          judge:
            - {{provider: local, model: {JUDGE}, apiEndpoint: "{server.base_url}"}}
        evaluation:
          sampling: all
          judge: {{pairwise: false, bootstrapSamples: 50}}
          contrastive: {{enabled: false}}
          retrieval: {{embeddingModel: builtin/hashing, kValues: [1]}}
          downstream: {{enabled: false}}
        """))


def _run(pytester: pytest.Pytester, mode: list[str]) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                         "-p", "no:randomly", "--sb-output", "out", *mode)


def _failures(result: pytest.RunResult) -> list[str]:
    """The failed items' reasons as the terminal shows them."""
    return re.findall(r"could not score .*", result.stdout.str())


@pytest.mark.parametrize("run_mode", [["-n", "2"]], ids=["n2"])
def test_a_later_session_asks_again_what_could_not_be_used(
        # Two workers: the answers are marked where the tests read them (the workers), and
        # the next session's controller must see the marks; a plain session is the
        # simpler case of the same path (and tests/evaluators/test_llm_paths.py covers the
        # in-process reads).
        pytester: pytest.Pytester, fake_server: Callable[..., FakeOpenAIServer],
        run_mode: list[str]) -> None:
    llama = LlamaEndpoint()
    server = fake_server(respond=llama)
    _project(pytester, server)

    # -- the endpoint garbles: those items fail, each prompt paid once (re-ask included) --
    first = _run(pytester, run_mode)
    assert first.parseoutcomes() == {"passed": 2, "failed": 4}, first.stdout.str()
    failures = _failures(first)
    for name in GARBLED:
        assert any(name in f and f"judge local/{JUDGE} invalid_output: no valid verdict in "
                   "2 answers" in f and "raw output: 'Sure! This code" in f
                   for f in failures), failures
        assert any(name in f and f"query generation by local/{JUDGE} failed: " in f
                   for f in failures), failures
    assert llama.take() == Counter({
        **{("queries", n, False): 1 for n in ("apply_discount", *GARBLED)},
        **{("verdict", n, False): 1 for n in ("apply_discount", *GARBLED)},
        **{("verdict", n, True): 1 for n in GARBLED}})

    # -- fixed: exactly what could not be used is asked again, once, and everything scores --
    llama.broken = False
    second = _run(pytester, run_mode)
    assert second.parseoutcomes() == {"passed": 6}, second.stdout.str()
    assert llama.take() == Counter({
        **{("queries", n, False): 1 for n in GARBLED},
        **{("verdict", n, False): 1 for n in GARBLED}})

    # -- usable answers stay cached: nothing is asked ---------------------------------------
    third = _run(pytester, run_mode)
    assert third.parseoutcomes() == {"passed": 6}, third.stdout.str()
    assert llama.take() == Counter()
