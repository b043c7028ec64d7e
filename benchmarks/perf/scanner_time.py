"""The compliance rule scanner's time per example, against a baseline checkout side by side.

Usage::

    git worktree add /tmp/sb-base <commit>          # the scanner to compare against
    python benchmarks/perf/scanner_time.py [--base /tmp/sb-base] [--rounds 5]
        [--data compliance/summarybench_compliance/data/independent_dev.jsonl]

Each round scans every example of ``--data`` once in a fresh subprocess per checkout
(``Scanner()`` built once, as the benchmark's session fixture does; the code parsed and
every rule run, ``time.perf_counter`` around ``scan`` only), alternating the two checkouts
so that both see the same machine load. It prints each round's milliseconds per example,
the median over rounds, and the ratio this / base. The first round warms the disk cache and
is left out of the median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = ROOT / "compliance" / "summarybench_compliance" / "data" / "independent_dev.jsonl"

CHILD = """
import importlib, json, sys, time
Scanner = importlib.import_module(sys.argv[2]).Scanner
codes = [json.loads(line)["input"] for line in open(sys.argv[1], encoding="utf-8")
         if line.strip()]
scanner = Scanner()
spent = 0.0
for code in codes:
    started = time.perf_counter()
    scanner.scan(code)
    spent += time.perf_counter() - started
print(json.dumps({"examples": len(codes), "ms_per_example": spent * 1000 / len(codes)}))
"""


def measure(checkout: Path, data: Path) -> float:
    # The scanner's package: its own distribution (compliance/), or, in a checkout from
    # before it had one, inside the summary package.
    if (checkout / "compliance" / "summarybench_compliance").is_dir():
        path, module = checkout / "compliance", "summarybench_compliance.scanner"
    else:
        path, module = checkout, "pytest_summarybench.compliance.scanner"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), str(checkout)])}
    done = subprocess.run([sys.executable, "-P", "-c", CHILD, str(data), module], env=env,
                          capture_output=True, text=True, check=True, cwd=checkout)
    return float(json.loads(done.stdout)["ms_per_example"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="a checkout to compare against")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    data = args.data.resolve()
    sides = {"this": ROOT, **({"base": args.base.resolve()} if args.base else {})}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for round_no in range(args.rounds + 1):
        for name, checkout in sides.items():
            ms = measure(checkout, data)
            if round_no:
                times[name].append(ms)
            print(f"round {round_no}{' (warm-up)' if not round_no else ''}: {name} "
                  f"{ms:.2f} ms per example", flush=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, value in medians.items():
        print(f"{name}: median {value:.2f} ms per example over {args.rounds} rounds "
              f"({data.name})")
    if "base" in medians:
        print(f"ratio this / base: {medians['this'] / medians['base']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
