"""Crash safety: SIGKILL a benchmark run at ten random points, restart it each time, and
compare the final results with an uninterrupted run's.

Usage::

    python benchmarks/perf/soak_crash.py [--functions 40] [--kills 10] [--seed 0]
        [--latency 0.05] [--keep DIR]

Two identical projects are built (the reliability suite's: ``--functions`` functions, one
model under test and one judge, both OpenAI-compatible models on a local fake server with
``--latency`` seconds per answer, and two evaluators of which one calls the judge), each
with a fake server of its own so their call counts do not mix:

1. the reference: one uninterrupted ``pytest`` run;
2. the soak: ``--kills`` times, a run is started and killed with SIGKILL (its whole
   process group): half of the kills once the server has answered a random number of
   calls in total (random points of the model work, which a restart resumes), half at
   a random moment between 5% and 95% of the reference's duration (start-up, collection,
   evaluation, record writes, the session end); then a last run finishes. Before each
   kill the server holds its answers back, so an answer is either delivered to a live
   client or never delivered (as when a machine dies with requests in flight).

It prints the kill moments, what each restart found done, and compares: the rankings of
``results.json`` (model, rank, overall and family scores, scored items and errors), every
stored score record, and the fake server's count of successful calls per request
fingerprint, which must be 1 everywhere (no call that succeeded is made again).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402
from tests.fakes.project import TEST_MODULE  # noqa: E402
from tests.fakes.reliability_project import EVALUATORS, function_source  # noqa: E402

FAKE_KEY = "sk-fake-soak-key"


def build(project: Path, functions: int, base_url: str) -> None:
    for start in range(0, functions, 10):
        path = project / "code" / f"rules_{start // 10}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(function_source(i)
                                for i in range(start, min(functions, start + 10))))
    (project / "conftest.py").write_text(textwrap.dedent(EVALUATORS))
    (project / "test_bench.py").write_text(textwrap.dedent(TEST_MODULE))
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider "
                                        "-p no:randomly\n")
    (project / "summarybench.yaml").write_text(textwrap.dedent(f"""
        name: soak
        codebase: {{root: code, languages: [python]}}
        extraction: {{types: [function]}}
        models:
          test: [{{provider: openai, model: gpt-4o-mini, apiEndpoint: "{base_url}"}}]
          judge: [{{provider: openai, model: gpt-4o, apiEndpoint: "{base_url}"}}]
        evaluation:
          sampling: all
          sampleSize: {functions}
          parallel: 4
          judge: {{enabled: false}}
          retrieval: {{enabled: false}}
          downstream: {{enabled: false}}
        output: {{directory: out, formats: [json]}}
        """))


def start(project: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "OPENAI_API_KEY": FAKE_KEY, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "summarybench"],
                            cwd=project, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def records(project: Path) -> set[tuple[str, str, str, str]]:
    """(unit, model, evaluator, metrics or error) of every stored record."""
    conn = sqlite3.connect(project / "out" / "store.sqlite")
    try:
        rows = conn.execute("SELECT unit_id, model_id, evaluator, json FROM records").fetchall()
    finally:
        conn.close()
    out = set()
    for unit, model, evaluator, text in rows:
        data = json.loads(text)
        out.add((unit, model, evaluator,
                 json.dumps(data.get("metrics") or data.get("error"), sort_keys=True)))
    return out


def rankings(project: Path) -> list[tuple[Any, ...]]:
    data = json.loads((project / "out" / "results.json").read_text())
    return [(r["modelId"], r["rank"], r["overallScore"], json.dumps(r["scores"], sort_keys=True),
             r.get("scoredItems"), r.get("errors")) for r in data["rankings"]]


def stored_count(project: Path, table: str) -> int:
    path = project / "out" / "store.sqlite"
    if not path.exists():
        return 0
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    except sqlite3.OperationalError:  # killed before the table existed
        return 0
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, default=60)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = args.keep or Path(tempfile.mkdtemp(prefix="sb-soak-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        with FakeOpenAIServer(latency_s=args.latency) as ref_server, \
                FakeOpenAIServer(latency_s=args.latency) as soak_server:
            reference, soak = work / "reference", work / "soak"
            build(reference, args.functions, ref_server.base_url)
            build(soak, args.functions, soak_server.base_url)

            started = time.monotonic()
            code = start(reference).wait()
            duration = time.monotonic() - started
            print(f"reference: uninterrupted run of {args.functions} units x 1 model x 2 "
                  f"evaluators in {duration:.1f}s (exit {code}), "
                  f"{ref_server.successes} successful calls")

            # Kill points: half after a random number of successful calls (during
            # generation and the judge calls), half at a random moment of a run (also
            # start-up, collection, the record writes and the session end). A run that
            # finishes before its moment is not a kill: the next moment is drawn within
            # the duration that run took, until --kills runs were really killed.
            total = ref_server.successes
            targets = sorted(rng.sample(range(1, total), args.kills // 2))
            span = duration
            kills = finished_runs = 0
            while kills < args.kills:
                by_calls = kills < len(targets)
                value = (float(targets[kills]) if by_calls
                         else rng.uniform(0.05, 0.95) * span)
                proc = start(soak)
                began = time.monotonic()
                while proc.poll() is None and (
                        soak_server.successes < value if by_calls
                        else time.monotonic() - began < value):
                    time.sleep(0.005)
                at = (f"after {value:.0f} successful calls" if by_calls
                      else f"at {value:.1f}s")
                soak_server.pause()  # answers in flight are held, then never delivered
                time.sleep(0.2)
                finished = proc.poll() is not None
                if finished:
                    finished_runs += 1
                    span = time.monotonic() - began - 0.2
                    print(f"run finished in {span:.1f}s before the point {at}: not a "
                          f"kill; the next point is drawn within {span:.1f}s")
                else:
                    os.killpg(proc.pid, signal.SIGKILL)
                    kills += 1
                proc.wait()
                soak_server.resume()
                if not finished:
                    print(f"kill {kills:2d} {at}: store holds "
                          f"{stored_count(soak, 'llm_cache')} cached answers, "
                          f"{stored_count(soak, 'records')} records; server: "
                          f"{soak_server.successes} successful calls so far, "
                          f"{soak_server.abandoned} answers never delivered")
            code = start(soak).wait()
            print(f"final run: exit {code}")

            same_rankings = rankings(reference) == rankings(soak)
            same_records = records(reference) == records(soak)
            counts = soak_server.successes_by_fingerprint
            repeated = {k: v for k, v in counts.items() if v > 1}
            print(f"rankings equal to the uninterrupted run's: {same_rankings}")
            print(f"score records equal ({len(records(soak))} records): {same_records}")
            print(f"successful calls: {soak_server.successes} with {kills} kills "
                  f"({finished_runs} runs finished before their point) vs "
                  f"{ref_server.successes} uninterrupted; distinct requests "
                  f"{len(counts)}; requests that succeeded more than once: {len(repeated)}")
            ok = same_rankings and same_records and not repeated \
                and soak_server.successes == ref_server.successes
            print(f"crash safety: {'met' if ok else 'NOT met'}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
