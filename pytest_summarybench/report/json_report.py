"""``results.json``: the report schema of docs/reports.md#the-results-file."""

from __future__ import annotations

import json
from pathlib import Path

from ..schemas import BenchmarkReport
from .files import FILE_NAMES, write_text_atomic


def report_json(report: BenchmarkReport) -> str:
    """The report as indented JSON with the spec's camelCase keys, secret values masked
    (json escapes control characters itself)."""
    from ..llm.redaction import redact

    return redact(json.dumps(report.to_json_dict(), indent=2, sort_keys=False),
                  shapes=False) + "\n"


def write_results_json(report: BenchmarkReport, output_dir: Path) -> Path:
    """Write ``output_dir/results.json`` atomically (a reader never sees half a file)."""
    return write_text_atomic(output_dir / FILE_NAMES["json"], report_json(report))
