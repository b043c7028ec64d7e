"""Peak resident memory of the default offline run, and of its embedding phase alone.

Usage::

    python benchmarks/perf/peak_memory.py [--rounds N] [--base CHECKOUT]
        [--run-pieces 1024,2048,4096,8192]

Each round runs the README's default offline run in a fresh output directory (so a fresh
store: everything is extracted, generated and embedded), as a subprocess::

    python -P -m pytest -p summarybench -p memory_marks benchmarks/summary -q \
        -p no:cacheprovider --sb-output <fresh directory>

(built-in models, contrastive and retrieval, ``builtin/minilm`` embeddings). Its peak
resident set size is the kernel's (``ru_maxrss`` of the child, from ``os.wait4``). The
``memory_marks`` plugin (this directory) records ``VmRSS`` and ``VmHWM`` at the run's steps,
which says where the peak is reached: before any embedding, during embedding (every
``Embedder.embed`` call), or after it (indexes, tests, aggregation, reports).

Then the embedding phase alone, each in a fresh subprocess: the sample codebase's 183 code
units (what contrastive preparation embeds first, and the largest texts of the run) through
``Embedder(MiniLMBackend(run_pieces=P))`` for each ``--run-pieces`` value: the peak with the
model loaded and nothing embedded, the peak after embedding, and the time taken.

``--base CHECKOUT`` measures another checkout side by side, alternated round by round, with
the package imported from it (``git worktree add /tmp/sb-base <commit>``): the before and
after of a change, on the same machine at the same time; its embedding phase runs with its
own defaults. It also compares the two default runs' ``results.json`` apart from
``runDate``, ``duration`` and ``benchmarkId`` (the run id): a memory change must not change
a result. Each default run starts in the checkout it measures (pytest puts its root on the
path), on that checkout's copy of the fixture. The bar is 600 MB
for the whole run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
BAR_MB = 600
#: What differs between two runs of the same configuration: when, how long, and the run id
#: (a hash of the configuration and the codebase's file times: each checkout has its own).
VOLATILE = ("runDate", "duration", "benchmarkId")


def run_once(checkout: Path, out: Path) -> dict[str, Any]:
    """One default run with the package from ``checkout``: peak RSS, wall time, marks."""
    marks = out.parent / f"{out.name}.marks.jsonl"
    env = {**os.environ, "SB_MEMORY_MARKS": str(marks),
           "PYTHONPATH": os.pathsep.join([str(checkout), str(HERE)])}
    # Run in the checkout measured: pytest puts its root on sys.path (``pythonpath``), which
    # must be the package's own. -P: nothing else goes before PYTHONPATH.
    cmd = [sys.executable, "-P", "-m", "pytest", "-p", "summarybench", "-p", "memory_marks",
           "benchmarks/summary", "-q", "-p", "no:cacheprovider", "--sb-output", str(out)]
    started = time.perf_counter()
    log_path = out.parent / f"{out.name}.log"
    with open(log_path, "w") as log:
        child = subprocess.Popen(cmd, cwd=checkout, env=env, stdout=log,
                                 stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the default run failed with {checkout}:\n{log_path.read_text()}")
    steps = [json.loads(line) for line in marks.read_text().splitlines()]
    package = steps[0].get("package", "")
    if not package.startswith(str(checkout)):
        raise SystemExit(f"the run imported {package}, not the package of {checkout}")
    return {"peak_mb": usage.ru_maxrss / 1024, "wall_s": wall, "steps": steps,
            "results": out / "results.json"}


EMBED_ONLY = """
import json, sys, time
from pathlib import Path
def hwm():
    out = {}
    for line in open("/proc/self/status"):
        if line.startswith(("VmHWM", "VmRSS")):
            out[line[:5]] = int(line.split()[1]) / 1024
    return out
from pytest_summarybench.embeddings import Embedder
from pytest_summarybench.embeddings.minilm import MiniLMBackend
from pytest_summarybench.extract import extract_units
from pytest_summarybench.settings import load_settings
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
code = [u.content for u in extract_units(load_settings(None, base_dir=Path.cwd(),
                                                       families=BUILTIN_FAMILIES)
                                         .extraction_config()).units]
pieces = int(sys.argv[1])
backend = MiniLMBackend(run_pieces=pieces) if pieces else MiniLMBackend()
backend.load()
loaded = hwm()
wall, cpu = time.perf_counter(), time.process_time()
Embedder(backend).embed(code)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
print(json.dumps({"units": len(code), "loaded": loaded, "after": hwm(), "wall_s": wall,
                  "cpu_s": cpu}))
"""


def embed_only(checkout: Path, pieces: int) -> dict[str, Any]:
    """The embedding phase alone in a fresh process (``pieces`` 0: the defaults)."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-P", "-c", EMBED_ONLY, str(pieces)], cwd=ROOT,
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"embedding alone failed with {checkout}:\n{done.stderr}")
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return found


