"""Generation throughput against a provider rate limit, and the resume / re-run figures.

Usage::

    python benchmarks/perf/generation_throughput.py [--units 1000] [--limit 50]
        [--latency 0.1] [--parallel 16] [--no-kill] [--no-client-limit]

Everything runs against the local fake OpenAI-compatible server of the test suite (no
network, a fake key). The server answers after ``--latency`` seconds and with 429 +
Retry-After to requests above ``--limit`` per second; the model is configured with the
same limit (``requestsPerMinute = 60 * limit``), as a user would (``--no-client-limit``:
not configured, so only the server's 429s and Retry-After pace the calls). It prints:

1. the dry run for the configuration (and checks it made zero calls);
2. the generation of ``--units`` summaries: achieved calls per second next to the limit,
   429s received, summaries lost;
3. a second run over the same configuration: calls made (should be 0);
4. unless ``--no-kill``: a run killed with SIGKILL at about 30% and started again, with
   the server's count of successful calls per summary.

litellm is imported and one warm-up call made (to another server) before timing, so the
rate is the sustained one, not litellm's start-up.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pytest_summarybench.context import RunContext  # noqa: E402
from pytest_summarybench.engine.estimate import estimate_generation, format_estimate  # noqa: E402
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES  # noqa: E402
from pytest_summarybench.generate import (  # noqa: E402
    run_generation,
)
from pytest_summarybench.llm import complete  # noqa: E402
from pytest_summarybench.schemas import CodeUnit, ModelConfig, Parameter, UnitMetadata  # noqa: E402
from pytest_summarybench.settings import load_settings  # noqa: E402
from pytest_summarybench.store import Store  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402

FAKE_KEY = "sk-fake-benchmark-key"


def make_units(n: int) -> list[CodeUnit]:
    """``n`` distinct Python functions."""
    units = []
    for i in range(n):
        name = f"apply_discount_{i}"
        content = (f"def {name}(price: float, rate: float = 0.{i % 9 + 1}) -> float:\n"
                   f"    if rate < 0 or rate > 1:\n"
                   f"        raise ValueError('rate {i} out of range')\n"
                   f"    return round(price * (1 - rate), 2)\n")
        units.append(CodeUnit(
            id=f"bench-{i:05d}", path=f"shop/pricing_{i // 100}.py", name=name,
            type="function", language="python", content=content,
            metadata=UnitMetadata(start_line=1, end_line=4,
                                  signature=content.splitlines()[0],
                                  parameters=[Parameter(name="price", type="float"),
                                              Parameter(name="rate", type="float",
                                                        optional=True)],
                                  return_type="float")))
    return units


def context(workdir: Path, store: Path, base_url: str, limit: float | None,
            run_id: str) -> RunContext:
    settings = load_settings(None, {
        "models.test": [{"provider": "openai", "model": "gpt-4o", "apiEndpoint": base_url,
                         "requestsPerMinute": limit * 60 if limit else None}],
        "output.directory": str(workdir / "out")}, base_dir=workdir, families=BUILTIN_FAMILIES)
    return RunContext(settings, Store(store), run_id)


def warm_up() -> None:
    with FakeOpenAIServer() as server:
        model = ModelConfig(provider="openai", model_name="gpt-4o",
                            api_endpoint=server.base_url)
        complete(model, [{"role": "user", "content": "warm-up"}])


def throughput(args: argparse.Namespace, workdir: Path) -> None:
    units = make_units(args.units)
    store_path = workdir / "throughput.sqlite"
    Store(store_path).save_units("run-1", units, {u.id for u in units})
    with FakeOpenAIServer(latency_s=args.latency, rate_limit_per_s=args.limit) as server:
        client_limit = None if args.no_client_limit else args.limit
        ctx = context(workdir, store_path, server.base_url, client_limit, "run-1")
        print("== dry run")
        for line in format_estimate(estimate_generation(ctx)):
            print(line)
        print(f"calls made by the dry run: {server.chat_requests}")

        print(f"\n== generation: {args.units} summaries, limit {args.limit:g} req/s, "
              f"latency {args.latency * 1000:.0f} ms, parallel {args.parallel}, "
              f"client-side limit {'none' if client_limit is None else client_limit}")
        started = time.monotonic()
        report = run_generation(ctx, parallel=args.parallel, progress=True)
        elapsed = time.monotonic() - started
        rate = server.successes / elapsed
        lost = sum(ctx.refreshed().summary(u.id, "openai/gpt-4o") is None for u in units)
        print(f"achieved rate: {rate:.1f} calls/s vs limit {args.limit:g}/s "
              f"({100 * rate / args.limit:.1f}% of the limit) over {elapsed:.1f}s")
        print(f"successful calls: {server.successes}, 429 answers: {server.statuses[429]}, "
              f"errors: {report.errors}, summaries lost: {lost}")

        print("\n== second run over the same configuration")
        before = server.chat_requests
        again = run_generation(ctx, parallel=args.parallel, progress=False)
        print(f"calls made: {server.chat_requests - before} "
              f"(reused {again.reused}, generated {again.generated})")


def kill_and_resume(args: argparse.Namespace, workdir: Path) -> None:
    n = min(args.units, 300)
    units = make_units(n)
    store_path = workdir / "resume.sqlite"
    Store(store_path).save_units("run-1", units, {u.id for u in units})
    child_script = ROOT / "tests" / "generate" / "generation_child.py"
    env = {**os.environ, "OPENAI_API_KEY": FAKE_KEY, "PYTHONPATH": str(ROOT)}
    with FakeOpenAIServer(latency_s=args.latency) as server:
        print(f"\n== SIGKILL at ~30% of {n} summaries, then start again")
        child = subprocess.Popen([sys.executable, str(child_script), str(store_path),
                                  server.base_url, "run-1", str(args.parallel)], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while server.successes < 0.3 * n and child.poll() is None:
            time.sleep(0.01)
        server.pause()  # hold answers in flight while the child is killed
        time.sleep(0.5)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        server.resume()
        at_kill = server.successes
        ctx = context(workdir, store_path, server.base_url, args.limit, "run-1")
        report = run_generation(ctx, parallel=args.parallel, progress=False)
        counts = server.successes_by_fingerprint.values()
        print(f"successful calls before the kill: {at_kill}, after the restart: "
              f"{report.calls}, total: {server.successes} for {n} summaries "
              f"(max per summary: {max(counts)}, answers abandoned by the kill: "
              f"{server.abandoned})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--limit", type=float, default=50.0, help="requests per second")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per answer")
    parser.add_argument("--parallel", type=int, default=16)
    parser.add_argument("--no-kill", action="store_true")
    parser.add_argument("--no-client-limit", action="store_true",
                        help="leave requestsPerMinute unset: pacing from 429s alone")
    args = parser.parse_args()
    os.environ["OPENAI_API_KEY"] = FAKE_KEY  # never a real key: the server is local
    warm_up()
    with tempfile.TemporaryDirectory(prefix="sb-generation-") as tmp:
        throughput(args, Path(tmp))
        if not args.no_kill:
            kill_and_resume(args, Path(tmp))


if __name__ == "__main__":
    main()
