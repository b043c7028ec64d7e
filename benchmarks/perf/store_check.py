"""What the controller's ``PRAGMA quick_check`` costs when it opens a store (issue 18): a
store the size of a 10,000-unit run, checked from a warm page cache and, as root, from a
cold one.

Usage::

    python benchmarks/perf/store_check.py [--units 10000] [--keep PATH]

The store is written through ``Store`` with the JSON shapes of a real run: 10,000 function
units of about 1 KB, 5 models' summaries and run links, 2 evaluators' records per summary,
and one 384-float embedding per summary in an ``embedding_cache`` table like the one the
embedders keep (random bytes: the size is what matters). Each check opens a fresh
connection, as a session does. "cold" drops the page cache first
(``/proc/sys/vm/drop_caches``, root only; skipped otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pytest_summarybench.store import Store  # noqa: E402

MODELS = [f"builtin/m{i}" for i in range(5)]
EVALUATORS = ("contrastive/embedding", "retrieval/embedding")


def build(path: Path, units: int) -> None:
    store = Store(path)  # embedding_cache is one of the store's own tables
    body = "    total = compute(value, other)  # a typical line of code\n" * 18
    with store.transaction() as conn:
        for i in range(units):
            uid = f"u{i:06d}"
            unit = {"id": uid, "path": f"pkg/mod{i // 20}.py", "name": f"fn_{i}",
                    "type": "function", "language": "python",
                    "content": f"def fn_{i}(value, other):\n{body}",
                    "metadata": {"startLine": 1, "endLine": 19}}
            conn.execute("INSERT INTO units VALUES (?, ?)", (uid, json.dumps(unit)))
            conn.execute("INSERT INTO run_units VALUES ('run', ?, ?, 1)", (i, uid))
            for model in MODELS:
                sid = f"{uid}-{model}"
                summary = {"id": sid, "codeUnitId": uid, "modelId": model,
                           "summary": f"Computes fn_{i} from its two inputs and returns the "
                                      "combined value to the caller."}
                conn.execute("INSERT INTO summaries VALUES (?, ?, ?, ?)",
                             (sid, uid, model, json.dumps(summary)))
                conn.execute("INSERT INTO run_summaries VALUES ('run', ?, ?, ?, NULL)",
                             (uid, model, sid))
                for ev in EVALUATORS:
                    nodeid = f"test_bench.py::test_summary[{uid}-{model}-{ev}]"
                    record = {"benchmark": "summary", "nodeid": nodeid, "unitId": uid,
                              "modelId": model, "evaluator": ev,
                              "metrics": {"correct": 1.0, "reciprocal_rank": 0.5},
                              "details": {"summaryId": sid, "distractorIds": [uid] * 9}}
                    conn.execute("INSERT INTO records VALUES ('run', ?, 0, 'summary', ?, ?, "
                                 "?, ?)", (nodeid, uid, model, ev, json.dumps(record)))
                conn.execute("INSERT INTO embedding_cache VALUES ('minilm', ?, 384, ?)",
                             (sid, os.urandom(384 * 4)))
    store.close()


def timed_check(path: Path) -> tuple[float, float, str]:
    conn = sqlite3.connect(path)
    wall, cpu = time.perf_counter(), time.process_time()
    result = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
    out = (time.perf_counter() - wall, time.process_time() - cpu, result)
    conn.close()
    return out


def drop_caches() -> bool:
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, default=None, help="write the store here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "store.sqlite"
        start = time.perf_counter()
        build(path, args.units)
        print(f"{args.units} units: {path.stat().st_size / 1e6:.0f} MB store built in "
              f"{time.perf_counter() - start:.1f} s")
        for label in ("cold", "warm", "warm", "warm"):
            if label == "cold" and not drop_caches():
                print("cold: skipped (dropping the page cache needs root)")
                continue
            wall, cpu, result = timed_check(path)
            print(f"quick_check {label}: {wall:.3f} s wall, {cpu:.3f} s CPU ({result})")


if __name__ == "__main__":
    main()
