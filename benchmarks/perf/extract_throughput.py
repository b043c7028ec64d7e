"""Extraction throughput next to bare tree-sitter parsing of the same files, same run.

Usage::

    python benchmarks/perf/extract_throughput.py [PATH ...] [--rounds N]

Without PATH it measures the installed ``pydantic`` and ``click`` packages (real,
third-party Python code available offline). "Bare" reads every file the extraction would
extract and parses it with the same cached tree-sitter parser, nothing else. "Full" is
``extract_units`` as the plugin runs it: walk, read, parse, query, units, metadata, call
graph, CodeUnit objects. Rounds alternate bare and full; the best round of each counts
(the least disturbed by other processes), the median is shown too.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import statistics
import sys
import time

from pytest_summarybench.extract import ExtractionConfig, extract_units
from pytest_summarybench.extract.files import read_source, walk
from pytest_summarybench.extract.parsing import get_parser, grammar_key


def default_paths() -> list[str]:
    paths = []
    for name in ("pydantic", "click"):
        module = __import__(name)
        paths.append(os.path.dirname(str(module.__file__)))
    return paths


def measure(root: str, rounds: int) -> dict[str, float]:
    config = ExtractionConfig(root_path=root)
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

    def full() -> int:
        return len(extract_units(config).units)

    bare()
    units = full()  # warm-up: grammars, queries, imports
    bare_times: list[float] = []
    full_times: list[float] = []
    for _ in range(rounds):
        for fn, times in ((bare, bare_times), (full, full_times)):
            gc.collect()
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return {
        "files": len(files), "bytes": total, "units": units,
        "bare_best": total / min(bare_times) / 1e6,
        "full_best": total / min(full_times) / 1e6,
        "bare_median": total / statistics.median(bare_times) / 1e6,
        "full_median": total / statistics.median(full_times) / 1e6,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="codebase roots (default: pydantic, click)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # large files would each log a maxLines warning
    paths = args.paths or default_paths()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.rounds} rounds; "
          "MB/s over the bytes of the files extracted")
    print(f"{'codebase':<28}{'files':>6}{'MB':>7}{'units':>7}{'bare MB/s':>11}"
          f"{'full MB/s':>11}{'ratio':>8}{'(median ratio)':>16}")
    for path in paths:
        r = measure(path, args.rounds)
        name = os.path.basename(os.path.normpath(path))
        print(f"{name:<28}{r['files']:>6}{r['bytes'] / 1e6:>7.2f}{r['units']:>7}"
              f"{r['bare_best']:>11.2f}{r['full_best']:>11.2f}"
              f"{r['full_best'] / r['bare_best']:>8.0%}"
              f"{r['full_median'] / r['bare_median']:>16.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
