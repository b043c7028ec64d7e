"""The supervisor's pieces: resident size, exit descriptions, log tails, the status file.
Its behaviour with a server that grows, crashes or is killed: tests/security/
test_local_server.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from pytest_summarybench.llm.local_supervisor import (
    LOG_PREFIX,
    Status,
    describe_exit,
    log_tail,
    read_rss,
)


def test_resident_size_of_a_live_process_and_none_for_a_gone_one() -> None:
    rss, peak = read_rss(os.getpid()) or (0, 0)
    assert 10 << 20 < rss <= peak  # this interpreter with pytest loaded
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert read_rss(child.pid) is None


def test_exits_and_signals_are_described() -> None:
    child = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    _, status = os.waitpid(child.pid, 0)
    assert describe_exit(status) == "exit 3"
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    child.send_signal(signal.SIGKILL)
    _, status = os.waitpid(child.pid, 0)
    assert describe_exit(status) == "signal 9 (SIGKILL)"


def test_log_tail_is_one_bounded_line_of_the_server_s_own_lines(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("--- 2026-11-22 starting x\nloading\n\nready\n"
                   f"{LOG_PREFIX} server pid 7\nboom: " + "x" * 1000 + "\n")
    tail = log_tail(log)
    assert "\n" not in tail and len(tail) == 400 and tail.startswith("...")
    assert LOG_PREFIX not in tail and "starting" not in tail
    assert log_tail(log, limit=10_000).startswith("loading | ready | boom: xxx")
    assert log_tail(tmp_path / "absent.log") == "(no log)"


def test_status_round_trips_and_a_torn_file_reads_as_none(tmp_path: Path) -> None:
    path = tmp_path / "s.status.json"
    Status(12, 300 << 20, 280 << 20, "local model server m died (exit 1; ...)").write(path)
    assert Status.read(path) == Status(12, 300 << 20, 280 << 20,
                                       "local model server m died (exit 1; ...)")
    path.write_text('{"server_pid": 1')
    assert Status.read(path) is None
