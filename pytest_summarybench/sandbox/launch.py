"""Starting one sandboxed run: its staging directory, the fresh root, bubblewrap's or
``unshare``'s command line, the limits, the wait, and what the run reported.

The staging directory (``sb-sandbox-<pid>-*`` in the temporary directory) holds the inputs
(read-only), the program that sets the sandbox up (``_child.py``), the syscall filter and
the files the run's outputs go to; it is removed after the run, and by the next run of any
process when its owner was killed outright.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import _cgroup, _seccomp
from ._runtime import python_runtime
from .limits import KERNEL_BOUNDARIES, SandboxLimits, SandboxResult

CHILD_SCRIPT = Path(__file__).with_name("_child.py")
NOBODY = 65534
#: Where the run's directory is, inside a kernel boundary.
BOX = "/sandbox/box"
CHILD_DIR = "/sandbox/child"
#: Environment variables the sandboxed process gets; everything else is dropped.
ENV_ALLOWLIST = ("LANG", "LC_ALL", "TZ")
STAGING_PREFIX = "sb-sandbox-"
_PR_SET_PDEATHSIG = 1


def _sweep_stale_staging() -> None:
    """Remove staging directories and cgroups of runs whose process was killed outright."""
    root = Path(tempfile.gettempdir())
    for path in root.glob(STAGING_PREFIX + "*"):
        owner = path.name[len(STAGING_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not _cgroup._alive(int(owner)):
            shutil.rmtree(path, ignore_errors=True)
    _cgroup.sweep_stale()


@functools.cache
def _swept_once() -> bool:
    _sweep_stale_staging()
    return True


def _stage(tmp: Path, script: str, files: Mapping[str, str],
           readonly_dirs: Mapping[str, Path]) -> Path:
    """Write the run's inputs to ``tmp/inputs`` (read-only) and the child program."""
    inputs = tmp / "inputs"
    inputs.mkdir()
    for name, src in readonly_dirs.items():
        # Hidden files and folders stay out (.env, .git, .venv: a task's package folder
        # may hold a project's secrets next to its code).
        shutil.copytree(src, inputs / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))
    for rel, text in {**files, "_sb_main.py": script}.items():
        target = inputs / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    for dirpath, _dirnames, filenames in os.walk(inputs):
        for name in filenames:
            with contextlib.suppress(OSError):
                os.chmod(Path(dirpath) / name, 0o444)
        os.chmod(dirpath, 0o555)
    child = tmp / "child"
    child.mkdir()
    shutil.copyfile(CHILD_SCRIPT, child / "_child.py")
    os.chmod(child / "_child.py", 0o444)
    os.chmod(child, 0o555)
    return inputs


#: Waits for a line on stdin: "done" (the run cleaned up after itself) or end of file
#: (the process that launched the run died, e.g. SIGKILL): then removes the run's staging
#: directory ($1) and, once the sandbox's processes are gone (they die with their
#: launcher), the launcher's sandbox cgroups (the patterns after it; sh expands them).
_REAPER = r"""
IFS= read -r line
[ "$line" = done ] && exit 0
rm -rf -- "$1"
shift
for try in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  left=0
  for pattern in "$@"; do
    for group in $pattern; do
      [ -d "$group" ] || continue
      rmdir -- "$group" 2>/dev/null || left=1
    done
  done
  [ "$left" = 0 ] && exit 0
  sleep 0.5
done
"""


def _reaper(tmp: Path) -> subprocess.Popen[bytes] | None:
    """A small process that cleans up after the run if this process dies (see
    ``_REAPER``); in a session of its own, so that it outlives a killed pytest."""
    groups = [str(root / f"{_cgroup.PREFIX}{os.getpid()}-*") for root in
              (_cgroup.V2_ROOT, *_cgroup.V1_ROOTS.values())]
    try:
        return subprocess.Popen(["sh", "-c", _REAPER, "summarybench-reaper", str(tmp),
                                 *groups], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, close_fds=True)
    except OSError:
        return None  # the sweep at the next run's start is the fallback


def _dismiss(reaper: subprocess.Popen[bytes] | None) -> None:
    if reaper is None or reaper.stdin is None:
        return
    with contextlib.suppress(OSError):
        reaper.stdin.write(b"done\n")
        reaper.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        reaper.wait(timeout=5)


