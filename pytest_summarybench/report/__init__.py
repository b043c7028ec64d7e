"""Reports: the run's report object from the store's data, and its renderings (terminal
table, results.json, Markdown, HTML), the CI gate and the runs kept under their ids. It
imports nothing of pytest (the pytest-html columns are ``plugin/html.py``).

Names are imported lazily (PEP 562), so that importing the package does not pull in
pydantic, numpy or jinja2 for test runs that never build a report.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "FILE_NAMES": "files",
    "render": "render",
    "write_reports": "render",
    "ReportError": "inputs",
    "save_gate_outcome": "inputs",
    "build_run_report": "build",
    "report_from_store": "build",
    "apply_gate": "gate",
    "terminal_lines": "terminal",
    "write_results_json": "json_report",
    "report_of_run": "runs",
    "save_session_run": "runs",
    "write_session_reports": "runs",
}

__all__ = ["FILE_NAMES", "ReportError", "apply_gate", "build_run_report", "render",
           "report_from_store", "report_of_run", "save_gate_outcome", "save_session_run",
           "terminal_lines", "write_reports", "write_results_json", "write_session_reports"]

if TYPE_CHECKING:
    from .build import build_run_report, report_from_store
    from .files import FILE_NAMES
    from .gate import apply_gate
    from .inputs import ReportError, save_gate_outcome
    from .json_report import write_results_json
    from .render import render, write_reports
    from .runs import report_of_run, save_session_run, write_session_reports
    from .terminal import terminal_lines


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value
