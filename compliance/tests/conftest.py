"""Fixtures of the compliance benchmark's tests: pytester, a project that runs the
benchmark as pytest does, the run modes of integration scenarios, and no real keys (this
distribution's tests run apart from summarybench's, whose fixtures they do not see)."""

from __future__ import annotations

import os

import pytest
from compliance_project import write_project

pytest_plugins = ["pytester"]

#: Integration scenarios run in each mode: plain (no xdist flag at all) and two workers.
RUN_MODES = {"plain": [], "n2": ["-n", "2"]}


@pytest.fixture(params=sorted(RUN_MODES))
def run_mode(request: pytest.FixtureRequest) -> list[str]:
    """Extra pytest arguments for one of the run modes."""
    return RUN_MODES[request.param]


@pytest.fixture
def bench(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project whose test module runs the benchmark (on its shipped eval_data.jsonl
    unless a test passes --compliance-data)."""
    write_project(pytester.path)
    return pytester


@pytest.fixture(autouse=True)
def _no_network_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never use real provider keys, nor fetch litellm's price list."""
    for key in list(os.environ):
        if key.endswith("_API_KEY"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(autouse=True)
def _children_keep_bytecode(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pytest sessions and commands the tests start may write bytecode, so that each
    does not compile and assert-rewrite the packages again."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
