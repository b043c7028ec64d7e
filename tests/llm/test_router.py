"""Several deployments of one model through litellm's Router, against two fake servers:
calls spread over both, a failing deployment is routed around, keys come from the
variables the configuration names and stay out of the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.llm import Endpoints, complete
from pytest_summarybench.llm.router import RoutedModelConfig, model_list
from pytest_summarybench.schemas import BenchmarkRun, CodebaseInfo
from pytest_summarybench.settings import SettingsError, load_settings
from pytest_summarybench.store import Store
from tests.fakes.openai_server import FakeOpenAIServer

KEY_A = "sk-deployment-a-0123456789"
KEY_B = "sk-deployment-b-9876543210"


def _settings(tmp_path: Path, one: str, two: str, extra: str = "") -> Any:
    path = tmp_path / "summarybench.yaml"
    path.write_text(f"""
models:
  test:
    - provider: openai
      model: gpt-4o-mini
      timeoutS: 5
      deployments:
        - {{apiEndpoint: "{one}", apiKeyEnv: KEY_A{extra}}}
        - {{apiEndpoint: "{two}", apiKeyEnv: KEY_B{extra}}}
""")
    return load_settings(path, families=BUILTIN_FAMILIES)


def _ask(model: Any, i: int, endpoints: Endpoints, store: Store | None = None) -> str:
    """One call, through the session's ``endpoints`` (its Router)."""
    return complete(model, [{"role": "user", "content": f"summarize unit {i}"}],
                    cache=store, endpoints=endpoints).text


def test_calls_spread_over_deployments_with_their_own_keys(
        tmp_path: Path, fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    a: FakeOpenAIServer = fake_server()
    b: FakeOpenAIServer = fake_server()
    monkeypatch.setenv("KEY_A", KEY_A)
    monkeypatch.setenv("KEY_B", KEY_B)
    (model,) = _settings(tmp_path, a.base_url, b.base_url).test_models()
    assert isinstance(model, RoutedModelConfig) and model.id == "openai/gpt-4o-mini"
    store = Store(tmp_path / "store.sqlite")
    endpoints = Endpoints()
    for i in range(24):
        assert _ask(model, i, endpoints, store).startswith("Summary ")
    assert a.successes + b.successes == 24
    assert a.successes >= 3 and b.successes >= 3, (a.successes, b.successes)
    assert a.authorizations == {f"Bearer {KEY_A}"}
    assert b.authorizations == {f"Bearer {KEY_B}"}
    # Cached whichever deployment answered: asking again calls nobody.
    for i in range(24):
        _ask(model, i, endpoints, store)
    assert a.successes + b.successes == 24
    # A run record keeps the model, not how it was reached (no deployments, no keys).
    run = BenchmarkRun(id="r", name="n", config=load_settings(None,
                                                              families=BUILTIN_FAMILIES).benchmark_config(),
                       codebase_info=CodebaseInfo(name="c"), models_under_test=[model],
                       judge_models=[], status="pending", started_at="2026-01-01T00:00:00")
    store.save_run(run)
    store.close()
    for path in tmp_path.glob("store.sqlite*"):  # the database and any WAL left behind
        data = path.read_bytes()
        assert KEY_A.encode() not in data and KEY_B.encode() not in data
    assert b"deployments" not in (tmp_path / "store.sqlite").read_bytes()


def test_a_failing_deployment_is_routed_around(
        tmp_path: Path, fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    broken: FakeOpenAIServer = fake_server(faults=lambda n, body: "500")
    healthy: FakeOpenAIServer = fake_server()
    monkeypatch.setenv("KEY_A", KEY_A)
    monkeypatch.setenv("KEY_B", KEY_B)
    (model,) = _settings(tmp_path, broken.base_url, healthy.base_url).test_models()
    endpoints = Endpoints()
    for i in range(8):
        assert _ask(model, i, endpoints).startswith("Summary ")
    assert healthy.successes == 8 and broken.successes == 0


def test_per_deployment_limits_reach_the_router_and_keys_must_be_set(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEY_A", KEY_A)
    monkeypatch.delenv("KEY_B", raising=False)
    (model,) = _settings(tmp_path, "http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1",
                         extra=", requestsPerMinute: 60").test_models()
    with pytest.raises(ValueError, match="KEY_B is not set"):
        model_list(model)
    monkeypatch.setenv("KEY_B", KEY_B)
    entries = model_list(model)
    assert [e["litellm_params"]["rpm"] for e in entries] == [60, 60]
    assert {e["model_name"] for e in entries} == {"openai/gpt-4o-mini"}


def test_a_key_written_in_the_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "summarybench.yaml"
    path.write_text("models:\n  test:\n    - provider: openai\n      model: gpt-4o\n"
                    "      deployments: [{apiKey: sk-literal}]\n")
    with pytest.raises(SettingsError, match=r"deployments\.0\.apiKey .*unknown key"):
        load_settings(path, families=BUILTIN_FAMILIES)
