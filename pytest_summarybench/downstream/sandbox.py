"""Runs generated code in a sandbox: a separate, limited, isolated process.

Layers, outermost first (``SandboxResult.layers`` says which held for a run):

- ``process``: a child process in its own session, killed with its whole process group
  at the wall-clock timeout; resource limits on CPU seconds (SIGXCPU, then SIGKILL a
  second later), address space, file size, open files and core dumps (set before exec),
  and RLIMIT_NPROC (set in the worker); a fresh temporary directory as cwd with
  read-only copies of the inputs; an environment reduced to an allowlist (no keys, HOME
  is the sandbox); stdout and stderr go to files and come back truncated.
- ``pids-cgroup`` (root only): the run is moved into its own ``pids`` cgroup (v1, or v2
  when the root group delegates the controller) capped at ``processes``. The kernel
  exempts uid 0 from RLIMIT_NPROC (in a user namespace too, when uid 0 is mapped to
  root), so this is what stops a fork bomb started as root; for other users
  RLIMIT_NPROC holds.
- ``namespaces`` (Linux, via ``unshare``): a new network namespace (no interface is up,
  not even loopback), a new PID namespace (every process dies with the supervisor, so a
  fork bomb cannot outlive the run), a new mount namespace in which every mount but the
  sandbox directory is remounted read-only, with its own ``/proc`` (the parent's
  environment is not readable there), a ``/dev`` holding only null, zero, full, random
  and urandom, and the caller's home directories covered by an empty file system (the
  Python installation, if it lives there, is bound back). A user namespace maps the
  caller (root or not) to root inside.
- ``unprivileged``: with namespaces, the worker gives up every capability for good
  (secure bits locked, bounding set emptied, no new privileges), so it cannot undo the
  mounts, override file permissions or raise its limits. Without namespaces, a worker
  started as root switches to ``nobody`` (65534) when that user can read the Python
  installation (otherwise it stays root, and the guard is what refuses writes).
- ``guard``: a Python audit hook in the worker refuses sockets, process creation, ctypes,
  writes or directory changes outside the sandbox and reads in the caller's home
  directories (but for the Python installation), and reports each refusal.

Without ``unshare`` (not Linux, or user namespaces disabled) only ``process``,
``pids-cgroup`` and ``guard`` hold. The guard is defence in depth, not a boundary by
itself: Python code determined to get round an audit hook can (through extension-module
internals that raise no audit event); the kernel layers are what hold then. Each layer is proven by
``tests/downstream/test_sandbox.py`` with the others switched off where that is possible.
"""

from __future__ import annotations

import functools
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

CHILD_SCRIPT = Path(__file__).with_name("_sandbox_child.py")
NOBODY = 65534
#: Environment variables the sandboxed process gets; everything else is dropped.
ENV_ALLOWLIST = ("LANG", "LC_ALL", "TZ")
_SIGNAL_REASONS: dict[int, str] = {
    signal.SIGXCPU: "CPU time limit exceeded",
    signal.SIGXFSZ: "file size limit exceeded",
    signal.SIGKILL: "killed",
    signal.SIGSEGV: "crashed (segmentation fault)",
    signal.SIGABRT: "aborted",
}


