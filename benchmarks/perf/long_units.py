"""What long but legal units cost a default offline run: seconds and peak memory.

Usage::

    python benchmarks/perf/long_units.py [--sizes 8:2 30:4 300:20] [--timeout 300]

Each size ``FILES:SAMPLE`` builds a codebase of ``FILES`` Python files, each one function
of 497 lines of 400 characters (``tests/fakes/hostile.py``'s ``long_unit``: some 200 KB,
two units a file with the file itself), writes a configuration with ``summarybench init``
and ``config --sample-size SAMPLE``, and times ``summarybench run`` in a child process:
wall seconds, the child's peak resident memory (``wait4``), the load average before and
after. A run still going after ``--timeout`` seconds is killed and reported as such, with
its peak so far. With ``PYTHONPATH`` at another checkout, the runs measure that one.
Figures: docs/performance.md ("Long units").
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

from tests.fakes.hostile import long_unit  # noqa: E402 - after the path is set


def summarybench(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest_summarybench.cli", *args]


def measure(files: int, sample: int, timeout_s: float) -> str:
    with tempfile.TemporaryDirectory(prefix="sb-long-units-") as tmp:
        project = Path(tmp)
        code = project / "code"
        code.mkdir()
        for i in range(files):
            (code / f"f{i}.py").write_text(long_unit(i), encoding="utf-8")
        for args in (("init", "--name", "long units", "--codebase", "./code"),
                     ("config", "--sample-size", str(sample))):
            subprocess.run(summarybench(*args), cwd=project, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        load0 = os.getloadavg()[0]
        start = time.monotonic()
        child = subprocess.Popen(summarybench("run"), cwd=project,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ended = "ended"
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout_s:
                child.send_signal(signal.SIGTERM)
                pid, status, usage = os.wait4(child.pid, 0)
                ended = "killed at the timeout"
                break
            time.sleep(0.2)
        wall = time.monotonic() - start
        code_ = os.waitstatus_to_exitcode(status)
        return (f"{files} files, sample {sample}: {wall:.1f} s, peak {usage.ru_maxrss // 1024}"
                f" MB, {ended} (exit {code_}), load {load0:.1f} -> {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["8:2", "30:4", "300:20"])
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    for size in args.sizes:
        files, sample = (int(x) for x in size.split(":"))
        print(measure(files, sample, args.timeout), flush=True)


if __name__ == "__main__":
    main()
