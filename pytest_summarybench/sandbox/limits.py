"""What a sandboxed run may use and which layers it asks for, and how it ended."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field, fields
from typing import Annotated, Any, Literal

from annotated_types import Ge, Gt

from ..core.errors import RunError

Boundary = Literal["auto", "bubblewrap", "namespaces", "none"]
KERNEL_BOUNDARIES = ("bubblewrap", "namespaces")
_SIGNAL_REASONS: dict[int, str] = {
    signal.SIGXCPU: "CPU time limit exceeded",
    signal.SIGXFSZ: "file size limit exceeded",
    signal.SIGKILL: "killed",
    signal.SIGSEGV: "crashed (segmentation fault)",
    signal.SIGABRT: "aborted",
    signal.SIGSYS: "killed by the syscall filter",
}


@dataclass(frozen=True)
class ConfiguredLimits:
    """The limits and layers a user sets (``evaluation.downstream.sandbox`` in
    summarybench.yaml reads exactly these fields, with these bounds): declared once, here.

    The bounds are ``annotated_types`` markers, which the settings' validation enforces;
    code that builds limits itself is trusted with any value.
    """

    wall_s: Annotated[float, Gt(0)] = 10.0
    """Wall-clock seconds before the whole run is killed."""
    cpu_s: Annotated[int, Ge(1)] = 5
    """CPU seconds per process (RLIMIT_CPU)."""
    memory_mb: Annotated[int, Ge(64)] = 512
    """Address space per process (RLIMIT_AS)."""
    processes: Annotated[int, Ge(4)] = 32
    """Processes of the run at once (pids cgroup; RLIMIT_NPROC without it)."""
    file_size_mb: Annotated[int, Ge(1)] = 16
    """Largest file the process may write (RLIMIT_FSIZE), stdout and stderr included."""
    output_chars: Annotated[int, Ge(100)] = 8000
    """Characters of stdout and of stderr kept in the result."""
    total_memory_mb: Annotated[int, Ge(64)] = 1024
    """Memory of the whole run, its in-memory files included (the cgroup layer)."""
    disk_mb: Annotated[int, Ge(1)] = 64
    """Size of the run's writable directory (an in-memory file system)."""
    boundary: Boundary = "auto"
    """The kernel boundary: bubblewrap where installed, else the in-house namespaces
    (``auto``); one of them by name; or ``none`` (process layers only)."""
    allow_without_boundary: bool = False
    """Run with the process layers only when no kernel boundary is available (otherwise
    ``SandboxUnavailable``)."""
    seccomp: bool = True
    """Install the syscall filter (where libseccomp is available)."""


@dataclass(frozen=True)
class SandboxLimits(ConfiguredLimits):
    """What one sandboxed run may use, and which layers it asks for: the configured limits
    and those no configuration changes."""

    open_files: int = 64
    """Open file descriptors (RLIMIT_NOFILE)."""
    guard: bool = True
    """Install the in-process audit-hook guard."""
    drop_privileges: bool = True
    """Run the code as ``nobody`` without capabilities (see the module doc)."""

    @classmethod
    def configured(cls, limits: ConfiguredLimits) -> SandboxLimits:
        """The limits of a run under the configured ``limits``."""
        return cls(**{f.name: getattr(limits, f.name) for f in fields(ConfiguredLimits)})


@dataclass
class SandboxResult:
    """How a sandboxed run ended."""

    exit_code: int | None
    """The worker's exit code (None when it was killed by a signal or the timeout)."""
    signal: int | None
    """The signal that killed the worker, if any."""
    timed_out: bool
    """True when the wall-clock timeout killed the run."""
    stdout: str
    """Captured standard output, truncated to ``output_chars``."""
    stderr: str
    """Captured standard error, truncated to ``output_chars``."""
    violations: list[dict[str, str]] = field(default_factory=list)
    """What the guard refused (``kind``, ``detail``)."""
    layers: tuple[str, ...] = ()
    """The isolation layers that held (see the module doc)."""
    duration_s: float = 0.0
    directory: str = ""
    """The staging directory the run used (removed afterwards)."""
    full_stdout: str = ""
    """Standard output up to the file size limit (not reported)."""
    channel: str = ""
    """What the code wrote to its report channel (``channel_fd`` in its globals), up to
    the file size limit: the test harness's observations."""
    memory_exhausted: bool = False
    """The run hit its total memory cap."""
    facts: dict[str, Any] = field(default_factory=dict)
    """What the sandboxed process reported about itself before the code ran."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.violations

    def failure_reason(self, limits: SandboxLimits) -> str | None:
        """One line on why the run did not end normally (None when it did)."""
        if self.timed_out:
            return f"timed out after {limits.wall_s:g}s (wall clock); the run was killed"
        if self.violations:
            v = self.violations[0]
            more = f" (+{len(self.violations) - 1} more)" if len(self.violations) > 1 else ""
            return f"sandbox refused {v['kind']}: {v['detail']}{more}"
        if self.facts.get("refused"):
            return f"sandbox could not be set up: {self.facts['refused']}"
        if self.memory_exhausted:
            return f"total memory limit of {limits.total_memory_mb} MB exceeded"
        if self.signal is not None:
            try:
                name = _SIGNAL_REASONS.get(self.signal) or signal.Signals(self.signal).name
            except ValueError:
                name = f"signal {self.signal}"
            return f"{name} (signal {self.signal})"
        if self.exit_code not in (0, None):
            tail = last_line(self.stderr)
            if "MemoryError" in self.stderr:
                return f"memory limit of {limits.memory_mb} MB exceeded (MemoryError)"
            return f"exited with code {self.exit_code}" + (f": {tail}" if tail else "")
        return None


class SandboxUnavailable(RunError, RuntimeError):
    """No kernel boundary can be set up here and the caller did not opt out of one."""


class SandboxWarning(UserWarning):
    """Model-written code runs without a kernel boundary (the caller opted in)."""


def last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""