@dataclass(frozen=True)
class SandboxLimits:
    """What one sandboxed run may use."""

    wall_s: float = 10.0
    """Wall-clock seconds before the whole process group is killed."""
    cpu_s: int = 5
    """CPU seconds per process (RLIMIT_CPU)."""
    memory_mb: int = 512
    """Address space per process (RLIMIT_AS)."""
    processes: int = 32
    """Processes of the sandbox user (RLIMIT_NPROC)."""
    file_size_mb: int = 16
    """Largest file the process may write (RLIMIT_FSIZE), stdout and stderr included."""
    open_files: int = 64
    """Open file descriptors (RLIMIT_NOFILE)."""
    output_chars: int = 8000
    """Characters of stdout and of stderr kept in the result."""
    namespaces: bool = True
    """Use Linux namespaces when ``unshare`` works here."""
    guard: bool = True
    """Install the in-process audit-hook guard."""
    drop_privileges: bool = True
    """Drop the worker's capabilities (or switch root to ``nobody``, see the module doc)."""


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
    """The isolation layers that were in force."""
    duration_s: float = 0.0
    directory: str = ""
    """The temporary directory the run used (removed afterwards)."""
    full_stdout: str = ""
    """Standard output up to the file size limit (parsed for results, not reported)."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.violations

    def failure_reason(self, limits: SandboxLimits) -> str | None:
        """One line on why the run did not end normally (None when it did)."""
        if self.timed_out:
            return f"timed out after {limits.wall_s:g}s (wall clock); the process group was killed"
        if self.violations:
            v = self.violations[0]
            more = f" (+{len(self.violations) - 1} more)" if len(self.violations) > 1 else ""
            return f"sandbox refused {v['kind']}: {v['detail']}{more}"
        if self.signal is not None:
            name = _SIGNAL_REASONS.get(self.signal) or signal.Signals(self.signal).name
            return f"{name} (signal {self.signal})"
        if self.exit_code not in (0, None):
            tail = _last_line(self.stderr)
            if "MemoryError" in self.stderr:
                return f"memory limit of {limits.memory_mb} MB exceeded (MemoryError)"
            return f"exited with code {self.exit_code}" + (f": {tail}" if tail else "")
        return None


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


@functools.cache
def namespaces_available(as_root: bool) -> bool:
    """Whether ``unshare`` can create the namespaces here (probed once per process)."""
    exe = shutil.which("unshare")
    if not exe or not sys.platform.startswith("linux"):
        return False
    try:
        probe = subprocess.run([*_unshare_argv(exe, as_root), "true"], capture_output=True,
                               timeout=10, env={})
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


def _unshare_argv(exe: str, as_root: bool) -> list[str]:
    # A user namespace even for root: inside it, capabilities do not reach the host, and
    # the process limit applies to uid 0 of the namespace.
    return [exe, "--map-root-user", "--mount", "--pid", "--fork", "--mount-proc", "--net"]


def _readable_by_others(path: Path) -> bool:
    """Whether an unprivileged user can read ``path`` (every parent searchable)."""
    for part in [path, *path.parents]:
        try:
            mode = part.stat().st_mode
        except OSError:
            return False
        if not mode & 0o001:
            return False
    return True


def home_dirs() -> list[str]:
    """The caller's home directories (``$HOME`` and the password database's), hidden from
    the sandbox: that is where credentials live."""
    homes = {os.path.expanduser("~")}
    try:
        import pwd

        homes.add(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError):
        pass
    return sorted(os.path.realpath(h) for h in homes if h and os.path.realpath(h) != "/")


def sandbox_env(box: Path) -> dict[str, str]:
    """The allowlisted environment: no keys, no proxies, HOME and TMPDIR in the sandbox."""
    env = {k: os.environ[k] for k in ENV_ALLOWLIST if k in os.environ}
    env.update({"PATH": "/usr/bin:/bin", "HOME": str(box), "TMPDIR": str(box / "tmp"),
                "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
                "PYTHONIOENCODING": "utf-8"})
    return env


def _make_readonly(box: Path) -> None:
    """Every input file and directory read-only; the box itself and its tmp stay writable."""
    for dirpath, _dirnames, filenames in os.walk(box):
        for name in filenames:
            os.chmod(Path(dirpath) / name, 0o444)
        if Path(dirpath) not in (box, box / "tmp"):
            os.chmod(dirpath, 0o555)


#: Where root may create a pids cgroup: the cgroup v1 pids hierarchy, or the cgroup v2
#: root when it delegates the pids controller to its children.
CGROUP_PIDS_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))


class _PidsCgroup:
    """A pids cgroup capping every process of one run, whatever its uid (the kernel
    exempts root from RLIMIT_NPROC, so this is what holds a fork bomb run as root)."""

    def __init__(self, limit: int, *, enabled: bool = True) -> None:
        self.path: Path | None = None
        for root in CGROUP_PIDS_ROOTS if enabled else ():
            if not (root / "cgroup.procs").exists():
                continue  # not a cgroup file system
            try:
                path = Path(tempfile.mkdtemp(prefix="summarybench-sandbox-", dir=root))
            except OSError:
                continue
            try:
                # The kernel creates pids.max in a new group only when the pids
                # controller governs it; anything else is not a limit.
                if not (path / "pids.max").exists():
                    raise OSError("no pids controller")
                (path / "pids.max").write_text(str(limit))
            except OSError:
                self._remove(path)
                continue
            self.path = path
            break

    def enter(self) -> None:
        """Move the calling process into the group (runs in the child before exec)."""
        if self.path is not None:
            with open(self.path / "cgroup.procs", "w") as fh:
                fh.write(str(os.getpid()))

    def close(self) -> None:
        if self.path is not None:
            self._remove(self.path)

    @staticmethod
    def _remove(path: Path) -> None:
        deadline = time.monotonic() + 5.0
        while True:
            try:
                path.rmdir()
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.02)


def _preexec(limits: SandboxLimits, cgroup: _PidsCgroup) -> None:
    """In the child, before exec: own session, pids cgroup, resource limits (all but
    RLIMIT_NPROC, which the worker sets once it is no longer privileged)."""
    os.setsid()
    cgroup.enter()
    mb = 1024 * 1024
    # The soft CPU limit sends SIGXCPU (a reason we can name); the hard one, a second
    # later, SIGKILL for a process that ignores it.
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
    for res, value in ((resource.RLIMIT_AS, limits.memory_mb * mb),
                       (resource.RLIMIT_FSIZE, limits.file_size_mb * mb),
                       (resource.RLIMIT_NOFILE, limits.open_files),
                       (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(res, (value, value))


def run_sandboxed(script: str, *, files: Mapping[str, str] | None = None,
                  readonly_dirs: Mapping[str, Path] | None = None,
                  limits: SandboxLimits | None = None) -> SandboxResult:
    """Run the Python ``script`` (source text) in a fresh sandbox and return how it ended.

    :param files: files to write into the sandbox (relative path -> text), after the
        directories are copied (so one may replace a copied module with the generated
        code); all inputs are then made read-only.
    :param readonly_dirs: directories copied into the sandbox read-only (name -> source),
        e.g. the package the generated code belongs to.
    :param limits: the limits and layers (default ``SandboxLimits()``).
    """
    limits = limits or SandboxLimits()
    as_root = os.geteuid() == 0
    use_ns = limits.namespaces and namespaces_available(as_root)
    drop: str | None = None
    if limits.drop_privileges:
        if use_ns:
            drop = "capabilities"
        elif as_root and _readable_by_others(Path(os.__file__).parent):
            drop = "user"
    tmp = Path(tempfile.mkdtemp(prefix="sb-sandbox-"))
    try:
        os.chmod(tmp, 0o711)
        box = tmp / "box"
        box.mkdir()
        (box / "tmp").mkdir()
        for name, src in (readonly_dirs or {}).items():
            shutil.copytree(src, box / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for rel, text in {**(files or {}), "_sb_main.py": script}.items():
            target = box / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        _make_readonly(box)
        (tmp / "dev").mkdir()
        shutil.copyfile(CHILD_SCRIPT, tmp / "_sandbox_child.py")
        os.chmod(tmp / "_sandbox_child.py", 0o444)
        if drop == "user":
            for path in (box, box / "tmp"):
                os.chown(path, NOBODY, NOBODY)
        os.chmod(box, 0o700)
        return _execute(tmp, box, limits, use_ns=use_ns, as_root=as_root, drop=drop)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _execute(tmp: Path, box: Path, limits: SandboxLimits, *, use_ns: bool, as_root: bool,
             drop: str | None) -> SandboxResult:
    out_path, err_path = tmp / "stdout", tmp / "stderr"
    status_path, viol_path = tmp / "status", tmp / "violations"
    with open(out_path, "wb") as out, open(err_path, "wb") as err, \
            open(status_path, "wb") as status, open(viol_path, "wb") as viol:
        cfg = {"box": str(box), "script": "_sb_main.py", "status_fd": status.fileno(),
               "violations_fd": viol.fileno(), "guard": limits.guard,
               "processes": limits.processes, "drop": drop, "drop_uid": NOBODY,
               "mount_readonly": use_ns, "devdir": str(tmp / "dev"), "homes": home_dirs()}
        argv = [sys.executable, "-I", "-S", "-B", str(tmp / "_sandbox_child.py"),
                json.dumps(cfg)]
        if use_ns:
            argv = [*_unshare_argv(shutil.which("unshare") or "unshare", as_root), *argv]
        cgroup = _PidsCgroup(limits.processes, enabled=as_root)
        started = time.perf_counter()
        try:
            proc = subprocess.Popen(
                argv, cwd=box, env=sandbox_env(box), stdin=subprocess.DEVNULL, stdout=out,
                stderr=err, pass_fds=(status.fileno(), viol.fileno()),
                preexec_fn=lambda: _preexec(limits, cgroup), close_fds=True)
        except BaseException:
            cgroup.close()
            raise
        timed_out = False
        try:
            proc.wait(timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(proc)
            cgroup.close()
        duration = time.perf_counter() - started
    events = _read_events(status_path)
    exit_event: dict = next((e for e in reversed(events) if e.get("event") == "exit"), {})
    exit_code = exit_event.get("code")
    sig = exit_event.get("signal")
    if not exit_event and not timed_out:
        # The supervisor itself died (e.g. its own CPU or memory limit).
        sig = -proc.returncode if proc.returncode < 0 else None
        exit_code = proc.returncode if proc.returncode >= 0 else None
    stdout = _read_text(out_path, limits.file_size_mb * 1024 * 1024)
    stderr = _read_text(err_path, 1024 * 1024)
    layers = ["process"]
    if cgroup.path is not None:
        layers.append("pids-cgroup")
    if use_ns:
        ready = next((e for e in events if e.get("event") == "ready"), {})
        if ready.get("readonly") is not None and not any(
                e.get("event") == "mount_failed" for e in events):
            layers.append("namespaces")
    if drop:
        layers.append("unprivileged")
    if limits.guard:
        layers.append("guard")
    return SandboxResult(
        exit_code=None if timed_out else exit_code, signal=None if timed_out else sig,
        timed_out=timed_out, stdout=_truncate(stdout, limits.output_chars),
        stderr=_truncate(stderr, limits.output_chars),
        violations=_read_events(viol_path), layers=tuple(layers),
        duration_s=round(duration, 3), directory=str(tmp), full_stdout=stdout)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill whatever is left of the run's process group (a runaway worker, a fork bomb)
    and wait until the kernel has removed every member."""
    deadline = time.monotonic() + 5.0
    while True:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            break
        proc.poll()
        if time.monotonic() > deadline:
            break
        time.sleep(0.01)
    proc.wait()


def _read_text(path: Path, limit: int) -> str:
    with open(path, "rb") as fh:
        return fh.read(limit).decode("utf-8", errors="replace")


def _read_events(path: Path) -> list[dict]:
    events = []
    for line in _read_text(path, 1024 * 1024).splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            events.append(data)
    return events


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters truncated]"
