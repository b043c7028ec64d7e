"""Extraction throughput next to bare tree-sitter parsing of the same files, same run.

Usage::

    python benchmarks/perf/extract_throughput.py [PATH ...] [--rounds N] [--workers N]

Without PATH it measures the installed ``pydantic`` and ``click`` packages (real,
third-party Python code available offline). "Bare" reads every file the extraction would
extract and parses it with the same cached tree-sitter parser, nothing else. "Full" is
``extract_units``: walk, read, parse, query, units, metadata, call graph, CodeUnit objects.

Two comparisons, so that no figure stands alone:

* one process: full (``workers=1``) against bare, both in this process;
* N processes (``--workers``, default: the usable CPUs): full with ``workers=N`` (this
  process and N - 1 forked workers) against the single-process bare parse, AND against a
  bare parse split the same way over the same number of processes (same shares, same
  pool), which is the like-for-like figure.

A third table splits one process's CPU time into steps (parse, the query pass, building
definitions, preparing unit fields, the call graph and CodeUnit objects), each as a multiple
of the bare parse, next to the 1/0.7 = 1.43 the 70% bar allows: the steps are measured as
cumulative variants (parse + query, + definitions, + preparation, full) in the same rounds.

Rounds alternate every variant; the best round of each counts (the least disturbed by
other processes), and the ratio of median rounds is shown too. Wall-clock and CPU-time
ratios are both printed; CPU time includes the worker processes' (``RUSAGE_CHILDREN``),
so for N processes it compares total work, not elapsed time.
"""

from __future__ import annotations

import argparse
import gc
import logging
import multiprocessing
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

from pytest_summarybench.extract import ExtractionConfig, extract_units
from pytest_summarybench.extract.files import SourceFile, read_source, walk
from pytest_summarybench.extract.parallel import _chunks, extract_one, usable_cpus, worker_count
from pytest_summarybench.extract.parsing import get_parser, get_query, grammar_key
from pytest_summarybench.extract.units import extract_file


def default_paths() -> list[str]:
    paths = []
    for name in ("pydantic", "click"):
        module = __import__(name)
        paths.append(os.path.dirname(str(module.__file__)))
    return paths


