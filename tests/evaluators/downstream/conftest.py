"""Fixtures for the downstream tests: the bundled task set and a scripted task model."""

from __future__ import annotations

from pathlib import Path

_ROOT = Path(__file__).resolve().parents[3]

CODEBASE = _ROOT / "fixtures" / "sample_codebase"
TASKS = _ROOT / "fixtures" / "tasks" / "sample_codebase"

