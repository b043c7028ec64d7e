"""Fixtures for the evaluator tests: a run context over a synthetic codebase."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

# Make ``tests.evaluators.synthetic`` importable however pytest was started.
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from pytest_summarybench.context import RunContext  # noqa: E402
from pytest_summarybench.schemas import CodeUnit  # noqa: E402
from tests.evaluators.synthetic import (  # noqa: E402
    ContextFactory,
    build_context,
    default_summaries,
    make_units,
)


@pytest.fixture
def make_context(tmp_path: Path) -> ContextFactory:
    """``make_context(units=None, summaries=None, overrides=None, missing=())``."""

    def factory(units: list[CodeUnit] | None = None,
                summaries: dict[str, dict[str, str]] | None = None,
                overrides: dict[str, Any] | None = None,
                missing: tuple[tuple[str, str], ...] = ()) -> RunContext:
        units = units if units is not None else make_units()
        summaries = summaries if summaries is not None else default_summaries(units)
        return build_context(tmp_path, units, summaries, overrides, missing)

    return factory
