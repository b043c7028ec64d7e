"""The supervisor of a local model server: starts it, bounds its memory, reports its end.

``python -m pytest_summarybench.llm.local_supervisor --state STATE --status STATUS --log
LOG --name NAME --max-rss-mb N MODULE -- SERVER-ARGS`` runs ``python -m MODULE
SERVER-ARGS`` (``llama_cpp.server``) as its child and watches it:

- its resident size (``VmRSS`` in ``/proc/<pid>/status``, every ``POLL_S``): above the
  limit the child is killed before the kernel has to pick a victim on a shared machine,
  and the child is the kernel's first pick anyway (``oom_score_adj`` 1000);
- its end: a child that exits or is killed by anyone (the kernel's OOM killer included)
  is reported in the status file with its exit code or signal, peak resident size and
  the last lines of its log, so that the processes using it fail their calls with that
  reason instead of starting a new server;
- its users: when no process listed in the state file is alive (or the file is gone),
  the child is stopped and the supervisor exits.

The status file is written only here (atomically); the state file is the pool's
(``llm/local.py``) and only read here.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

#: How often the child's resident size is read. llama.cpp grows by at most a few hundred
#: MB per request; a quarter second bounds the overshoot past the limit to what it can
#: allocate in that time, at a cost of one small /proc read.
POLL_S = 0.25
#: How often the users in the state file are checked.
USERS_POLL_S = 1.0
#: Seconds a stopped child has to exit after SIGTERM before SIGKILL.
STOP_GRACE_S = 10.0
#: The memory limit setting (MiB), and the default's terms: twice the weights file (mapped
#: weights plus a KV cache and buffers that grow with the model) plus 2 GiB for the
#: runtime and compute buffers, at most half the machine's memory.
MAX_RSS_ENV = "SUMMARYBENCH_LOCAL_MAX_RSS_MB"
BASE_ALLOWANCE = 2 << 30
MIB = 1 << 20
LOG_PREFIX = "summarybench supervisor:"


def machine_memory() -> int:
    """Bytes of physical memory (``MemTotal``)."""
    return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


def default_max_rss(weights_bytes: int, total: int | None = None) -> int:
    """The default limit for a server of ``weights_bytes`` weights, in bytes."""
    total = machine_memory() if total is None else total
    return min(2 * weights_bytes + BASE_ALLOWANCE, total // 2)


def read_rss(pid: int) -> tuple[int, int] | None:
    """``(VmRSS, VmHWM)`` of ``pid`` in bytes; None when it cannot be read (gone, or no
    /proc on this system)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) * 1024
    if "VmRSS" not in found:
        return None  # a zombie has no memory lines
    return found["VmRSS"], found.get("VmHWM", found["VmRSS"])


def oom_kills() -> int | None:
    """The kernel's count of OOM kills since boot (``/proc/vmstat``), None if unknown."""
    try:
        for line in Path("/proc/vmstat").read_text().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def log_tail(path: str | Path, lines: int = 3, limit: int = 400) -> str:
    """The last non-empty lines of a server log on one line, without the supervisor's
    own lines, at most ``limit`` characters."""
    try:
        text = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    kept = [line.strip() for line in text
            if line.strip() and not line.startswith((LOG_PREFIX, "--- "))]
    tail = " | ".join(kept[-lines:]) or "(empty log)"
    return tail if len(tail) <= limit else "..." + tail[-(limit - 3):]


def mib(value: int) -> str:
    return f"{value / MIB:,.0f} MiB"


@dataclass(frozen=True)
class Status:
    """What the supervisor says about its server: written at start and at the end."""

    server_pid: int
    limit_bytes: int
    peak_rss_bytes: int = 0
    ended: str | None = None
    """None while the server runs (or after a normal stop); else one line saying how it
    ended, which every later call to the model fails with."""

    @classmethod
    def read(cls, path: Path) -> Status | None:
        try:
            data = json.loads(path.read_text())
            return cls(server_pid=int(data["server_pid"]),
                       limit_bytes=int(data["limit_bytes"]),
                       peak_rss_bytes=int(data.get("peak_rss_bytes", 0)),
                       ended=data.get("ended"))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write(self, path: Path) -> None:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(asdict(self)))
        os.replace(tmp, path)


