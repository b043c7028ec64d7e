"""Fixtures for the engine's unit tests: a run made by the engine itself (``ensure_units``
on a small codebase, no pytest session) and the fake OpenAI-compatible server answering
as the toy family expects (``tests/engine/toy.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.context import RunContext
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.settings import load_settings
from pytest_summarybench.store import Store
from tests.engine.toy import CODE, ToyResponder
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def codebase(tmp_path: Path) -> Path:
    root = tmp_path / "code"
    root.mkdir()
    (root / "billing.py").write_text(CODE)
    return root


MakeRun = Callable[..., RunContext]


@pytest.fixture
def make_run(tmp_path: Path, codebase: Path) -> Iterator[MakeRun]:
    """``make_run(test=[...], judges=[...], **overrides)``: a run context made by
    ``engine.pipeline.ensure_units`` over ``codebase`` (every function sampled); model
    entries are YAML entries, e.g. ``served(server, "alpha")``."""
    from pytest_summarybench.core.progress import Progress
    from pytest_summarybench.engine.pipeline import ensure_units

    stores: list[Store] = []

    def build(test: list[dict[str, Any]] | None = None,
              judges: list[dict[str, Any]] | None = None, **overrides: Any) -> RunContext:
        settings = load_settings(None, {
            "codebase.root": str(codebase), "codebase.languages": ["python"],
            "extraction.types": ["function"], "evaluation.sampling": "all",
            "output.directory": str(tmp_path / "out"),
            "output.store": str(tmp_path / "out" / "store.sqlite"),
            "models.test": test if test is not None else [
                {"provider": "builtin", "model": "docstring"},
                {"provider": "builtin", "model": "identifiers"}],
            "models.judge": judges or [], "weights.toy": 0.5,
            **overrides}, base_dir=tmp_path, families=BUILTIN_FAMILIES)
        settings.store_path.parent.mkdir(parents=True, exist_ok=True)
        store = Store(settings.store_path)
        stores.append(store)
        return ensure_units(settings, store, Progress(enabled=False))

    yield build
    for store in stores:
        store.close()


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """The fake server answering as ``ToyResponder`` (``server.respond.phases``)."""
    with FakeOpenAIServer(respond=ToyResponder()) as fake:
        yield fake
