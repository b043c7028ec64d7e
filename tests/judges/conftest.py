"""Fixtures for the judge tests: the fake OpenAI server with scripted judges, and a run
context over hand-written units and summaries in a temporary store."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# Make ``tests.fakes`` and ``tests.judges`` importable however pytest was started.
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from pytest_summarybench.context import RunContext  # noqa: E402
from pytest_summarybench.schemas import CodeUnit, UnitMetadata  # noqa: E402
from tests.evaluators.synthetic import build_context  # noqa: E402
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


ContextFactory = Callable[..., RunContext]


@pytest.fixture
def make_context(tmp_path: Path) -> ContextFactory:
    """``make_context(summaries, judges, test_models=None, overrides=None, missing=())``:
    ``summaries`` maps model id -> unit id -> text; ``judges`` are YAML model entries;
    test models default to entries named after ``summaries``."""

    def factory(summaries: dict[str, dict[str, str]], judges: list[dict[str, Any]],
                test_models: list[dict[str, Any]] | None = None,
                overrides: dict[str, Any] | None = None,
                missing: tuple[tuple[str, str], ...] = ()) -> RunContext:
        if test_models is None:
            test_models = [{"provider": m.split("/", 1)[0], "model": m.split("/", 1)[1]}
                           for m in sorted(summaries)]
        return build_context(tmp_path, make_units(), summaries, {
            "models.test": test_models, "models.judge": judges,
            "evaluation.judge.bootstrapSamples": 200, **(overrides or {})}, missing)

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