def _cpu() -> float:
    """CPU seconds of this process and of its finished (reaped) children."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _time(fn: Callable[[], object]) -> tuple[float, float]:
    gc.collect()
    wall, cpu = time.perf_counter(), _cpu()
    fn()
    return time.perf_counter() - wall, _cpu() - cpu


def _parse(files: list[SourceFile]) -> None:
    for f in files:
        with open(f.abspath, "rb") as fh:
            get_parser(grammar_key(f.language, f.path)).parse(fh.read())


def _bare_processes(files: list[SourceFile], n: int) -> None:
    """Bare parsing shared out exactly as ``extract_all`` shares extraction."""
    own, *chunks = _chunks(files, n)
    if not chunks:
        _parse(own)
        return
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=len(chunks), mp_context=context) as pool:
        futures = [pool.submit(_parse, chunk) for chunk in chunks]
        _parse(own)
        for future in futures:
            future.result()


def measure(root: str, rounds: int, workers: int) -> dict[str, float]:
    config = ExtractionConfig(root_path=root, workers=1)
    parallel = ExtractionConfig(root_path=root, workers=workers)
    files = []
    for source in walk(config, []):
        src, _ = read_source(source, config)
        if src is not None:
            files.append(source)
    total = sum(os.path.getsize(f.abspath) for f in files)

    def floor() -> None:
        # The least any query-based extractor does: parse plus one query pass.
        from tree_sitter import QueryCursor

        for f in files:
            key = grammar_key(f.language, f.path)
            with open(f.abspath, "rb") as fh:
                tree = get_parser(key).parse(fh.read())
            QueryCursor(get_query(key)).captures(tree.root_node)

    def defs() -> None:
        # Every file's definitions with their metadata, calls and dependencies.
        for f in files:
            src, _ = read_source(f, config)
            assert src is not None
            extract_file(f.path, f.language, src)

    def prepared() -> None:
        # ... plus each emitted unit's id, content and fields as plain data.
        for f in files:
            extract_one(f, config)

    variants: dict[str, Callable[[], object]] = {
        "bare": lambda: _parse(files),
        "full": lambda: extract_units(config),
        "floor": floor,
        "defs": defs,
        "prepared": prepared,
        "bare_n": lambda: _bare_processes(files, workers),
        "full_n": lambda: extract_units(parallel),
    }
    for fn in variants.values():  # warm-up: grammars, queries, imports
        fn()
    walls: dict[str, list[float]] = {key: [] for key in variants}
    cpus: dict[str, list[float]] = {key: [] for key in variants}
    for _ in range(rounds):
        for key, fn in variants.items():
            wall, cpu = _time(fn)
            walls[key].append(wall)
            cpus[key].append(cpu)
    out: dict[str, float] = {"files": len(files), "bytes": total,
                             "units": len(extract_units(config).units),
                             "auto": worker_count(ExtractionConfig(root_path=root), files)}
    for key in variants:
        out[key] = total / min(walls[key]) / 1e6
        out[key + "_median"] = total / statistics.median(walls[key]) / 1e6
        out[key + "_cpu"] = total / min(cpus[key]) / 1e6
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="codebase roots (default: pydantic, click)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--workers", type=int, default=max(2, usable_cpus()),
                        help="processes for the multi-process runs (default: usable CPUs)")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # large files would each log a maxLines warning
    paths = args.paths or default_paths()
    n = args.workers
    results = [(os.path.basename(os.path.normpath(p)), measure(p, args.rounds, n))
               for p in paths]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs ({usable_cpus()} usable), "
          f"load average {os.getloadavg()[0]:.1f}, {args.rounds} rounds, best round; MB/s "
          "over the bytes of the files extracted")
    print("\nOne process")
    print(f"{'codebase':<16}{'files':>6}{'MB':>6}{'units':>6}{'bare':>7}{'full':>7}"
          f"{'wall':>7}{'cpu':>7}{'median':>8}{'floor':>7}")
    for name, r in results:
        print(f"{name:<16}{r['files']:>6}{r['bytes'] / 1e6:>6.2f}{r['units']:>6}"
              f"{r['bare']:>7.2f}{r['full']:>7.2f}{r['full'] / r['bare']:>7.0%}"
              f"{r['full_cpu'] / r['bare_cpu']:>7.0%}"
              f"{r['full_median'] / r['bare_median']:>8.0%}"
              f"{r['floor_cpu'] / r['bare_cpu']:>7.0%}")
    print("bare, full: MB/s of wall time; wall, cpu: full / bare by wall time and by CPU "
          "time; median: wall ratio of the median rounds; floor: parse + the one query "
          "pass alone, CPU time, as a share of bare")
    print("\nWhere one process's time goes: CPU time of each step, as a multiple of the bare "
          "parse's (stages measured as cumulative variants in the same rounds)")
    print(f"{'codebase':<16}{'parse':>7}{'query':>7}{'units':>7}{'prepare':>9}"
          f"{'build':>7}{'total':>7}{'budget':>8}")
    for name, r in results:
        bare = 1 / r["bare_cpu"]
        floor_, units_, prep_, full_ = (1 / r[k + "_cpu"] / bare
                                        for k in ("floor", "defs", "prepared", "full"))
        print(f"{name:<16}{1:>7.2f}{floor_ - 1:>7.2f}{units_ - floor_:>7.2f}"
              f"{prep_ - units_:>9.2f}{full_ - prep_:>7.2f}{full_:>7.2f}{1 / 0.7:>8.2f}")
    print("parse: read + parse (= bare); query: the one query pass; units: definitions, "
          "metadata, calls, decision points, imports (Python); prepare: ids, content, "
          "fields; build: walk, call graph, CodeUnit objects; budget: the total the 70% bar "
          "allows")
    print(f"\n{n} processes (this one and {n - 1} forked)")
    print(f"{'codebase':<16}{'full':>7}{'vs bare x1':>11}{'cpu':>7}{'median':>8}"
          f"{'bare':>7}{'vs bare x' + str(n):>11}{'cpu':>7}{'median':>8}{'auto':>6}")
    for name, r in results:
        print(f"{name:<16}{r['full_n']:>7.2f}{r['full_n'] / r['bare']:>11.0%}"
              f"{r['full_n_cpu'] / r['bare_cpu']:>7.0%}"
              f"{r['full_n_median'] / r['bare_median']:>8.0%}"
              f"{r['bare_n']:>7.2f}{r['full_n'] / r['bare_n']:>11.0%}"
              f"{r['full_n_cpu'] / r['bare_n_cpu']:>7.0%}"
              f"{r['full_n_median'] / r['bare_n_median']:>8.0%}{int(r['auto']):>6}")
    print(f"full, bare: MB/s of wall time with {n} processes; vs bare x1: full x{n} / the "
          f"one-process bare parse (wall; cpu: total CPU time of all processes; median); "
          f"vs bare x{n}: full x{n} / bare parsing over the same {n} processes; auto: "
          "processes the default (workers=0) uses for this codebase here")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