def describe_exit(status: int) -> str:
    """``exit N`` or ``signal N (NAME)`` from a ``wait`` status."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "unknown"
        return f"signal {number} ({name})"
    return f"exit {os.WEXITSTATUS(status) if os.WIFEXITED(status) else status}"


def _users_alive(state_path: Path) -> bool | None:
    """Whether a process listed in the state file is alive; None: no state file."""
    try:
        users = json.loads(state_path.read_text())["users"]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return True  # being rewritten: look again at the next poll
    for pid in users:
        try:
            os.kill(int(pid), 0)
            return True
        except ProcessLookupError:
            continue
        except (PermissionError, ValueError, TypeError):
            return True
    return False


def _child_setup() -> None:
    """In the server process before exec: die with the supervisor, and be the kernel's
    first choice should memory run out before the limit is seen."""
    with contextlib.suppress(OSError):
        Path("/proc/self/oom_score_adj").write_text("1000")
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Supervisor:
    """One server process and its watch (see the module doc)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.name: str = args.name
        self.state = Path(args.state)
        self.status_path = Path(args.status)
        self.log = Path(args.log)
        self.limit = int(args.max_rss_mb) * MIB
        self.command = [sys.executable, "-m", args.module, *args.server_args]
        self.peak = 0
        self.pid = 0
        """The server's pid, once started."""
        self._stop = False

    def say(self, text: str) -> None:
        print(f"{LOG_PREFIX} {text}", flush=True)

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._on_term)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the run's users stop us
        kills_before = oom_kills()
        # a session of its own: Ctrl-C in the terminal interrupts the run, whose exit
        # then stops the server, rather than killing the server under a call
        child = subprocess.Popen(self.command, stdin=subprocess.DEVNULL,
                                 preexec_fn=_child_setup,  # stdout/stderr: the log
                                 start_new_session=True)
        self.pid = child.pid
        Status(child.pid, self.limit).write(self.status_path)
        self.say(f"server pid {child.pid} for {self.name}, resident size limit "
                 f"{mib(self.limit)}")
        next_users = time.monotonic() + USERS_POLL_S
        seen_state = unwatched = False
        while True:
            done, wait_status, usage = os.wait4(child.pid, os.WNOHANG)
            if done:
                self.peak = max(self.peak, usage.ru_maxrss * 1024)
                return self._died(wait_status, kills_before)
            rss = read_rss(child.pid)
            if rss is not None:
                self.peak = max(self.peak, rss[1])
                if rss[0] > self.limit:
                    return self._over_limit(child.pid, rss[0])
            elif not Path("/proc/self/status").exists() and not unwatched:
                unwatched = True  # no /proc: the limit cannot be enforced here
                self.say("no /proc on this system: the resident size limit is not enforced")
            if time.monotonic() >= next_users:
                next_users = time.monotonic() + USERS_POLL_S
                alive = _users_alive(self.state)
                # the starter writes the state file just after starting us: a file not yet
                # seen is not a file removed
                seen_state = seen_state or alive is not None
                self._stop = self._stop or (seen_state and not alive)
            if self._stop:
                return self._shut_down(child.pid)
            time.sleep(POLL_S)

    def _on_term(self, *_: object) -> None:
        self._stop = True

    def _end(self, pid: int, reason: str | None) -> None:
        Status(pid, self.limit, self.peak, reason).write(self.status_path)
        self.say(reason or f"server stopped; peak resident size {mib(self.peak)} "
                           f"(limit {mib(self.limit)})")

    def _died(self, wait_status: int, kills_before: int | None) -> int:
        how = describe_exit(wait_status)
        kills_after = oom_kills()
        if (os.WIFSIGNALED(wait_status) and os.WTERMSIG(wait_status) == signal.SIGKILL
                and None not in (kills_before, kills_after) and kills_after != kills_before):
            how += ", while the kernel's out-of-memory killer was killing processes"
        self._end(self.pid, f"local model server {self.name} died ({how}; peak resident "
                            f"size {mib(self.peak)}, limit {mib(self.limit)}; last lines of "
                            f"its log: {log_tail(self.log)})")
        return 1

    def _over_limit(self, pid: int, rss: int) -> int:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        self.peak = max(self.peak, rss)
        self._end(pid, f"local model server {self.name} was stopped: its resident size "
                       f"{mib(rss)} went over the limit of {mib(self.limit)} (set "
                       f"{MAX_RSS_ENV} to change it); last lines of its log: "
                       f"{log_tail(self.log)}")
        return 1

    def _shut_down(self, pid: int) -> int:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while time.monotonic() < deadline:
            done, _, usage = os.wait4(pid, os.WNOHANG)
            if done:
                self.peak = max(self.peak, usage.ru_maxrss * 1024)
                break
            time.sleep(0.05)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        self._end(pid, None)
        return 0


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m pytest_summarybench.llm.local_supervisor",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--state", required=True, help="the pool's state file (its users)")
    parser.add_argument("--status", required=True, help="the status file written here")
    parser.add_argument("--log", required=True, help="the server's log (for its last lines)")
    parser.add_argument("--name", required=True, help="the model's name, for messages")
    parser.add_argument("--max-rss-mb", type=int, required=True,
                        help="stop the server above this resident size (MiB)")
    parser.add_argument("module", help="the server module (llama_cpp.server)")
    parser.add_argument("server_args", nargs=argparse.REMAINDER,
                        help="-- then the server's arguments")
    args = parser.parse_args(argv)
    if args.server_args[:1] == ["--"]:
        args.server_args = args.server_args[1:]
    return args


def main(argv: list[str] | None = None) -> None:
    raise SystemExit(Supervisor(parse(sys.argv[1:] if argv is None else argv)).run())


if __name__ == "__main__":
    main()
