"""Start-up and teardown of a generate-only job against a local server (issue 32).

Usage::

    python benchmarks/perf/startup.py [--prompts 400] [--rounds 5] [--base DIR]
        [--dev-plugins]

The job: ``--prompts`` functions (``harness_overhead.write_codebase``), one model under
test on an OpenAI-compatible server on 127.0.0.1 that answers at once (the test suite's
fake server with the scripted provider; no rate limit), ``parallel: 20``,
``pytest -p summarybench benchmarks/summary --sb-generate-only`` on a fresh output folder.
Per round it prints, from the server's own log of the requests it answered and the
command's resource use (``os.wait4``):

- process start to the first request (seconds), and the CPU the process had used by
  then (on a quiet machine the wall time is close to it: start-up is CPU-bound and
  Python runs one thread at a time);
- the last answer to the process's exit (seconds);
- peak resident memory (MiB) and the whole command's CPU time per call (ms);
- the call phase: calls per second between the first and the last request.

The job runs as a user's would: with compiled bytecode (``PYTHONDONTWRITEBYTECODE`` is
removed from its environment, and a first round, not counted, writes the bytecode and
pytest's rewritten plugin modules; an installed package has its bytecode from the
install), and without Hypothesis's pytest plugin, which our development dependencies
bring and a user's install does not (it imports all of Hypothesis at the terminal
summary, some 0.3 s after the last answer; ``--dev-plugins`` keeps it).

``--base DIR`` runs the same job with another checkout's package (``PYTHONPATH=DIR``)
round by round, alternated with this one, and prints both medians side by side. Issue 32
asks for at most 4 s to the first request, 1 s after the last answer, 250 MiB and 15 ms
of CPU per call; the load average is printed beside each round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from harness_overhead import write_codebase  # noqa: E402

from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402
from tests.fakes.scripted_provider import ScriptedProvider  # noqa: E402

FIGURES = ("to_first_s", "cpu_first_s", "after_last_s", "peak_mib", "cpu_ms_per_call",
           "calls_per_s")
BARS = {"to_first_s": 4.0, "after_last_s": 1.0, "peak_mib": 250.0, "cpu_ms_per_call": 15.0}


def config(base_url: str, work: Path, prompts: int) -> str:
    return "\n".join([
        f"codebase: {{root: '{work / 'code'}', languages: [python]}}",
        "models:",
        "  test:",
        f"    - {{provider: local, model: alpha-7b, apiEndpoint: '{base_url}', "
        "family: alpha}",
        "evaluation:",
        f"  sampleSize: {prompts}",
        "  parallel: 20",
        "extraction: {types: [function]}",
        ""])


class _Provider(ScriptedProvider):
    """The scripted provider, noting the job's CPU time when the first request came."""

    def __init__(self) -> None:
        super().__init__()
        self.pid: int | None = None
        self.cpu_first_s: float | None = None

    def __call__(self, body: dict[str, Any]) -> str:
        if self.cpu_first_s is None and self.pid is not None:
            self.cpu_first_s = _cpu_s(self.pid)
        return super().__call__(body)


def _cpu_s(pid: int) -> float:
    """User plus system CPU seconds of process ``pid`` so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_round(checkout: Path | None, prompts: int, dev_plugins: bool) -> dict[str, Any]:
    provider = _Provider()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(
            respond=provider, max_lifetime_s=3600) as server:
        work = Path(tmp)
        write_codebase(work, prompts)
        (work / "summarybench.yaml").write_text(config(server.base_url, work, prompts))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONUNBUFFERED"] = "1"
        if checkout is not None:
            env["PYTHONPATH"] = str(checkout)
        # The job runs in the measured checkout, with its rootdir (whose pytest
        # ``pythonpath`` puts it first on sys.path) and its test file: run from this
        # checkout, a base given on PYTHONPATH alone would not be the package measured.
        home = checkout or ROOT
        command = [sys.executable, "-P", "-m", "pytest", "-p", "summarybench",
                   str(home / "benchmarks" / "summary"), "--sb-config",
                   str(work / "summarybench.yaml"), "--sb-output", str(work / "out"),
                   "--sb-generate-only", "-q", "-p", "no:cacheprovider",
                   "--rootdir", str(home)]
        if not dev_plugins:
            command += ["-p", "no:hypothesispytest"]
        load = os.getloadavg()[0]
        with open(work / "output.txt", "w+") as output:
            started = time.monotonic()
            job = subprocess.Popen(command, cwd=home, stdout=output, stderr=subprocess.STDOUT,
                                   env=env)
            provider.pid = job.pid
            _, status, usage = os.wait4(job.pid, 0)
            ended = time.monotonic()
            job.returncode = os.waitstatus_to_exitcode(status)
            output.seek(0)
            text = output.read()
        arrivals = sorted(t for t, phase in provider.arrivals if phase == "generation")
    if job.returncode != 0 or len(arrivals) < 2:
        raise SystemExit(f"the job failed (exit {job.returncode}, {len(arrivals)} calls):\n"
                         f"{text[-6000:]}")
    calls = len(arrivals)
    return {"to_first_s": arrivals[0] - started, "cpu_first_s": provider.cpu_first_s,
            "after_last_s": ended - arrivals[-1],
            "peak_mib": usage.ru_maxrss / 1024.0,
            "cpu_ms_per_call": (usage.ru_utime + usage.ru_stime) * 1000.0 / calls,
            "calls_per_s": (calls - 1) / max(arrivals[-1] - arrivals[0], 1e-9),
            "calls": calls, "load": load}


def show(label: str, r: dict[str, Any]) -> None:
    print(f"{label:<6} first request {r['to_first_s']:5.2f} s (CPU {r['cpu_first_s']:4.2f} s)"
          f"  after last answer "
          f"{r['after_last_s']:5.2f} s  peak {r['peak_mib']:6.1f} MiB  CPU/call "
          f"{r['cpu_ms_per_call']:5.1f} ms  calls {r['calls']} at {r['calls_per_s']:6.1f}/s"
          f"  load {r['load']:.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--base", type=Path, default=None,
                        help="another checkout to run alternately (its package on PYTHONPATH)")
    parser.add_argument("--dev-plugins", action="store_true",
                        help="keep the development environment's Hypothesis plugin")
    args = parser.parse_args()
    variants: dict[str, Path | None] = {"this": ROOT}
    if args.base is not None:
        variants["base"] = args.base.resolve()
    results: dict[str, list[dict[str, Any]]] = {k: [] for k in variants}
    for checkout in variants.values():  # writes the bytecode; not counted
        one_round(checkout, args.prompts, args.dev_plugins)
    for _ in range(args.rounds):
        for label, checkout in variants.items():
            r = one_round(checkout, args.prompts, args.dev_plugins)
            results[label].append(r)
            show(label, r)
    medians: dict[str, dict[str, float]] = {}
    for label, rounds in results.items():
        medians[label] = {k: statistics.median(r[k] for r in rounds) for k in FIGURES}
        verdict = ", ".join(f"{k} {'met' if medians[label][k] <= bar else 'NOT met'} "
                            f"(<= {bar:g})" for k, bar in BARS.items())
        load = statistics.median(r["load"] for r in rounds)
        print(f"median {label}: " + "  ".join(f"{k} {v:.2f}"
                                              for k, v in medians[label].items())
              + f"; {verdict}; load {load:.1f}")
    if "base" in medians:
        print("ratio this/base: " + "  ".join(
            f"{k} {medians['this'][k] / medians['base'][k]:.2f}" for k in FIGURES
            if medians["base"][k]))


if __name__ == "__main__":
    main()
