"""``results.json``: the report schema of spec section 10.1."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..schemas import BenchmarkReport


def write_results_json(report: BenchmarkReport, output_dir: Path) -> Path:
    """Write ``output_dir/results.json`` atomically (a reader never sees half a file)."""
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / "results.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report.to_json_dict(), indent=2, sort_keys=False) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)
    return path
