"""What hostile input costs: each one in a child process, its seconds and peak memory.

Usage::

    python benchmarks/perf/hostile_inputs.py [--only extract|providers]

Extraction: code nested past the limits per file (``tests/fakes/hostile.py``: 100,000
nested parentheses, 20,000 nested functions or classes, 100,000-term sums and ``and``
chains) and a megabyte of 900-call chains under them, each beside one good file.
Providers: one call to each hostile answer of the fake server (a 500 MB body, the same
without a length, an endless chunked body, a gzip bomb of 1 GiB, 200 answers of the wrong
types), synchronous and asynchronous, ``max_tokens`` 500 (100,000 for the bomb, so that it
is decoded until the limit rather than refused by its length).

The same runs with ``PYTHONPATH`` pointing at another checkout measure that one (the
children import whichever ``pytest_summarybench`` comes first); a child still running
after ``--timeout`` seconds is reported as such and killed. Figures: docs/performance.md
("Hostile input").
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.fakes.hostile import (  # noqa: E402 - after the path is set
    DEEP_CODE,
    call_chains,
    calls_in_child,
    codebase,
    extract_in_child,
)

PROVIDERS = [("sync", 500, ["huge", "unsized", "endless", "wrong_types", "malformed",
                            "deep_json"]),
             ("async", 500, ["huge", "unsized", "endless", "wrong_types"]),
             ("sync", 100_000, ["gzip_bomb"]), ("async", 100_000, ["gzip_bomb"])]


def extraction(timeout_s: float) -> None:
    print(f"{'extraction':<22} {'seconds':>8} {'peak MB':>8}  outcome")
    cases = {**DEEP_CODE, "java-call-chains": call_chains()}
    for case, (name, text) in cases.items():
        with tempfile.TemporaryDirectory() as tmp:
            found = extract_in_child(codebase(Path(tmp) / "code", name, text), timeout_s)
        if found is None:
            print(f"{case:<22} {'>' + format(timeout_s, 'g'):>8} {'-':>8}  still running")
            continue
        reason = found["skipped"].get(name) or f"extracted: {', '.join(found['units'])}"
        print(f"{case:<22} {found['seconds']:8.1f} {found['peak_mb']:8.0f}  {reason}")


def providers(timeout_s: float) -> None:
    print(f"\n{'provider':<24} {'seconds':>8} {'requests':>8} {'sent MB':>8}  outcome "
          "(peak MB of each child after its calls)")
    for mode, max_tokens, kinds in PROVIDERS:
        found = calls_in_child(mode, max_tokens, kinds, timeout_s * len(kinds))
        if found is None:
            print(f"{mode} {', '.join(kinds)}: still running after {timeout_s:g} s a call")
            continue
        for kind in kinds:
            call = found[kind]
            print(f"{mode + ' ' + kind:<24} {call['seconds']:8.1f} {call['requests']:8d} "
                  f"{call['sent'] / 1e6:8.1f}  {call['reason'][:90]}")
        print(f"{'':<24} peak {found['peak_mb']:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("extract", "providers"))
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds a child may run (per call for providers)")
    args = parser.parse_args()
    if args.only != "providers":
        extraction(args.timeout)
    if args.only != "extract":
        providers(args.timeout)


if __name__ == "__main__":
    main()
