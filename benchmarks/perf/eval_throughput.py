"""Model calls of a whole benchmark run against one rate-limited provider (issue 20).

Usage::

    python benchmarks/perf/eval_throughput.py [--units 40] [--limit 20] [--latency 1.0]
        [--parallel 20] [--workers 0] [--checkout DIR]

The configuration of issue 20: an OpenAI-compatible fake provider on 127.0.0.1 that
accepts ``--limit`` requests of each model in any one-second window (429 with
Retry-After above; ``--shared-limit``: of all models together) and answers after
``--latency`` seconds; two models under test and one judge of another
family on it, each with ``requestsPerMinute = 60 * limit``; ``--units`` sampled units of
the sample codebase; judge (pointwise and pairwise) and contrastive with
``methods: [embedding, llm]``; ``parallel: --parallel``; one pytest process (``--workers
N`` adds ``-n N``). The run is one ``pytest -p summarybench benchmarks/summary``
subprocess on a fresh output directory.

It prints, from the provider's own log of the requests it answered: calls per phase; the
evaluation phase's calls per second (its requests from the first to the last, against
the limit); the whole run's calls per second; start-up (process start to first request);
the wall time against ``calls / limit`` and the bar ``1.25 * calls / limit +
start-up``; and, per evaluation phase, how many of its calls arrived before the last call
of the other evaluation phases (the contrastive-LLM calls made among the judge's, a count
that depends less on the machine's load than the rates do).

``--checkout DIR`` runs the session in another checkout of the repository (its package
and its ``benchmarks/summary``), to alternate with it side by side.
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

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402
from tests.fakes.scripted_provider import ScriptedProvider  # noqa: E402


def config(base_url: str, out: Path, args: argparse.Namespace) -> str:
    root = Path(args.checkout).resolve() if args.checkout else ROOT
    rpm = 60 * args.limit
    model = ("{{provider: local, model: {name}, apiEndpoint: '{url}', family: {family}, "
             "requestsPerMinute: {rpm}, temperature: 0.3}}")
    return "\n".join([
        "codebase: {root: '%s'}" % (root / "fixtures" / "sample_codebase"),
        "models:",
        "  test:",
        "    - " + model.format(name="alpha-7b", url=base_url, family="alpha", rpm=rpm),
        "    - " + model.format(name="beta-7b", url=base_url, family="beta", rpm=rpm),
        "  judge:",
        "    - " + model.format(name="gamma-judge", url=base_url, family="gamma", rpm=rpm),
        "evaluation:",
        f"  sampleSize: {args.units}",
        f"  parallel: {args.parallel}",
        "  judge: {enabled: true}",
        "  contrastive: {enabled: %s, methods: [embedding, llm]}" % (
            "false" if args.no_contrastive else "true"),
        "  retrieval: {enabled: false}",
        "  downstream: {enabled: false}",
        f"output: {{directory: '{out}'}}",
        ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=40)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--parallel", type=int, default=20)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--no-contrastive", action="store_true",
                        help="judge family only (no embedding work competing for the CPU)")
    parser.add_argument("--checkout", default=None,
                        help="run the session in this checkout of the repository")
    parser.add_argument("--shared-limit", action="store_true",
                        help="one window for all models (default: one per model, as "
                             "providers limit each model)")
    args = parser.parse_args()
    provider = ScriptedProvider()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(
            respond=provider, latency_s=args.latency, rate_limit_per_s=args.limit,
            limit_per_model=not args.shared_limit, max_lifetime_s=3600) as server:
        work = Path(tmp)
        (work / "summarybench.yaml").write_text(config(server.base_url, work / "out", args))
        root = Path(args.checkout).resolve() if args.checkout else ROOT
        command = [sys.executable, "-m", "pytest", "-p", "summarybench",
                   str(root / "benchmarks" / "summary"), "--sb-config",
                   str(work / "summarybench.yaml"), "-q", "-p", "no:cacheprovider",
                   "--rootdir", str(root)]
        if args.workers:
            command += ["-n", str(args.workers)]
        started = time.monotonic()
        done = subprocess.run(command, cwd=root, capture_output=True, text=True,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
        wall = time.monotonic() - started
        results = work / "out" / "results.json"
        ranking = (json.loads(results.read_text())["rankings"] if results.exists() else [])
        arrivals = sorted((t - args.latency, phase) for t, phase in provider.arrivals)
        status_429 = server.statuses[429]
    tail = done.stdout.strip().splitlines()[-1:] if done.stdout else []
    print(f"pytest exit {done.returncode}: {' '.join(tail)}")
    if done.returncode not in (0, 1):
        print(done.stdout[-3000:], done.stderr[-3000:])
    if not arrivals:
        print("no request reached the provider")
        return
    counts = provider.counts()
    total = len(arrivals)
    print("calls by phase: " + ", ".join(f"{p} {n}" for p, n in counts.items() if n)
          + f"; total {total}; answers 429: {status_429}")
    evaluation = [t for t, phase in arrivals if phase != "generation"]
    if len(evaluation) > 1:
        span = evaluation[-1] - evaluation[0]
        rate = (len(evaluation) - 1) / span if span > 0 else float("inf")
        print(f"evaluation phase: {len(evaluation)} calls in {span:.1f} s = {rate:.2f} calls/s"
              f" = {rate / args.limit:.2f} of the limit ({args.limit}/s)")
    span = arrivals[-1][0] - arrivals[0][0]
    print(f"whole run: {total} calls in {span:.1f} s = {(total - 1) / span:.2f} calls/s "
          f"= {(total - 1) / span / args.limit:.2f} of the limit")
    startup = arrivals[0][0] - started
    floor = total / args.limit
    bar = 1.25 * floor + startup
    print(f"wall {wall:.1f} s; start-up (process start to first request) {startup:.1f} s; "
          f"calls / limit {floor:.1f} s; bar 1.25 x {floor:.1f} + {startup:.1f} = "
          f"{bar:.1f} s: {'met' if wall <= bar else 'not met'}")
    for phase in counts:
        times = [t - started for t, p in arrivals if p == phase]
        if not times:
            continue
        line = f"  {phase}: {len(times)} calls from {times[0]:.1f} s to {times[-1]:.1f} s"
        others = [t - started for t, p in arrivals if p not in (phase, "generation")]
        if phase != "generation" and others:
            among = sum(1 for t in times if t <= others[-1])
            line += f"; {among} of {len(times)} before the other phases' last call"
        print(line)
    print("ranking: " + ", ".join(f"{r['modelId']} {r['overallScore']:.3f}" for r in ranking))
    # The run's own progress lines (stderr): how long its embedding phases took.
    for line in done.stderr.splitlines():
        if line.startswith("summarybench embedding"):
            print("  " + line.strip())


if __name__ == "__main__":
    main()
