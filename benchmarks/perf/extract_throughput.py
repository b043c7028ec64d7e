"""Extraction throughput next to bare tree-sitter parsing of the same files, same run.

Usage::

    python benchmarks/perf/extract_throughput.py [PATH ...] [--rounds N] [--workers N]

Without PATH it measures the installed ``pydantic`` and ``click`` packages (real,
third-party Python code available offline). "Bare" reads every file the extraction would
extract and parses it with the same cached tree-sitter parser, nothing else. "Full" is
``extract_units`` in one process: walk, read, parse, query, units, metadata, call graph,
CodeUnit objects. Rounds alternate bare and full; the best round of each counts (the
least disturbed by other processes), CPU-time and median ratios are shown too. A last
column runs the extraction with worker processes (``ExtractionConfig.workers``).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import statistics
import sys
import time
from collections.abc import Callable

from pytest_summarybench.extract import ExtractionConfig, extract_units
from pytest_summarybench.extract.files import read_source, walk
from pytest_summarybench.extract.parsing import get_parser, get_query, grammar_key


def default_paths() -> list[str]:
    paths = []
    for name in ("pydantic", "click"):
        module = __import__(name)
        paths.append(os.path.dirname(str(module.__file__)))
    return paths


def _time(fn: Callable[[], object], clock: Callable[[], float]) -> float:
    gc.collect()
    start = clock()
    fn()
    return clock() - start


def measure(root: str, rounds: int, workers: int) -> dict[str, float]:
    config = ExtractionConfig(root_path=root, workers=1)
    parallel = ExtractionConfig(root_path=root, workers=workers)
    files = []
    for source in walk(config, []):
        src, _ = read_source(source, config)
        if src is not None:
            files.append(source)
    total = sum(os.path.getsize(f.abspath) for f in files)

    def bare() -> None:
        for f in files:
            with open(f.abspath, "rb") as fh:
                get_parser(grammar_key(f.language, f.path)).parse(fh.read())

    def floor() -> None:
        # The least any query-based extractor does: parse plus one query pass.
        from tree_sitter import QueryCursor

        for f in files:
            key = grammar_key(f.language, f.path)
            with open(f.abspath, "rb") as fh:
                tree = get_parser(key).parse(fh.read())
            QueryCursor(get_query(key)).captures(tree.root_node)

    def full() -> None:
        extract_units(config)

    def full_parallel() -> None:
        extract_units(parallel)

    bare()
    full()  # warm-up: grammars, queries, imports
    runs: dict[str, list[float]] = {"bare": [], "full": [], "bare_cpu": [], "full_cpu": [],
                                     "floor_cpu": [], "parallel": []}
    for _ in range(rounds):
        runs["bare"].append(_time(bare, time.perf_counter))
        runs["full"].append(_time(full, time.perf_counter))
        runs["bare_cpu"].append(_time(bare, time.process_time))
        runs["full_cpu"].append(_time(full, time.process_time))
        runs["floor_cpu"].append(_time(floor, time.process_time))
        if workers > 1:
            runs["parallel"].append(_time(full_parallel, time.perf_counter))
    out: dict[str, float] = {"files": len(files), "bytes": total,
           "units": len(extract_units(config).units)}
    for key, times in runs.items():
        if times:
            out[key] = total / min(times) / 1e6
            out[key + "_median"] = total / statistics.median(times) / 1e6
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="codebase roots (default: pydantic, click)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="processes for the parallel run (default: CPU count)")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # large files would each log a maxLines warning
    paths = args.paths or default_paths()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}, {args.rounds} rounds, best round; MB/s over the bytes "
          "of the files extracted")
    print(f"{'codebase':<18}{'files':>6}{'MB':>6}{'units':>6}"
          f"{'bare':>7}{'full':>7}{'ratio':>7}{'cpu ratio':>10}{'median':>8}{'floor':>7}"
          f"{'full x' + str(args.workers):>9}{'ratio':>7}")
    for path in paths:
        r = measure(path, args.rounds, args.workers)
        name = os.path.basename(os.path.normpath(path))
        line = (f"{name:<18}{r['files']:>6}{r['bytes'] / 1e6:>6.2f}{r['units']:>6}"
                f"{r['bare']:>7.2f}{r['full']:>7.2f}{r['full'] / r['bare']:>7.0%}"
                f"{r['full_cpu'] / r['bare_cpu']:>10.0%}"
                f"{r['full_median'] / r['bare_median']:>8.0%}"
                f"{r['floor_cpu'] / r['bare_cpu']:>7.0%}")
        if "parallel" in r:
            line += f"{r['parallel']:>9.2f}{r['parallel'] / r['bare']:>7.0%}"
        print(line)
    print("bare/full: MB/s of wall time; ratio = full / bare (same run); cpu ratio: the same "
          "with process CPU time (robust to other load); median: ratio of median rounds; "
          "floor: parse + the one query pass alone, CPU time, as a share of bare; "
          f"full x{args.workers}: extraction with {args.workers} worker processes, against "
          "the single-process bare parse")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
