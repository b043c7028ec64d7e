"""The harness interface (``pytest_summarybench.harness``, docs/harness.md) as a hosted
benchmark uses it: the example of docs/harness.md, run as it is written, against a local
fake OpenAI-compatible server, plainly and with two xdist workers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.harness import Harness, harness, table_lines
from tests.fakes.openai_server import FakeOpenAIServer

DOC = Path(__file__).resolve().parents[1] / "docs" / "harness.md"


def _doc_files() -> dict[str, str]:
    """The example's files: each python block of the page that starts ``# <file name>``."""
    blocks = re.findall(r"```python\n# (\S+\.py)\n(.*?)```", DOC.read_text(encoding="utf-8"),
                        flags=re.S)
    return dict(blocks)


def test_the_page_holds_the_example() -> None:
    assert set(_doc_files()) == {"echo_plugin.py", "test_echo.py"}


def _repeat_some(body: dict[str, Any]) -> str:
    # repeats "apple" and "stone", not "river"
    word = str(body["messages"][-1]["content"]).removeprefix("Repeat the word ")
    word = word.removesuffix(".")
    return "hmm" if word == "river" else word.upper()


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["plain", "n2"])
def test_the_documented_example_runs(pytester: pytest.Pytester, mode: list[str]) -> None:
    for name, text in _doc_files().items():
        (pytester.path / name).write_text(text, encoding="utf-8")
    with FakeOpenAIServer(respond=_repeat_some) as server:
        result = pytester.runpytest_subprocess(
            "-p", "summarybench", "-p", "echo_plugin", "-p", "no:cacheprovider",
            "--echo-model", "local/echo-7b", "--echo-endpoint", server.base_url, *mode)
        asked = server.chat_requests
    result.assert_outcomes(passed=3)
    # Made once each, by the controller ahead of the tests, also with two workers.
    assert asked == 3
    result.stdout.fnmatch_lines(["*= echo benchmark =*", "*model*repeated*asked*",
                                 "*local/echo-7b*2*3*"])
    written = json.loads((pytester.path / "summarybench-results" / "echo.json").read_text())
    assert written == {"repeated": 2.0, "asked": 3}


def test_without_the_harness_there_is_none(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        from pytest_summarybench.harness import harness

        def pytest_configure(config):
            config.found = harness(config)
        """)
    pytester.makepyfile(test_a="""
        def test_a(pytestconfig):
            assert pytestconfig.found is None
        """)
    pytester.runpytest_subprocess("-p", "no:summarybench", "-p", "no:cacheprovider"
                                  ).assert_outcomes(passed=1)


def test_settings_come_from_the_session(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        from pytest_summarybench.harness import harness

        def pytest_sessionstart(session):
            host = harness(session.config)
            session.config.seen = (host.seed, host.parallel, host.output_dir.name,
                                   host.is_worker, len(host.token))
        """)
    pytester.makepyfile(test_a="""
        def test_a(pytestconfig):
            assert pytestconfig.seen == (7, 3, "out", False, 32)
        """)
    pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                  "--sb-seed", "7", "--sb-parallel", "3",
                                  "--sb-output", "out").assert_outcomes(passed=1)


def test_an_unnamed_scope_is_refused() -> None:
    with pytest.raises(ValueError, match="a scope names what is shared"):
        Harness._scope("")


def test_table_lines_are_the_reports() -> None:
    assert table_lines(("model", "n"), [("a", 10), ("bb", 2)], rule=True) == [
        "  model   n", "  -----  --", "  a      10", "  bb      2"]
    assert harness.__doc__ and "None when the summarybench plugin is not active" in \
        harness.__doc__


class _Session:
    """What a Harness reads of the plugin's session state: its store, token, settings,
    progress display and endpoints."""

    def __init__(self, store: Any, endpoints: Any) -> None:
        from types import SimpleNamespace

        from pytest_summarybench.core.progress import Progress

        self.store, self.endpoints, self.token = store, endpoints, "session-1"
        self.is_worker = False
        self.settings = SimpleNamespace(evaluation=SimpleNamespace(parallel=2, seed=0))
        self._progress = Progress(enabled=False)

    def progress(self) -> Any:
        return self._progress


def test_a_hosted_benchmark_s_calls_share_the_session_s_endpoints(
        tmp_path: Path, fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # An endpoint the session found dead (its breaker open in the session's Endpoints, as
    # the code-summary benchmark's calls leave it) is not asked again by a hosted
    # benchmark's calls, ahead of the tests or in one; another session still asks it.
    from pytest_summarybench.llm import Endpoints, EndpointUnavailable, ModelRequest
    from pytest_summarybench.llm.breaker import BreakerPolicy
    from pytest_summarybench.llm.retry import Failure
    from pytest_summarybench.schemas import ModelConfig
    from pytest_summarybench.store import Store

    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-harness-test-key")
    server: FakeOpenAIServer = fake_server()
    model = ModelConfig(provider="openai", model_name="gpt-4o", api_endpoint=server.base_url)
    ask = [ModelRequest.chat(model, [{"role": "user", "content": f"Repeat the word {w}."}],
                             role="test", phase="echo") for w in ("apple", "river")]
    # no probe within the test, however loaded the machine (a probe goes after 30 s)
    session = Endpoints(breaker_policy=BreakerPolicy(probe_after_s=3600.0))
    dead = Failure(f"connection refused at {server.base_url}", False, dead_endpoint=True)
    while not session.breaker(model).failed(dead):
        pass
    store = Store(tmp_path / "store.sqlite")
    host = Harness(_Session(store, session))  # type: ignore[arg-type]
    host.make_calls(ask[:1])
    with pytest.raises(EndpointUnavailable):
        host.answer(ask[1])
    assert server.chat_requests == 0
    other = Harness(_Session(Store(tmp_path / "other.sqlite"), Endpoints()))  # type: ignore[arg-type]
    assert other.answer(ask[1]).text
    assert server.chat_requests == 1
