"""Cost against the codebase's size: the default offline run on codebases of about 1k,
10k, 50k and 200k units, with wall time, CPU time and peak memory per phase and growth
exponents (issue 32).

Usage::

    python -m venv /tmp/scale-venv && /tmp/scale-venv/bin/pip install --no-deps \\
        django sympy pandas scipy numpy botocore
    python benchmarks/perf/scale.py [--sizes 1000 10000 50000 200000] \\
        [--site /tmp/scale-venv/lib/python3.11/site-packages] [--work /tmp/sb-scale] \\
        [--collect-only] [--checkout DIR]

The codebases are the Python sources of packages installed in a scratch environment (code
no one here wrote; nothing is fetched at run time): for each size, the first files in
sorted order of the packages' trees whose units add up to about that many, copied into
``WORK/codebase-SIZE`` (when the packages run out, their trees are taken again under
another folder name). For each size, in fresh processes:

- ``first``: the default offline run (``pytest -p summarybench benchmarks/summary``, the
  five built-in models, contrastive and retrieval), ``--sb-sample-size 100`` (and 1,000
  at 50k with ``--big-sample``), on a fresh output folder;
- ``warm``: the same command again on the same folder;
- ``changed``: after appending a small function to 1% of the files, the same command
  again (the files are restored afterwards).

``--collect-only`` runs the first run only as far as the end of collection (pytest's
``--collect-only``: extraction into the store, sampling and the matrix, no model call):
the cost of the codebase's size without the calls, for the memory held per unit.

Each run prints its wall time, CPU time (the run and its children) and peak resident
memory (the pytest process's ``VmHWM``), what went through the evaluation model (texts,
windows, word pieces: ``model_counts.py``), and per phase (from ``memory_marks.py``: start to
configure, extraction and sampling, the rest of collection, generation and preparation,
the tests and the session end) wall and CPU seconds. The closing table fits growth
exponents (slope of log time over log units) of the first run and of the first run minus
extraction. Every figure is printed beside the load average of the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import model_counts  # noqa: E402
from growth import estimated_units, exponent  # noqa: E402

PACKAGES = ("django", "sympy", "pandas", "scipy", "numpy", "botocore")
_SKIP = {"__pycache__"}


def package_files(site: Path, packages: tuple[str, ...]) -> list[Path]:
    """The packages' Python sources in sorted order."""
    out: list[Path] = []
    for name in packages:
        tree = site / name
        if not tree.is_dir():
            raise SystemExit(f"{tree} is missing: install the package into the scratch "
                             f"environment (see this script's docstring)")
        out.extend(p for p in sorted(tree.rglob("*.py")) if not _SKIP & set(p.parts))
    return out


def build(site: Path, packages: tuple[str, ...], size: int, dest: Path) -> int:
    """Copy about ``size`` units' worth of sources into ``dest`` (kept between runs);
    the estimated unit count."""
    stamp = dest / ".estimated-units"
    if stamp.is_file():
        return int(stamp.read_text())
    if dest.exists():
        shutil.rmtree(dest)
    files = package_files(site, packages)
    total, lap = 0, 0
    while total < size:
        for path in files:
            if total >= size:
                break
            n = estimated_units(path)
            if not n:
                continue
            target = dest / f"copy{lap}" / path.relative_to(site)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            total += n
        lap += 1
    stamp.write_text(str(total))
    return total


def change_one_percent(codebase: Path) -> list[tuple[Path, bytes]]:
    """Append a small function to 1% of the files (every 100th in sorted order); their
    former contents, to restore."""
    files = sorted(codebase.rglob("*.py"))
    saved = []
    for i, path in enumerate(files[::100]):
        before = path.read_bytes()
        saved.append((path, before))
        path.write_bytes(before + (f"\n\ndef scale_changed_{i}(value):\n"
                                   f"    total = value + {i}\n"
                                   f"    return total * 2\n").encode())
    return saved


def restore(saved: list[tuple[Path, bytes]]) -> None:
    for path, data in saved:
        path.write_bytes(data)


def run(codebase: Path, output: Path, sample: int, marks: Path,
        timeout_s: float, collect_only: bool = False, checkout: Path = ROOT) -> dict[str, Any]:
    """One default offline run of ``checkout``'s package; its figures."""
    marks.unlink(missing_ok=True)
    counts = marks.with_suffix(".counts.json")
    counts.unlink(missing_ok=True)
    env = {**os.environ, "SB_MEMORY_MARKS": str(marks), "SB_MODEL_COUNTS": str(counts),
           "PYTHONPATH": os.pathsep.join([str(checkout), str(HERE)])}
    # Run in the measured checkout, with its rootdir (whose pytest ``pythonpath`` puts it
    # first on sys.path) and its test file; -P keeps ``python -m`` from adding the
    # working directory.
    cmd = [sys.executable, "-P", "-m", "pytest", "-p", "summarybench", "-p", "memory_marks",
           "-p", "model_counts",
           str(checkout / "benchmarks" / "summary"), "--rootdir", str(checkout),
           "-q", "-p", "no:cacheprovider",
           "--sb-codebase", str(codebase), "--sb-output", str(output),
           "--sb-sample-size", str(sample)]
    if collect_only:
        cmd.append("--collect-only")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    started = time.time()
    try:
        proc = subprocess.run(cmd, env=env, cwd=checkout, capture_output=True, text=True,
                              timeout=timeout_s)
        rc: int | str = proc.returncode
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
    except subprocess.TimeoutExpired:
        rc, tail = "timeout", []
    wall = time.time() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    steps = [json.loads(line) for line in marks.read_text().splitlines()] \
        if marks.is_file() else []
    return {"rc": rc, "wall_s": wall, "cpu_s": cpu, "load": load,
            "load_end": os.getloadavg()[0], "peak_mb": _peak(steps),
            "phases": phases(steps, started, wall), "tail": tail,
            "model": model_counts.read(counts),
            "package": next((s["package"] for s in steps if "package" in s), "?")}


