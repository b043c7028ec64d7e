"""Generation against a provider's strict one-second window: exact pacing vs adaptive.

Usage::

    python benchmarks/perf/rate_limits.py [--limits 10 20 50] [--latencies 0.1 0.5]
        [--seconds 15] [--retry-after ms whole] [--rpm set unset] [--rounds 1]
        [--pacings exact adaptive slow-probe] [--transient N]

Every configuration generates about ``--seconds`` worth of summaries (``limit x
seconds`` units) through ``run_generation`` against the test suite's fake
OpenAI-compatible server, which answers 429 to any request above ``limit`` accepted in
the last second. The model is configured with that limit (``requestsPerMinute = 60 x
limit``). Each configuration runs twice in a row, on a fresh store, with:

- ``exact``: the pacing before issue 20 (evenly at exactly the limit, a 429's
  Retry-After pauses the callers that book a slot after it);
- ``adaptive``: the default (``llm/limits.py``: 95% of the limit, a check of the actual
  send times against the window, slower on 429 and back gradually, Retry-After for
  every caller).

``--retry-after ms``: the server sends ``retry-after-ms`` (the time until the window has
room) as well as ``Retry-After`` in whole seconds; ``whole``: only ``Retry-After``
(rounded up to 1 s), as providers that do not send the milliseconds. ``--rpm unset``:
runs without ``requestsPerMinute`` (pacing from the 429s alone), at the first latency.
Concurrency is enough to reach the limit at the given latency (``max(16, 1.5 x limit x
latency)``).

Printed per run: achieved successful calls per second as a fraction of the limit (over
the whole generation, start-up included), 429 answers, errors; with ``--rounds`` above
1, each configuration's worst and median fraction and its range of 429s. The two pacings
alternate, so that both meet the same load on a shared machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generation_throughput import FAKE_KEY, context, make_units, warm_up  # noqa: E402

from pytest_summarybench.generate import run_generation  # noqa: E402
from pytest_summarybench.llm.endpoints import Endpoints  # noqa: E402
from pytest_summarybench.llm.limits import (  # noqa: E402
    DEFAULT_PACING,
    EXACT_PACING,
    Pacing,
)
from pytest_summarybench.store import Store  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer, faults_from  # noqa: E402

PACINGS = {"exact": EXACT_PACING, "adaptive": DEFAULT_PACING,
           # adaptive as it was before the fast first probe: past the estimate of one
           # congestion event the pace climbed as slowly as after several
           "slow-probe": Pacing(first_probe=None)}


@dataclass
class Outcome:
    rate: float
    limit: float
    rate_limited: int
    errors: int
    elapsed: float

    @property
    def fraction(self) -> float:
        return self.rate / self.limit


def generate(workdir: Path, name: str, pacing: Pacing, *, limit: float, latency: float,
             retry_after_ms: bool, configured: bool, seconds: float,
             transient: int | None = None) -> Outcome:
    units = make_units(max(20, round(limit * seconds)))
    store_path = workdir / f"{name}.sqlite"
    Store(store_path).save_units("run-1", units, {u.id for u in units})
    parallel = max(16, math.ceil(1.5 * limit * latency))
    with FakeOpenAIServer(latency_s=latency,
                          rate_limit_per_s=None if transient else limit,
                          faults=faults_from({transient: "429"}) if transient else None,
                          retry_after_ms=retry_after_ms) as server:
        ctx = context(workdir, store_path, server.base_url, limit if configured else None,
                      "run-1")
        # a session of its own: fresh limiters (pacing as asked) and breakers
        ctx = dataclasses.replace(ctx, endpoints=Endpoints(pacing=pacing))
        started = time.monotonic()
        report = run_generation(ctx, parallel=parallel, progress=False)
        elapsed = time.monotonic() - started
        return Outcome(server.successes / elapsed, limit, server.statuses[429],
                       report.errors, elapsed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limits", type=float, nargs="+", default=[10.0, 20.0, 50.0])
    parser.add_argument("--latencies", type=float, nargs="+", default=[0.1, 0.5])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--retry-after", nargs="+", choices=["ms", "whole"],
                        default=["ms", "whole"])
    parser.add_argument("--rpm", nargs="+", choices=["set", "unset"], default=["set"],
                        help="configure requestsPerMinute, or leave it unset")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--pacings", nargs="+", choices=sorted(PACINGS),
                        default=["exact", "adaptive"])
    parser.add_argument("--transient", type=int, metavar="N",
                        help="no rate limit on the server, one 429 (Retry-After 1 s) at its "
                             "N-th request instead; requestsPerMinute unset; the fraction "
                             "is of --limits, the demand's scale")
    args = parser.parse_args()
    pacings = {name: PACINGS[name] for name in args.pacings}
    os.environ["OPENAI_API_KEY"] = FAKE_KEY  # never a real key: the server is local
    warm_up()
    configs = [(limit, latency, ra, True) for ra in args.retry_after
               for limit in args.limits for latency in args.latencies] \
        if "set" in args.rpm else []
    if "unset" in args.rpm:
        configs += [(limit, args.latencies[0], ra, False) for ra in args.retry_after
                    for limit in args.limits]
    if args.transient:
        configs = [(limit, args.latencies[0], ra, False) for ra in args.retry_after
                   for limit in args.limits]
    print("limit  latency  Retry-After  rpm set | "
          + " | ".join(f"{name}: rate/limit  429s  err" for name in pacings))
    results: dict[tuple[float, float, str, bool], dict[str, list[Outcome]]] = {}
    with tempfile.TemporaryDirectory(prefix="sb-ratelimits-") as tmp:
        for i, config in enumerate(configs):
            limit, latency, ra, configured = config
            for r in range(args.rounds):
                got = {name: generate(Path(tmp), f"c{i}-r{r}-{name}", pacing, limit=limit,
                                      latency=latency, retry_after_ms=ra == "ms",
                                      configured=configured, seconds=args.seconds,
                                      transient=args.transient)
                       for name, pacing in pacings.items()}
                for name, outcome in got.items():
                    results.setdefault(config, {}).setdefault(name, []).append(outcome)
                cells = "  | ".join(f"{o.rate:6.1f}/s {o.fraction:6.1%} {o.rate_limited:5d} "
                                    f"{o.errors:4d}" for o in got.values())
                print(f"{limit:5g}  {latency:6.2f}s  {ra:>11}  {'yes' if configured else 'no':>7} "
                      f"| {cells}", flush=True)
    if args.rounds > 1:
        print(f"\nover {args.rounds} rounds: rate/limit min / median, 429s per run min-max")
        for (limit, latency, ra, configured), by_name in results.items():
            cells = []
            for name, runs in by_name.items():
                fractions = sorted(o.fraction for o in runs)
                limited = sorted(o.rate_limited for o in runs)
                cells.append(f"{name}: {fractions[0]:6.1%} / {statistics.median(fractions):6.1%}"
                             f"  {limited[0]}-{limited[-1]}")
            print(f"{limit:5g}  {latency:6.2f}s  {ra:>5}  {'rpm' if configured else 'none':>4}"
                  f" | {' | '.join(cells)}")


if __name__ == "__main__":
    main()
