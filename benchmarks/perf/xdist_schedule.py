"""How two xdist workers would share the test suite under each scheduler and test order.

Usage::

    pytest --cov -n 2 --durations=80 -q > durations.log
    python benchmarks/perf/xdist_schedule.py durations.log [--workers 2] \\
        [--session-seconds 2 4 6 --other-seconds 0.05]

Replays the rules of pytest-xdist's ``--dist load`` (a first chunk of a quarter of each
worker's share in collection order, then refills from the queue as a worker runs low,
holding back while a worker is busy with long tests) and ``--dist worksteal`` (each
worker starts with its half; a worker that runs dry takes the later half of the longest
queue) over the collection (``pytest --co -q``) and the durations the log lists. Tests
the log does not list (``--durations=N`` names the N longest) share what is left of the
run's work equally (workers x the run's wall time, less the listed durations), or, with
``--session-seconds``, take that many seconds each when they start pytest sessions (they
use ``pytester`` or are marked ``slow``) and ``--other-seconds`` otherwise. Prints the
finishing time of each scheduler for the collection order and for the modules with the
most time first, against a perfect split of the same work.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def listed_durations(log: str) -> tuple[dict[str, float], float]:
    """Seconds per test id (setup, call and teardown added) and the run's wall time."""
    seconds: dict[str, float] = {}
    for found in re.finditer(r"^\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+)", log, re.M):
        seconds[found.group(2)] = seconds.get(found.group(2), 0.0) + float(found.group(1))
    wall = re.findall(r" in ([\d.]+)s", log)
    if not wall:
        raise SystemExit("the log has no closing line ('... in N s')")
    return seconds, float(wall[-1])


#: A plugin for ``pytest --co``: each collected test id, and whether it starts sessions.
FLAGGER = """
import json, os

def pytest_collection_finish(session):
    flags = [[item.nodeid, "pytester" in getattr(item, "fixturenames", ())
              or item.get_closest_marker("slow") is not None] for item in session.items]
    with open(os.environ["SB_SCHEDULE_OUT"], "w") as out:
        json.dump(flags, out)
"""


def collection() -> list[tuple[str, bool]]:
    """The suite's test ids in collection order, each with whether it starts sessions."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "sb_schedule_flags.py").write_text(FLAGGER)
        env = {**os.environ, "SB_SCHEDULE_OUT": str(Path(tmp) / "flags.json"),
               "PYTHONPATH": os.pathsep.join(filter(None, [tmp, os.environ.get("PYTHONPATH")]))}
        subprocess.run([sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider",
                        "-p", "sb_schedule_flags"], cwd=ROOT, env=env, capture_output=True,
                       check=True)
        return [(nodeid, bool(flag)) for nodeid, flag in
                json.loads((Path(tmp) / "flags.json").read_text())]


def load(times: list[float], workers: int) -> float:
    """``--dist load`` (xdist 3.x ``LoadScheduling``): when every worker finishes."""
    pending = list(range(len(times)))
    queues: list[list[int]] = [[] for _ in range(workers)]
    chunk = max(min(len(times) // workers // 4, len(times)), 2)
    for queue in queues:
        queue += pending[:chunk]
        del pending[:chunk]
    events = [(times[q[0]], k) for k, q in enumerate(queues) if q]
    heapq.heapify(events)
    end = 0.0
    while events:
        now, k = heapq.heappop(events)
        last = times[queues[k].pop(0)]
        if pending:
            low = max(2, len(pending) // workers // 4)
            high = max(2, len(pending) // workers // 2)
            queue = queues[k]
            if len(queue) < low and not (last >= 0.1 and len(queue) >= 2):
                more = high - len(queue)
                queue += pending[:more]
                del pending[:more]
        if queues[k]:
            heapq.heappush(events, (now + times[queues[k][0]], k))
        end = max(end, now)
    return end


def worksteal(times: list[float], workers: int) -> float:
    """``--dist worksteal`` (``WorkStealingScheduling``): when every worker finishes."""
    n = len(times)
    queues = [list(range(k * n // workers, (k + 1) * n // workers)) for k in range(workers)]
    events = [(times[q[0]], k) for k, q in enumerate(queues) if q]
    heapq.heapify(events)
    end = 0.0
    while events:
        now, k = heapq.heappop(events)
        queues[k].pop(0)
        if len(queues[k]) < 2:
            victim = max((j for j in range(workers) if j != k), key=lambda j: len(queues[j]),
                         default=None)
            if victim is not None:
                steal = min(len(queues[victim]) // 2, max(0, len(queues[victim]) - 2))
                if steal:
                    queues[k] += queues[victim][-steal:]
                    del queues[victim][-steal:]
        if queues[k]:
            heapq.heappush(events, (now + times[queues[k][0]], k))
        end = max(end, now)
    return end


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", type=Path, help="the output of a run with --durations=N")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--session-seconds", type=float, nargs="*", default=[],
                        help="seconds of each unlisted test that starts sessions (several: "
                             "one replay each)")
    parser.add_argument("--other-seconds", type=float, default=0.05)
    args = parser.parse_args(argv)
    seconds, wall = listed_durations(args.log.read_text(errors="replace"))
    tests = collection()
    ids = [nodeid for nodeid, _ in tests]
    known = [i for i in ids if i in seconds]
    print(f"{len(ids)} tests collected, {sum(s for _, s in tests)} start sessions, "
          f"{len(known)} with listed durations ({sum(seconds[i] for i in known):.0f} s)")
    rest = max(0.0, args.workers * wall - sum(seconds[i] for i in known))
    each = rest / max(1, len(ids) - len(known))
    guesses = [(f"the others {each:.3f} s each", {i: each for i in ids})]
    guesses += [(f"sessions {s:g} s, the others {args.other_seconds:g} s",
                 {i: s if starts else args.other_seconds for i, starts in tests})
                for s in args.session_seconds]
    for label, unlisted in guesses:
        by_id = {i: seconds.get(i, unlisted[i]) for i in ids}
        modules: dict[str, list[str]] = {}
        for i in ids:
            modules.setdefault(i.split("::", 1)[0], []).append(i)
        heavy_first = [i for m in sorted(modules, key=lambda m: -sum(by_id[t]
                                                                    for t in modules[m]))
                       for i in modules[m]]
        print(f"{label}: a perfect split {sum(by_id.values()) / args.workers:.0f} s")
        for name, order in (("collection order", ids), ("longest modules first", heavy_first)):
            times = [by_id[i] for i in order]
            print(f"  {name:>21}: load {load(times, args.workers):.0f} s, "
                  f"worksteal {worksteal(times, args.workers):.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