def phases(steps: list[dict[str, Any]]) -> dict[str, float]:
    """Peak (VmHWM, MB) before the first embedding, by the end of the last one, at the
    end; and the resident size just before the first embedding."""
    embeds = [i for i, s in enumerate(steps) if s["step"].startswith(("before embed",
                                                                      "after embed"))]
    mb = 1024.0
    if not embeds:
        return {"before_mb": steps[-1]["VmHWM"] / mb, "embedding_mb": 0.0,
                "end_mb": steps[-1]["VmHWM"] / mb, "rss_before_mb": 0.0}
    first, last = embeds[0], embeds[-1]
    return {"before_mb": steps[first]["VmHWM"] / mb,
            "rss_before_mb": steps[first]["VmRSS"] / mb,
            "embedding_mb": steps[last]["VmHWM"] / mb,
            "end_mb": steps[-1]["VmHWM"] / mb}


def comparable(path: Path) -> Any:
    """results.json without the fields that differ between two runs of the same thing."""
    doc = json.loads(path.read_text())
    for key in VOLATILE:
        doc["metadata"].pop(key, None)
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--base", type=Path, default=None,
                        help="another checkout to measure side by side (the 'before')")
    parser.add_argument("--run-pieces", default="1024,2048,4096,8192",
                        help="padded pieces per model call to try for the embedding phase "
                             "alone (comma-separated; empty: skip it)")
    args = parser.parse_args(argv)

    sides = {"this checkout": ROOT}
    if args.base is not None:
        sides = {"base " + str(args.base): args.base.resolve(), **sides}
    found: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for side, checkout in sides.items():
                out = Path(tmp) / f"{'base' if checkout != ROOT else 'this'}-{len(found[side])}"
                found[side].append(run_once(checkout, out))
        same = None
        if args.base is not None:
            results = [found[side][0]["results"] for side in sides]
            same = comparable(results[0]) == comparable(results[1])

        print(f"default offline run (builtin models, contrastive + retrieval, builtin/minilm), "
              f"fresh store, {args.rounds} round(s)")
        for side, runs in found.items():
            best = min(runs, key=lambda r: r["peak_mb"])
            p = phases(best["steps"])
            print(f"  {side}")
            each = ", ".join(f"{r['peak_mb']:.0f}" for r in runs)
            print(f"    peak resident: {best['peak_mb']:7.1f} MB (rounds: {each} MB); wall "
                  f"{best['wall_s']:.1f} s; bar {BAR_MB} MB: "
                  f"{'met' if max(r['peak_mb'] for r in runs) <= BAR_MB else 'NOT met'}")
            print(f"    peak before embedding {p['before_mb']:7.1f} MB (resident "
                  f"{p['rss_before_mb']:.1f} MB as it starts), by the end of embedding "
                  f"{p['embedding_mb']:7.1f} MB, at the end {p['end_mb']:7.1f} MB")
            rising = [s for prev, s in zip(best["steps"], best["steps"][1:], strict=False)
                      if s["VmHWM"] - prev["VmHWM"] >= 10 * 1024]
            for s in rising:
                print(f"      peak rose to {s['VmHWM'] / 1024:7.1f} MB by '{s['step']}' "
                      f"({s['t']:.1f} s)")
        if args.base is not None:
            base, this = (min(r["peak_mb"] for r in runs) for runs in found.values())
            print(f"this / base peak: {this / base:.1%}")
            print(f"results.json equal apart from {' and '.join(VOLATILE)}: "
                  f"{'yes' if same else 'NO'}")
    variants = [(side, checkout, 0) for side, checkout in sides.items() if checkout != ROOT]
    variants += [("this checkout", ROOT, int(p)) for p in args.run_pieces.split(",") if p]
    if variants:
        print(f"embedding phase alone (the fixture's code units, fresh process each), "
              f"{args.rounds} round(s)")
    alone: list[list[dict[str, Any]]] = [[] for _ in variants]
    for _ in range(args.rounds):  # alternated, so that the times are side by side
        for runs, (_, checkout, pieces) in zip(alone, variants, strict=True):
            runs.append(embed_only(checkout, pieces))
    for runs, (side, _, pieces) in zip(alone, variants, strict=True):
        best = min(runs, key=lambda r: r["after"]["VmHWM"])
        what = f"calls of at most {pieces} pieces" if pieces else "its defaults"
        print(f"  {side}, {what}: peak {best['loaded']['VmHWM']:6.1f} MB with the model "
              f"loaded, {best['after']['VmHWM']:6.1f} MB after {best['units']} units "
              f"(+{best['after']['VmHWM'] - best['loaded']['VmHWM']:.1f} MB); "
              f"{min(r['wall_s'] for r in runs):.1f} s wall, "
              f"{min(r['cpu_s'] for r in runs):.1f} s CPU")
    worst = max(r["peak_mb"] for r in found["this checkout"])
    return 0 if worst <= BAR_MB and same is not False else 1


if __name__ == "__main__":
    sys.exit(main())