def launch(limits: SandboxLimits, boundary: str | None, script: str,
           files: Mapping[str, str], readonly_dirs: Mapping[str, Path]) -> SandboxResult:
    """Run ``script`` behind ``boundary`` (None: the process layers only), as asked."""
    _swept_once()
    tmp = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-"))
    reaper = _reaper(tmp)
    try:
        # Private to the run: the generated code and the task's package are nobody
        # else's to read on a shared host (the sandbox's own user owns it as root).
        os.chmod(tmp, 0o700)
        if os.geteuid() == 0:
            os.chown(tmp, NOBODY, NOBODY)
        inputs = _stage(tmp, script, files, readonly_dirs)
        seccomp_program = None
        if limits.seccomp:
            with contextlib.suppress(_seccomp.SeccompUnavailable, OSError):
                seccomp_program = _seccomp.filter_program()
                (tmp / "seccomp.bpf").write_bytes(seccomp_program)
        return _execute(tmp, inputs, limits, boundary, has_seccomp=seccomp_program is not None)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        _dismiss(reaper)


@functools.cache
def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _preexec(limits: SandboxLimits, cgroup: _cgroup.SandboxCgroup) -> None:
    """In the child, before exec: own session, death with the caller, cgroup, limits (all
    but RLIMIT_NPROC, set once the worker is unprivileged)."""
    os.setsid()
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    cgroup.enter()
    mb = 1024 * 1024
    # The soft CPU limit sends SIGXCPU (a reason we can name); the hard one, a second
    # later, SIGKILL for a process that ignores it.
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
    for res, value in ((resource.RLIMIT_AS, limits.memory_mb * mb),
                       (resource.RLIMIT_FSIZE, limits.file_size_mb * mb),
                       (resource.RLIMIT_NOFILE, max(limits.open_files, 16)),
                       (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(res, (value, value))


def _mount_plan(inputs: Path, limits: SandboxLimits) -> list[list[Any]]:
    """The fresh root of a kernel boundary, as operations both bubblewrap and the in-house
    namespaces carry out: ``ro`` (bind read-only), ``tmpfs`` (size, writable), ``hide``
    (empty, read-only), ``proc``, ``dev``."""
    runtime = python_runtime()
    plan: list[list[Any]] = [["ro", src, dst] for src, dst in runtime.mounts()]
    plan += [["hide", d] for d in runtime.hidden]
    plan += [["proc", "/proc"], ["dev", "/dev"],
             ["tmpfs", "/dev/shm", 1024 * 1024],
             ["tmpfs", BOX, limits.disk_mb * 1024 * 1024]]
    plan += [["ro", str(inputs / entry.name), f"{BOX}/{entry.name}"]
             for entry in sorted(inputs.iterdir())]
    plan += [["ro", str(inputs.parent / "child"), CHILD_DIR]]
    return plan


def _bwrap_argv(plan: list[list[Any]], as_root: bool, seccomp_fd: int | None,
                status_fd: int) -> list[str]:
    argv = [shutil.which("bwrap") or "bwrap", "--die-with-parent", "--new-session",
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--cap-drop", "ALL", "--json-status-fd", str(status_fd)]
    if as_root:
        # No user namespace: the child drops to host uid 65534 itself (bubblewrap would
        # map the sandbox's uid to host root), keeping only the capabilities to do that.
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        argv += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY)]
    argv += ["--tmpfs", "/"]
    for op in plan:
        kind = op[0]
        if kind == "ro":
            argv += ["--ro-bind", op[1], op[2]]
        elif kind == "hide":
            argv += ["--tmpfs", op[1], "--remount-ro", op[1]]
        elif kind == "proc":
            argv += ["--proc", op[1]]
        elif kind == "dev":
            argv += ["--dev", op[1]]
        elif kind == "tmpfs":
            argv += ["--size", str(op[2]), "--tmpfs", op[1], "--chmod", "0777", op[1]]
    # Directories bubblewrap creates on the way to a mount point are private to root:
    # the unprivileged worker must be able to walk through them.
    for directory in _ancestors([op[-1] if op[0] == "ro" else op[1] for op in plan]):
        argv += ["--chmod", "0755", directory]
    argv += ["--dir", f"{BOX}/tmp", "--chmod", "0777", f"{BOX}/tmp", "--remount-ro", "/",
             "--chdir", BOX]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    return argv


def _ancestors(targets: list[str]) -> list[str]:
    """The directories above ``targets`` that are not themselves (inside) a mount."""
    mounted = set(targets)
    found: set[str] = set()
    for target in targets:
        parent = os.path.dirname(target)
        while parent not in ("/", ""):
            found.add(parent)
            parent = os.path.dirname(parent)
    return sorted(d for d in found
                  if not any(d == m or d.startswith(m.rstrip("/") + "/") for m in mounted))


def sandbox_env(box: str) -> dict[str, str]:
    """The allowlisted environment: no keys, no proxies, HOME and TMPDIR in the box."""
    env = {k: os.environ[k] for k in ENV_ALLOWLIST if k in os.environ}
    env.update({"PATH": "/nonexistent", "HOME": box, "TMPDIR": f"{box}/tmp",
                "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
                "PYTHONIOENCODING": "utf-8"})
    return env


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
    """The caller's home directories (``$HOME`` and the password database's): the guard
    refuses reads there when there is no kernel boundary."""
    homes = {os.path.expanduser("~")}
    try:
        import pwd

        homes.add(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError):
        pass
    return sorted(os.path.realpath(h) for h in homes if h and os.path.realpath(h) != "/")


def _no_boundary_box(tmp: Path, inputs: Path, as_root: bool, drop: bool) -> tuple[Path, bool]:
    """Without a kernel boundary the run's directory is on the host: a writable copy of
    the inputs (read-only files). Returns it and whether the worker may become nobody."""
    box = tmp / "box"
    shutil.copytree(inputs, box, symlinks=True)
    (box / "tmp").mkdir()
    runtime_ok = _readable_by_others(Path(python_runtime().executable)) and all(
        _readable_by_others(Path(d)) for d in python_runtime().directories)
    to_nobody = drop and as_root and runtime_ok
    for path in (box, box / "tmp"):
        os.chmod(path, 0o777 if to_nobody else 0o700)
    return box, to_nobody


def _execute(tmp: Path, inputs: Path, limits: SandboxLimits, boundary: str | None, *,
             has_seccomp: bool) -> SandboxResult:
    as_root = os.geteuid() == 0
    runtime = python_runtime()
    paths = {name: tmp / name for name in ("stdout", "stderr", "status", "violations",
                                           "channel", "bwrap-status")}
    handles = {name: open(path, "wb") for name, path in paths.items()}
    seccomp_fh = open(tmp / "seccomp.bpf", "rb") if has_seccomp else None
    try:
        fd = {name: fh.fileno() for name, fh in handles.items()}
        cfg: dict[str, Any] = {
            "boundary": boundary, "status_fd": fd["status"], "violations_fd": fd["violations"],
            "channel_fd": fd["channel"], "guard": limits.guard, "processes": limits.processes,
            "drop": limits.drop_privileges, "nobody": NOBODY, "homes": home_dirs(),
            "seccomp": None, "wall_s": limits.wall_s, "script": "_sb_main.py"}
        child = [runtime.executable, "-I", "-S", "-B"]
        if boundary == "bubblewrap":
            cfg.update(box=BOX, mode="worker", seccomp="loaded" if has_seccomp else None)
            argv = [*_bwrap_argv(_mount_plan(inputs, limits), as_root,
                                 seccomp_fh.fileno() if seccomp_fh else None, fd["bwrap-status"]),
                    *child, f"{CHILD_DIR}/_child.py", json.dumps(cfg)]
            cwd, env = "/", sandbox_env(BOX)
        elif boundary == "namespaces":
            (tmp / "root").mkdir()
            cfg.update(box=BOX, mode="namespaces", newroot=str(tmp / "root"),
                       plan=_mount_plan(inputs, limits),
                       seccomp=str(tmp / "seccomp.bpf") if has_seccomp else None)
            argv = [shutil.which("unshare") or "unshare", "--mount", "--pid", "--fork",
                    "--kill-child", "--net", "--ipc", "--uts"]
            if not as_root:
                argv += ["--user", "--map-root-user"]
            argv += [*child, str(tmp / "child" / "_child.py"), json.dumps(cfg)]
            cwd, env = str(tmp), sandbox_env(BOX)
        else:
            box, to_nobody = _no_boundary_box(tmp, inputs, as_root, limits.drop_privileges)
            cfg.update(box=str(box), mode="process", drop=to_nobody or not as_root,
                       seccomp=str(tmp / "seccomp.bpf") if has_seccomp else None)
            argv = [*child, str(tmp / "child" / "_child.py"), json.dumps(cfg)]
            cwd, env = str(box), sandbox_env(str(box))
        cgroup = _cgroup.SandboxCgroup(processes=limits.processes,
                                       memory_bytes=limits.total_memory_mb * 1024 * 1024,
                                       enabled=True)
        pass_fds = tuple(v for k, v in fd.items() if k not in ("stdout", "stderr"))
        if seccomp_fh is not None:
            pass_fds += (seccomp_fh.fileno(),)
        started = time.perf_counter()
        try:
            proc = subprocess.Popen(
                argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=handles["stdout"],
                stderr=handles["stderr"], pass_fds=pass_fds, close_fds=True,
                preexec_fn=lambda: _preexec(limits, cgroup))
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
            memory_exhausted = cgroup.memory_exhausted()
            cgroup.close()
        duration = time.perf_counter() - started
    finally:
        for fh in handles.values():
            fh.close()
        if seccomp_fh is not None:
            seccomp_fh.close()
    return _result(paths, limits, boundary, proc.returncode, timed_out, duration, tmp,
                   cgroup.controllers, memory_exhausted)


def _exit_status(paths: dict[str, Path], boundary: str | None, events: list[dict],
                 returncode: int) -> tuple[int | None, int | None]:
    """(exit code, signal) of the worker."""
    if boundary == "bubblewrap":
        for event in reversed(_read_events(paths["bwrap-status"])):
            if "exit-code" in event and isinstance(event["exit-code"], int):
                code = event["exit-code"]
                return (None, code - 128) if code > 128 else (code, None)
    else:
        exit_event = next((e for e in reversed(events) if e.get("event") == "exit"), None)
        if exit_event is not None:
            return exit_event.get("code"), exit_event.get("signal")
    # The supervisor itself died (its own CPU or memory limit), or bubblewrap failed.
    if returncode < 0:
        return None, -returncode
    return returncode, None


def _result(paths: dict[str, Path], limits: SandboxLimits, boundary: str | None,
            returncode: int, timed_out: bool, duration: float, tmp: Path,
            controllers: list[str], memory_exhausted: bool) -> SandboxResult:
    events = _read_events(paths["status"])
    facts: dict[str, Any] = next((e for e in events if e.get("event") == "ready"), {})
    refused = next((e.get("detail") for e in events if e.get("event") == "refused"), None)
    if refused:
        facts = {**facts, "refused": refused}
    exit_code, sig = _exit_status(paths, boundary, events, returncode)
    limit = limits.file_size_mb * 1024 * 1024
    stdout = _read_text(paths["stdout"], limit)
    stderr = _read_text(paths["stderr"], 1024 * 1024)
    return SandboxResult(
        exit_code=None if timed_out else exit_code, signal=None if timed_out else sig,
        timed_out=timed_out, stdout=_truncate(stdout, limits.output_chars),
        stderr=_truncate(stderr, limits.output_chars),
        violations=_read_events(paths["violations"]),
        layers=held_layers(boundary, facts, controllers), duration_s=round(duration, 3),
        directory=str(tmp), full_stdout=stdout, channel=_read_text(paths["channel"], limit),
        memory_exhausted=memory_exhausted, facts=facts)


#: Entries a fresh root may hold at its top (the runtime's first path components).
def _expected_root() -> set[str]:
    runtime = python_runtime()
    tops = {p.split("/")[1] for p, _ in runtime.mounts() if p.count("/") >= 1}
    return tops | {"proc", "dev", "sandbox"}


def held_layers(boundary: str | None, facts: dict[str, Any],
                controllers: list[str]) -> tuple[str, ...]:
    """The layers that held, from what the worker reported about itself (not from what
    was asked): its root directory, network interfaces, uid, capabilities and filter."""
    layers: list[str] = []
    if facts.get("event") != "ready":
        return ("rlimits",) if controllers == [] else ("rlimits", "cgroup")
    root = set(facts.get("root") or [])
    if (boundary in KERNEL_BOUNDARIES and root and root <= _expected_root()
            and facts.get("interfaces") in (0, 1) and 0 < (facts.get("processes") or 99) <= 3):
        layers.append(boundary)
    if facts.get("hostUid") not in (None, 0) and facts.get("capEff") == 0 \
            and facts.get("nnp") == 1:
        layers.append("unprivileged")
    if facts.get("seccomp") == 2:
        layers.append("seccomp")
    if controllers:
        layers.append("cgroup")
    layers.append("rlimits")
    if facts.get("guard"):
        layers.append("guard")
    return tuple(layers)


def _live_members(group: int) -> bool:
    """Whether a process of process group ``group`` is still running (zombies, which
    only wait for their parent to collect them, do not count)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(group).encode() and fields[0] != b"Z":
            return True
    return False


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill whatever is left of the run's process group and wait until no member runs
    (the sandbox's own processes die with it: die-with-parent, PID 1 of its namespace)."""
    deadline = time.monotonic() + 5.0
    while True:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            break
        proc.poll()
        if proc.returncode is not None and not _live_members(proc.pid):
            break
        if time.monotonic() > deadline:
            break
        time.sleep(0.01)
    proc.wait()


def _read_text(path: Path, limit: int) -> str:
    with open(path, "rb") as fh:
        return fh.read(limit).decode("utf-8", errors="replace")


def _read_events(path: Path) -> list[dict]:
    events = []
    for line in _read_text(path, 1024 * 1024).splitlines()[:1000]:
        try:
            data = json.loads(line[:10000])
        except (json.JSONDecodeError, RecursionError, ValueError):
            continue
        if isinstance(data, dict):
            events.append(data)
    return events


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters truncated]"
