"""A control group per sandboxed run: the total of its processes and of its memory capped.

Resource limits are per process (and the kernel exempts root from RLIMIT_NPROC); a
cgroup caps the run as a whole, whatever its processes do: ``pids`` (a fork bomb) and
``memory`` (many processes each under their address-space limit, files in the run's
in-memory file systems, which are charged to it). Both cgroup v1 (one group per
controller) and v2 (one group, where the parent delegates the controllers) are handled.
Creating groups needs write access to the hierarchy (root, or a delegated subtree);
elsewhere the run has no ``cgroup`` layer and says so.

Groups are named ``summarybench-sandbox-<owner pid>-<random>``: a run whose owner was
killed outright leaves its group behind, and ``sweep_stale`` (called before each run)
kills what is left in it and removes it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import time
from pathlib import Path

PREFIX = "summarybench-sandbox-"
#: cgroup v1 hierarchies by controller, and the v2 root.
V1_ROOTS = {"pids": Path("/sys/fs/cgroup/pids"), "memory": Path("/sys/fs/cgroup/memory")}
V2_ROOT = Path("/sys/fs/cgroup")


def _is_v2(root: Path) -> bool:
    return (root / "cgroup.controllers").exists()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _procs(group: Path) -> list[int]:
    try:
        return [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill_and_remove(group: Path, timeout_s: float = 5.0) -> None:
    """SIGKILL every process of ``group`` until it is empty, then remove it."""
    deadline = time.monotonic() + timeout_s
    kill_file = group / "cgroup.kill"
    while True:
        pids = _procs(group)
        if pids:
            if kill_file.exists():
                with contextlib.suppress(OSError):
                    kill_file.write_text("1")
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        try:
            group.rmdir()
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)


class SandboxCgroup:
    """The group(s) of one run; ``controllers`` names what is capped (empty: nothing)."""

    def __init__(self, *, processes: int, memory_bytes: int, enabled: bool = True) -> None:
        self.groups: list[Path] = []
        self.controllers: list[str] = []
        if not enabled:
            return
        name = f"{PREFIX}{os.getpid()}-"
        if _is_v2(V2_ROOT):
            self._make_v2(name, processes, memory_bytes)
        else:
            for controller, value in (("pids", processes), ("memory", memory_bytes)):
                self._make_v1(controller, name, value)

    def _make_v1(self, controller: str, name: str, value: int) -> None:
        root = V1_ROOTS[controller]
        if not (root / "cgroup.procs").exists():
            return
        try:
            group = Path(tempfile.mkdtemp(prefix=name, dir=root))
        except OSError:
            return
        try:
            if controller == "pids":
                (group / "pids.max").write_text(str(value))
            else:
                (group / "memory.limit_in_bytes").write_text(str(value))
                swap = group / "memory.memsw.limit_in_bytes"
                if swap.exists():
                    swap.write_text(str(value))
        except OSError:
            _kill_and_remove(group)
            return
        self.groups.append(group)
        self.controllers.append(controller)

    def _make_v2(self, name: str, processes: int, memory_bytes: int) -> None:
        try:
            delegated = (V2_ROOT / "cgroup.subtree_control").read_text().split()
            group = Path(tempfile.mkdtemp(prefix=name, dir=V2_ROOT))
        except OSError:
            return
        held = []
        for controller, file, value in (("pids", "pids.max", processes),
                                        ("memory", "memory.max", memory_bytes)):
            if controller not in delegated or not (group / file).exists():
                continue
            try:
                (group / file).write_text(str(value))
                if controller == "memory" and (group / "memory.swap.max").exists():
                    (group / "memory.swap.max").write_text("0")
            except OSError:
                continue
            held.append(controller)
        if not held:
            _kill_and_remove(group)
            return
        self.groups.append(group)
        self.controllers = held

    def enter(self) -> None:
        """Move the calling process into the group(s) (the run's child, before exec)."""
        for group in self.groups:
            with open(group / "cgroup.procs", "w") as fh:
                fh.write(str(os.getpid()))

    def memory_exhausted(self) -> bool:
        """Whether the run hit the memory cap (the kernel's OOM killer acted in the group)."""
        for group in self.groups:
            for file, key in (("memory.events", "oom_kill"), ("memory.oom_control", "oom_kill")):
                try:
                    text = (group / file).read_text()
                except OSError:
                    continue
                for line in text.splitlines():
                    parts = line.split()
                    if len(parts) == 2 and parts[0] == key and parts[1] != "0":
                        return True
        return False

    def close(self) -> None:
        """Kill whatever of the run is still alive and remove the group(s)."""
        for group in self.groups:
            _kill_and_remove(group)
        self.groups = []


def sweep_stale() -> int:
    """Remove the groups of runs whose owner process is gone; return how many."""
    removed = 0
    roots = [V2_ROOT] if _is_v2(V2_ROOT) else list(V1_ROOTS.values())
    for root in roots:
        try:
            entries = list(root.glob(PREFIX + "*"))
        except OSError:
            continue
        for group in entries:
            owner = group.name[len(PREFIX):].split("-", 1)[0]
            if owner.isdigit() and not _alive(int(owner)):
                _kill_and_remove(group)
                removed += 1
    return removed
