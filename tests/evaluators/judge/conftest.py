"""Fixtures for the judge tests: the fake OpenAI server with scripted judges, and a run
context over hand-written units and summaries in a temporary store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.context import RunContext
from pytest_summarybench.schemas import CodeUnit, UnitMetadata
from tests.evaluators.synthetic import build_context
from tests.fakes.openai_server import FakeOpenAIServer

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



def judge_entry(server: FakeOpenAIServer, model: str, **extra: Any) -> dict[str, Any]:
    """A YAML judge entry for a model served by the fake server."""
    return {"provider": "local", "model": model, "apiEndpoint": server.base_url, **extra}
