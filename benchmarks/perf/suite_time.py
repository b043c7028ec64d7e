"""The test suite's time in two ways of running it, side by side: wall clock and CPU time.

Usage::

    python benchmarks/perf/suite_time.py --rounds 2 \\
        --variant "plain=" --variant "cov=--cov" [--variant "n2=--cov -n 2"] \\
        -- tests/plugin/test_warm_up.py tests/report/test_session_reports.py

Each variant is a name and the extra pytest arguments it adds; the test paths after
``--`` are the same for every variant. The variants run one after another within each
round (the order turned every round), each as a fresh ``python -m pytest -q -p
no:cacheprovider`` subprocess with a base temporary directory of its own, so both sides of
a comparison see the same machine load. Per run it takes the wall time and the CPU time of
the run's whole process tree (``RUSAGE_CHILDREN``: pytest, the sessions and commands the
tests start, xdist workers), and prints, per variant, the best round and the ratios to
the first variant. On a machine shared with other work, CPU time is the steadier figure;
wall time is what the two modes are about when the machine is quiet.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Variant:
    name: str
    args: list[str]
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(variant: Variant, paths: list[str], base: Path, n: int) -> None:
    # The paths go before the variant's arguments: ``--cov`` takes an optional value, so
    # ``--cov tests/x.py`` would measure ``tests/x.py`` and run the whole suite.
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               f"--basetemp={base / f'{variant.name}-{n}'}", *paths, *variant.args]
    cpu_before, started = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    variant.wall.append(time.perf_counter() - started)
    variant.cpu.append(_children_cpu() - cpu_before)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    summary = next((line for line in reversed(lines)
                    if " passed" in line or " failed" in line or " error" in line), "?")
    variant.outcomes.append(f"exit {done.returncode}: {summary.strip('= ')}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--variant", action="append", required=True,
                        help="NAME=EXTRA PYTEST ARGS (the first is the baseline)")
    parser.add_argument("paths", nargs="+", help="test paths, after --")
    args = parser.parse_args(argv)
    variants = []
    for spec in args.variant:
        name, _, extra = spec.partition("=")
        variants.append(Variant(name, shlex.split(extra)))
    with tempfile.TemporaryDirectory(prefix="sb-suite-time-") as tmp:
        for n in range(args.rounds):
            order = variants if n % 2 == 0 else variants[::-1]
            for variant in order:
                _run(variant, args.paths, Path(tmp), n)
                print(f"round {n + 1} {variant.name}: wall {variant.wall[-1]:.1f} s, CPU "
                      f"{variant.cpu[-1]:.1f} s ({variant.outcomes[-1]}); load "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
    base = variants[0]
    print(f"\nbest of {args.rounds} rounds, against {base.name}:")
    for v in variants:
        wall, cpu = min(v.wall), min(v.cpu)
        print(f"  {v.name:>10}: wall {wall:7.1f} s ({wall / min(base.wall):.2f}x), "
              f"CPU {cpu:7.1f} s ({cpu / min(base.cpu):.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