def _peak(steps: list[dict[str, Any]]) -> float:
    return max((s.get("VmHWM", 0) for s in steps), default=0) / 1024.0


def phases(steps: list[dict[str, Any]], started: float, wall: float) -> dict[str, list[float]]:
    """Wall and CPU seconds per phase, from the marks (the pytest process's CPU only)."""
    first: dict[str, dict[str, Any]] = {}
    for s in steps:
        first.setdefault(s["step"], s)
    points = [("start", started, 0.0)]
    for step, label in (("configure", "import and configure"),
                        ("before units", "start of collection"),
                        ("after units", "extraction and sampling"),
                        ("collection finished", "rest of collection"),
                        ("session finish", "calls, preparation and tests"),
                        ("end", "session end")):
        if step in first:
            points.append((label, first[step]["unix"], first[step]["cpu"]))
    out: dict[str, list[float]] = {}
    for (_, t0, c0), (label, t1, c1) in zip(points, points[1:], strict=False):
        out[label] = [round(t1 - t0, 1), round(c1 - c0, 1)]
    if len(points) > 1:
        out["process exit"] = [round(started + wall - points[-1][1], 1), 0.0]
    return out


def show(size: int, units: int, kind: str, figures: dict[str, Any]) -> None:
    print(f"{size:>7,} ({units:,} est. units) {kind:<8} rc={figures['rc']} "
          f"wall {figures['wall_s']:7.1f} s  CPU {figures['cpu_s']:7.1f} s  "
          f"peak {figures['peak_mb']:7.0f} MB  load {figures['load']:.1f}->"
          f"{figures['load_end']:.1f}  ({figures['package']})", flush=True)
    for label, (w, c) in figures["phases"].items():
        print(f"{'':>12}{label:<32} wall {w:7.1f} s  CPU {c:7.1f} s", flush=True)
    print(f"{'':>12}{model_counts.line(figures['model'])}", flush=True)
    if figures["rc"] not in (0, 1):
        for line in figures["tail"]:
            print(f"{'':>12}| {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000, 200000])
    parser.add_argument("--site", type=Path,
                        default=Path("/tmp/scale-venv/lib/python3.11/site-packages"))
    parser.add_argument("--packages", nargs="+", default=list(PACKAGES))
    parser.add_argument("--work", type=Path, default=Path("/tmp/sb-scale"))
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--big-sample", type=int, default=1000,
                        help="a second first run at 50k with this sample (0: none)")
    parser.add_argument("--runs", nargs="+", default=["first", "warm", "changed"],
                        choices=["first", "warm", "changed"])
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--checkout", type=Path, default=ROOT,
                        help="the checkout whose package is measured (default: this one)")
    parser.add_argument("--collect-only", action="store_true",
                        help="stop each run at the end of collection (no model call)")
    args = parser.parse_args()
    results: dict[int, dict[str, Any]] = {}
    for size in args.sizes:
        codebase = args.work / f"codebase-{size}"
        units = build(args.site, tuple(args.packages), size, codebase)
        output = args.work / f"out-{size}"
        if "first" in args.runs and output.exists():
            shutil.rmtree(output)
        marks = args.work / f"marks-{size}.jsonl"
        for kind in args.runs:
            saved = change_one_percent(codebase) if kind == "changed" else []
            try:
                figures = run(codebase, output, args.sample, marks, args.timeout,
                              args.collect_only, args.checkout.resolve())
            finally:
                restore(saved)
            show(size, units, kind, figures)
            results.setdefault(size, {})[kind] = figures
        if size == 50000 and args.big_sample and "first" in args.runs \
                and not args.collect_only:
            big = args.work / f"out-{size}-sample{args.big_sample}"
            shutil.rmtree(big, ignore_errors=True)
            figures = run(codebase, big, args.big_sample, marks, args.timeout,
                          checkout=args.checkout.resolve())
            show(size, units, f"first@{args.big_sample}", figures)
    firsts = [(s, r["first"]) for s, r in sorted(results.items()) if "first" in r]
    if len(firsts) >= 2:
        sizes = [s for s, _ in firsts]
        walls = [f["wall_s"] for _, f in firsts]
        rest = [f["wall_s"] - f["phases"].get("extraction and sampling", [0.0])[0]
                for _, f in firsts]
        print(f"growth exponent of the first run's wall time over {sizes}: "
              f"{exponent(sizes, walls):.2f}")
        print(f"growth exponent of (first run minus extraction): {exponent(sizes, rest):.2f}"
              f" (issue 32: at most 0.3 from 10k to 200k)")


if __name__ == "__main__":
    main()
