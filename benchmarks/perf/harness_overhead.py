"""Harness overhead: a fully cached re-run of a 10,000-test matrix against bare pytest.

Usage::

    python benchmarks/perf/harness_overhead.py [--units 2000] [--rounds 3] [--xdist N]
        [--keep DIR]

Builds, in a temporary directory, a generated Python codebase of ``--units`` functions
and a project that runs the code-summary matrix over it: the five offline built-in models
and one hook-provided trivial evaluator (it reads the summary and records one score), so
the matrix has ``units x 5`` tests and every cost measured is the harness's own (settings,
run lookup, store reads, collection of the matrix, binding each test to its item, the
record on each report, the store write per test, aggregation and results.json). A first
run extracts, samples and generates; it is not timed. Then, alternating in the same
script run so that both sides see the same machine load, it times ``--rounds`` fully
cached re-runs (same configuration: nothing extracted or generated again) and as many
runs of a bare pytest file with the same number of trivial parametrized tests
(``-p no:summarybench``). Each run is a fresh ``python -m pytest`` subprocess; wall time
and the child's CPU time are taken per run, and the best round of each side is compared.
The bar (issue 12) is a ratio of at most 1.5. ``--xdist N`` then times one more run
of each side with ``-n N``, against the same side's best run without xdist.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODELS = 5  # the offline built-in models of the default run
BAR = 1.5

EVALUATOR = '''
    from pytest_summarybench.evaluators import Evaluator
    from pytest_summarybench.schemas import ScoreRecord


    class Present(Evaluator):
        """Scores 1.0 when the unit has a summary: the cheapest possible evaluator."""

        name = "contrastive/embedding"
        family = "contrastive"

        def evaluate(self, item, ctx):
            found = ctx.summary(item.unit_id, item.model_id) is not None
            return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                                evaluator=self.name, metrics={"correct": float(found)})]


    def pytest_summarybench_evaluators(config):
        return [Present()]
'''

HARNESS_TEST = '''
    def test_summary(sb_case):
        assert sb_case.evaluate()
'''

BARE_TEST = '''
    import pytest


    @pytest.mark.parametrize("case", range({n}))
    def test_trivial(case):
        assert case >= 0
'''

CONFIG = '''
    name: harness-overhead
    codebase:
      root: code
      languages: [python]
    extraction:
      types: [function]
    evaluation:
      sampling: all
      sampleSize: {units}
      judge: {{enabled: false}}
      retrieval: {{enabled: false}}
      downstream: {{enabled: false}}
    output:
      directory: out
      formats: [json]
'''

INI = "[pytest]\naddopts = -p no:cacheprovider -p no:randomly -p phase_clock\n"

# A plugin loaded on both sides: the CPU seconds of the session-end hooks (where the
# harness aggregates and writes its reports) go to phases.json, so the script can say how
# much of the difference is the per-test cost and how much the end-of-run statistics.
PHASE_CLOCK = '''
import json
import time

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session):
    started = time.process_time()
    try:
        return (yield)
    finally:
        with open("phases.json", "w") as out:
            json.dump({"sessionfinish_cpu_s": time.process_time() - started}, out)
'''


def write_codebase(root: Path, units: int, per_file: int = 20) -> None:
    """``units`` small, distinct, documented functions, ``per_file`` to a module."""
    for start in range(0, units, per_file):
        lines = [f'"""Pricing rules, part {start // per_file}."""', ""]
        for i in range(start, min(units, start + per_file)):
            lines += [
                "",
                f"def price_rule_{i}(price: float, rate: float = 0.{i % 9 + 1}) -> float:",
                f'    """Apply pricing rule {i}: a discount of the given rate."""',
                "    if rate < 0 or rate > 1:",
                f"        raise ValueError('rule {i}: rate out of range')",
                "    return round(price * (1 - rate), 2)",
                "",
            ]
        path = root / "code" / "shop" / f"rules_{start // per_file:04d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines))


def write_projects(work: Path, units: int) -> tuple[Path, Path]:
    harness = work / "harness"
    bare = work / "bare"
    harness.mkdir()
    bare.mkdir()
    write_codebase(harness, units)
    (harness / "conftest.py").write_text(textwrap.dedent(EVALUATOR))
    (harness / "test_bench.py").write_text(textwrap.dedent(HARNESS_TEST))
    (harness / "summarybench.yaml").write_text(textwrap.dedent(CONFIG.format(units=units)))
    (harness / "pytest.ini").write_text(INI)
    for project in (harness, bare):
        (project / "phase_clock.py").write_text(PHASE_CLOCK)
    (bare / "test_bare.py").write_text(textwrap.dedent(BARE_TEST.format(n=units * MODELS)))
    (bare / "pytest.ini").write_text(INI)
    return harness, bare


@dataclass
class Timing:
    wall_s: float
    cpu_s: float
    passed: int
    finish_cpu_s: float
    """CPU seconds of the session-end hooks (aggregation, reports)."""


def run_pytest(cwd: Path, *args: str) -> Timing:
    """One ``python -m pytest`` in ``cwd``: wall time, the child's CPU time, tests passed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", *args], cwd=cwd,
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    match = re.search(r"(\d+) passed", proc.stdout)
    if proc.returncode != 0 or match is None:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
        raise SystemExit(f"pytest in {cwd} failed (exit {proc.returncode}):\n{tail}")
    phases = json.loads((cwd / "phases.json").read_text())
    return Timing(wall, cpu, int(match.group(1)), phases["sessionfinish_cpu_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=2000,
                        help="functions in the generated codebase (tests = units x 5)")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each side")
    parser.add_argument("--xdist", type=int, default=0, metavar="N",
                        help="also time both sides with -n N (one round each)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build the projects here and keep them (default: a temp dir)")
    args = parser.parse_args()
    tests = args.units * MODELS
    work = args.keep or Path(tempfile.mkdtemp(prefix="sb-overhead-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        harness, bare = write_projects(work, args.units)
        harness_args = ("-p", "summarybench")
        bare_args = ("-p", "no:summarybench")
        first = run_pytest(harness, *harness_args)
        if first.passed != tests:
            raise SystemExit(f"the harness ran {first.passed} tests, expected {tests}")
        print(f"matrix: {args.units} units x {MODELS} models x 1 evaluator = {tests} tests")
        print(f"first harness run (extract, sample, generate; not timed for the ratio): "
              f"{first.wall_s:.1f}s wall, {first.cpu_s:.1f}s CPU")
        runs: dict[str, list[Timing]] = {"bare": [], "harness": []}
        for i in range(args.rounds):
            runs["bare"].append(run_pytest(bare, *bare_args))
            runs["harness"].append(run_pytest(harness, *harness_args))
            b, h = runs["bare"][-1], runs["harness"][-1]
            print(f"round {i + 1}: bare {b.wall_s:.2f}s wall / {b.cpu_s:.2f}s CPU, "
                  f"cached harness {h.wall_s:.2f}s wall / {h.cpu_s:.2f}s CPU")
        for side in runs.values():
            assert all(t.passed == tests for t in side)
        best = {k: min(v, key=lambda t: t.wall_s) for k, v in runs.items()}
        best_cpu = {k: min(t.cpu_s for t in v) for k, v in runs.items()}
        med = {k: statistics.median(t.wall_s for t in v) for k, v in runs.items()}
        wall_ratio = best["harness"].wall_s / best["bare"].wall_s
        cpu_ratio = best_cpu["harness"] / best_cpu["bare"]
        print(f"per test: bare {1e6 * best['bare'].wall_s / tests:.0f} us, "
              f"cached harness {1e6 * best['harness'].wall_s / tests:.0f} us (best wall)")
        print(f"ratio cached harness / bare pytest, {tests} tests: "
              f"{wall_ratio:.2f}x wall (best rounds), {cpu_ratio:.2f}x CPU (best rounds), "
              f"{med['harness'] / med['bare']:.2f}x wall (medians)")
        finish = {k: min(t.finish_cpu_s for t in v) for k, v in runs.items()}
        per_test_ratio = ((best_cpu["harness"] - finish["harness"])
                          / (best_cpu["bare"] - finish["bare"]))
        print(f"session end (aggregation, statistics, results.json and reports): "
              f"{finish['harness']:.2f}s CPU in the harness, {finish['bare']:.2f}s bare")
        print(f"ratio without the session end: {per_test_ratio:.2f}x CPU "
              f"(start-up, collection and the {tests} tests)")
        verdict = "met" if wall_ratio <= BAR else "NOT met"
        print(f"bar: at most {BAR}x -> {verdict}")
        if args.xdist:
            n = ("-n", str(args.xdist))
            bare_n = run_pytest(bare, *bare_args, *n)
            harness_n = run_pytest(harness, *harness_args, *n)
            print(f"with -n {args.xdist}: bare {bare_n.wall_s:.2f}s wall "
                  f"({bare_n.wall_s / best['bare'].wall_s:.2f}x its best without xdist), "
                  f"cached harness {harness_n.wall_s:.2f}s wall "
                  f"({harness_n.wall_s / best['harness'].wall_s:.2f}x)")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
