"""Fixtures for the judge tests: the fake OpenAI server with scripted judges, and a run
context over hand-written units and summaries in a temporary store."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

# Make ``tests.fakes`` and ``tests.judges`` importable however pytest was started.
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from pytest_summarybench.context import RunContext  # noqa: E402
from pytest_summarybench.schemas import (  # noqa: E402
    CodeUnit,
    GeneratedSummary,
    GenerationMetadata,
    UnitMetadata,
)
from pytest_summarybench.settings import load_settings  # noqa: E402
from pytest_summarybench.store import Store  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402

#: (id, name, code) of the units the evaluator tests judge.
UNITS = [
    ("u-discount", "apply_discount",
     "def apply_discount(price, pct):\n    cut = price * pct / 100\n"
     "    return max(price - cut, 0.0)\n"),
    ("u-email", "send_welcome_email",
     "def send_welcome_email(user, mailer):\n    body = render_template('welcome', user)\n"
     "    mailer.send(user.email, body)\n"),
    ("u-area", "circle_area",
     "def circle_area(radius):\n    return math.pi * radius ** 2\n"),
]


def make_units() -> list[CodeUnit]:
    return [CodeUnit(id=uid, path="pkg/mod.py", name=name, type="function",
                     language="python", content=code,
                     metadata=UnitMetadata(start_line=1, end_line=code.count("\n")))
            for uid, name, code in UNITS]


def _summary(unit_id: str, model_id: str, text: str) -> GeneratedSummary:
    return GeneratedSummary(
        id=f"{unit_id}:{model_id}", code_unit_id=unit_id, model_id=model_id, summary=text,
        generation_metadata=GenerationMetadata(
            model_name=model_id.split("/", 1)[1], prompt_version="test", temperature=0.0,
            max_tokens=100, generated_at=datetime.now(timezone.utc).isoformat(),
            latency_ms=0.0, input_tokens=1, output_tokens=1))


ContextFactory = Callable[..., RunContext]


@pytest.fixture
def make_context(tmp_path: Path) -> ContextFactory:
    """``make_context(summaries, judges, test_models=None, overrides=None, missing=())``:
    ``summaries`` maps model id -> unit id -> text; ``judges`` are YAML model entries;
    test models default to built-in entries named after ``summaries``."""

    def factory(summaries: dict[str, dict[str, str]], judges: list[dict[str, Any]],
                test_models: list[dict[str, Any]] | None = None,
                overrides: dict[str, Any] | None = None,
                missing: tuple[tuple[str, str], ...] = ()) -> RunContext:
        units = make_units()
        if test_models is None:
            test_models = [{"provider": m.split("/", 1)[0], "model": m.split("/", 1)[1]}
                           for m in sorted(summaries)]
        settings = load_settings(None, {
            "output.directory": str(tmp_path / "out"), "models.test": test_models,
            "models.judge": judges, "evaluation.judge.bootstrapSamples": 200,
            **(overrides or {})}, base_dir=tmp_path)
        store = Store(tmp_path / "store.sqlite")
        run_id = "run-judges"
        store.save_units(run_id, units, {u.id for u in units})
        for model_id, by_unit in summaries.items():
            rows = [_summary(uid, model_id, text) for uid, text in by_unit.items()]
            store.save_summaries(rows)
            for s in rows:
                if (s.code_unit_id, model_id) in missing:
                    store.link_summary(run_id, s.code_unit_id, model_id, None,
                                       "the provider refused")
                else:
                    store.link_summary(run_id, s.code_unit_id, model_id, s.id)
        return RunContext(settings, store, run_id)

    return factory


@pytest.fixture
def fake_server() -> Iterator[Callable[..., FakeOpenAIServer]]:
    """Start ``FakeOpenAIServer(**kwargs)``; every server is stopped after the test."""
    servers: list[FakeOpenAIServer] = []

    def start(**kwargs: Any) -> FakeOpenAIServer:
        server = FakeOpenAIServer(**kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def judge_entry(server: FakeOpenAIServer, model: str, **extra: Any) -> dict[str, Any]:
    """A YAML judge entry for a model served by the fake server."""
    return {"provider": "local", "model": model, "apiEndpoint": server.base_url, **extra}
