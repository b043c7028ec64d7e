"""The program that runs inside the sandbox: sets it up, then runs the script as a worker.

Run by ``launch.py`` as ``python -I -S _child.py CONFIG``; it uses the standard
library only and imports nothing from summarybench. Three modes:

- ``worker`` (inside bubblewrap, which built the boundary): become the worker directly.
- ``namespaces`` (inside ``unshare``'s new mount, PID, network, IPC and UTS namespaces):
  the supervisor, PID 1 of its namespace, builds a fresh root holding only the mounts of
  the plan, switches to it with ``pivot_root``, forks the worker, kills every process of
  the namespace at the wall-clock deadline and reports the worker's exit status.
- ``process`` (no kernel boundary, opted into): the supervisor forks the worker and
  reports its exit status.

The worker gives up its privileges for good (host root becomes ``nobody``; root of a user
namespace drops every capability with the secure bits locked), sets ``no_new_privs``,
loads the syscall filter, caps its processes, installs the audit-hook guard and reports
what it now is (uid, capabilities, filter, root directory, network interfaces) on the
status descriptor, which it then closes: only then does the script run. It refuses to
run the script when a step fails (fail closed).
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import resource
import runpy
import signal
import sys
import time
from typing import Any

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_NOATIME = 0x400
MS_NODIRATIME = 0x800
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MS_RELATIME = 0x200000
MNT_DETACH = 0x2
_FLAG_NAMES = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC,
               "noatime": MS_NOATIME, "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME}
_DEVICES = ("null", "zero", "full", "random", "urandom")
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41, "ppc64le": 203,
               "s390x": 217}
_MAX_VIOLATIONS = 20
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECCOMP_MODE_FILTER = 2
#: SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP and their locks, SECBIT_KEEP_CAPS_LOCKED: uid 0
#: never gets capabilities back, not even by exec.
_SECUREBITS = 0x2F
_LAST_CAP = 63

#: The C library's functions, from the interpreter's own symbols: ``find_library`` would
#: start a program (``ldconfig``), and inside the sandbox there is none.
_libc = ctypes.CDLL(None, use_errno=True)


class SetupError(OSError):
    """A step of the sandbox's set-up failed: the script must not run."""


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise SetupError(err, f"{what}: {os.strerror(err)}")


def _mount(src: str | None, target: str, flags: int, fstype: str | None = None,
           data: str | None = None) -> None:
    _check(_libc.mount(src.encode() if src else None, target.encode(),
                       fstype.encode() if fstype else None, flags,
                       data.encode() if data else None), f"mount {target}")


# -- the fresh root (namespaces mode) -----------------------------------------------------
def _locked_flags(path: str) -> int:
    """The flags of the mount holding ``path`` that a user namespace may not clear."""
    best, flags = "", 0
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        for line in fh:
            fields = line.split()
            target = fields[4].replace("\\040", " ")
            if (path == target or path.startswith(target.rstrip("/") + "/")) \
                    and len(target) >= len(best):
                best = target
                flags = 0
                for opt in fields[5].split(","):
                    flags |= _FLAG_NAMES.get(opt, 0)
    return flags


def _bind_readonly(src: str, target: str) -> None:
    if os.path.isdir(src):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    _mount(src, target, MS_BIND | MS_REC)
    base = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
    try:
        _mount(None, target, base)
    except SetupError:
        _mount(None, target, base | _locked_flags(src))


def _build_root(cfg: dict[str, Any]) -> None:
    """Mount the plan's operations under a new tmpfs root and ``pivot_root`` into it."""
    new = cfg["newroot"]
    _mount(None, "/", MS_REC | MS_PRIVATE)
    _mount("tmpfs", new, MS_NOSUID | MS_NODEV, "tmpfs", "mode=755,size=4m")
    for op in cfg["plan"]:
        kind, target = op[0], new + (op[2] if op[0] == "ro" else op[1])
        if kind == "ro":
            _bind_readonly(op[1], target)
        elif kind == "hide":
            os.makedirs(target, exist_ok=True)
            _mount("tmpfs", target, MS_NOSUID | MS_NODEV | MS_RDONLY, "tmpfs",
                   "mode=555,size=4k")
        elif kind == "proc":
            os.makedirs(target, exist_ok=True)
            _mount("proc", target, MS_NOSUID | MS_NODEV | MS_NOEXEC, "proc")
        elif kind == "dev":
            os.makedirs(target, exist_ok=True)
            _mount("tmpfs", target, MS_NOSUID | MS_NOEXEC, "tmpfs", "mode=755,size=64k")
            for name in _DEVICES:
                node = os.path.join(target, name)
                open(node, "w").close()
                _mount(f"/dev/{name}", node, MS_BIND)
        elif kind == "tmpfs":
            os.makedirs(target, exist_ok=True)
            _mount("tmpfs", target, MS_NOSUID | MS_NODEV, "tmpfs", f"mode=777,size={op[2]}")
    box_tmp = new + cfg["box"] + "/tmp"
    os.mkdir(box_tmp)
    os.chmod(box_tmp, 0o777)
    old = new + "/.oldroot"
    os.mkdir(old)
    number = _PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise SetupError(0, f"pivot_root: unknown architecture {platform.machine()}")
    _check(_libc.syscall(number, new.encode(), old.encode()), "pivot_root")
    os.chdir("/")
    _check(_libc.umount2(b"/.oldroot", MNT_DETACH), "umount the old root")
    os.rmdir("/.oldroot")
    _mount(None, "/", MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


# -- giving up privileges ------------------------------------------------------------------
def _host_uid() -> int | None:
    """The host uid of this process (through the user namespace's map)."""
    try:
        with open("/proc/self/uid_map", encoding="utf-8") as fh:
            rows = [[int(x) for x in line.split()] for line in fh if line.strip()]
    except (OSError, ValueError):
        return None
    uid = os.getuid()
    for inside, outside, count in rows:
        if inside <= uid < inside + count:
            return outside + uid - inside
    return None


def _status_field(name: str) -> str | None:
    try:
        with open("/proc/self/status", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(name + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _clear_capabilities(lock_root: bool) -> None:
    """Empty every capability set of this process (and lock uid 0 out of getting them
    back when it stays uid 0 of a user namespace)."""
    if lock_root:
        _check(_libc.prctl(PR_SET_SECUREBITS, _SECUREBITS, 0, 0, 0), "prctl(SECUREBITS)")
        for cap in range(_LAST_CAP + 1):
            _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(0x20080522, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def _drop_privileges(cfg: dict[str, Any]) -> None:
    if not cfg["drop"]:
        return
    if os.getuid() == 0 and _host_uid() == 0:
        # host root: become host nobody (this clears the capabilities)
        os.setgroups([])
        os.setgid(cfg["nobody"])
        os.setuid(cfg["nobody"])
        _clear_capabilities(lock_root=False)
    elif os.getuid() == 0:
        _clear_capabilities(lock_root=True)  # root of a user namespace: the caller's uid
    else:
        _clear_capabilities(lock_root=False)


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _load_seccomp(program: bytes) -> None:
    count = len(program) // ctypes.sizeof(_SockFilter)
    filters = (_SockFilter * count).from_buffer_copy(program)
    prog = _SockFprog(count, ctypes.cast(filters, ctypes.POINTER(_SockFilter)))
    _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0),
           "prctl(SECCOMP)")


# -- the guard -----------------------------------------------------------------------------
def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _python_dirs() -> list[str]:
    """The Python installation the worker runs (its standard library must stay readable)."""
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return sorted(os.path.realpath(d) for d in dirs if d)


def _install_guard(box: str, report: int, homes: list[str]) -> None:
    """An audit hook that refuses network use, process creation, native code loading,
    writes outside ``box`` and reads in the caller's home directories (but for the Python
    installation), and reports each refusal on the ``report`` descriptor. Defence in
    depth: the kernel layers are the boundary."""
    state = {"count": 0}
    python_dirs = _python_dirs()
    private = [os.path.realpath(h) for h in homes if h and os.path.realpath(h) != "/"]
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    allowed_files = {"/dev/null"}
    denied_always = {
        "socket.connect": "network access", "socket.bind": "network access",
        "socket.sendto": "network access", "socket.sendmsg": "network access",
        "socket.getaddrinfo": "network access", "socket.gethostbyname": "network access",
        "socket.__new__": "network access",
        "os.fork": "process creation", "os.forkpty": "process creation",
        "os.exec": "process creation", "os.posix_spawn": "process creation",
        "os.spawn": "process creation", "os.system": "process creation",
        "subprocess.Popen": "process creation", "pty.spawn": "process creation",
        "ctypes.dlopen": "native code loading", "ctypes.dlsym": "native code loading",
        "ctypes.call_function": "native code loading",
        "os.kill": "signalling other processes", "os.killpg": "signalling other processes",
    }
    path_events = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.symlink", "os.link",
                   "os.truncate", "os.chmod", "os.chown", "os.utime", "shutil.rmtree",
                   "shutil.copyfile", "shutil.move", "os.chdir"}
    root = os.path.realpath(box)

    def inside(path: Any) -> bool:
        if isinstance(path, int):
            return True  # an already open descriptor
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            path = os.fspath(path)
        real = os.path.realpath(path)
        return real in allowed_files or real == root or real.startswith(root + os.sep)

    def deny(what: str, detail: str) -> None:
        if state["count"] < _MAX_VIOLATIONS:
            state["count"] += 1
            line = json.dumps({"kind": what, "detail": detail[:200]}) + "\n"
            try:
                os.write(report, line.encode())
            except OSError:
                pass
        raise PermissionError(f"sandbox: {what} is not allowed ({detail[:200]})")

    def private_path(path: Any) -> bool:
        if isinstance(path, int) or path is None:
            return False
        real = os.path.realpath(os.fsdecode(path) if isinstance(path, bytes) else
                                os.fspath(path))
        return (any(_under(real, h) for h in private) and not inside(path)
                and not any(_under(real, d) for d in python_dirs))

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in denied_always:
            deny(denied_always[event], f"{event} {args!r}"[:200])
        elif event == "open":
            path, mode, flags = (list(args) + [None, None])[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and bool(flags & write_flags))
            if writing and not inside(path):
                deny("writing outside the sandbox directory", f"open {path!r}")
            if private_path(path):
                deny("reading the caller's home directory", f"open {path!r}")
        elif event in ("os.listdir", "os.scandir") and args and private_path(args[0]):
            deny("reading the caller's home directory", f"{event} {args[0]!r}")
        elif event in path_events:
            targets = [a for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))]
            targets = targets[:2] if event in ("os.chdir", "os.rename") else targets[:1]
            for target in targets:
                if not inside(target):
                    what = ("leaving the sandbox directory" if event == "os.chdir"
                            else "writing outside the sandbox directory")
                    deny(what, f"{event} {target!r}")

    sys.addaudithook(hook)


# -- the worker ----------------------------------------------------------------------------
def _interfaces() -> int | None:
    try:
        with open("/proc/self/net/dev", encoding="utf-8") as fh:
            return max(0, len(fh.read().splitlines()) - 2)
    except OSError:
        return None


def _facts(cfg: dict[str, Any]) -> dict[str, Any]:
    cap = _status_field("CapEff")
    return {"event": "ready", "uid": os.getuid(), "hostUid": _host_uid(),
            "processes": sum(1 for p in os.listdir("/proc") if p.isdigit()),
            "capEff": int(cap, 16) if cap else None,
            "nnp": int(_status_field("NoNewPrivs") or -1),
            "seccomp": int(_status_field("Seccomp") or 0), "root": sorted(os.listdir("/")),
            "interfaces": _interfaces(), "guard": bool(cfg["guard"])}


def _worker(cfg: dict[str, Any], seccomp_program: bytes | None) -> None:
    """Give up privileges, report, close the status channel, run the script."""
    status = cfg["status_fd"]
    _drop_privileges(cfg)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
    if seccomp_program is not None:
        _load_seccomp(seccomp_program)
    nproc = cfg["processes"]
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    box = cfg["box"]
    os.chdir(box)
    sys.path[:0] = [box]
    sys.dont_write_bytecode = True
    sys.argv = [cfg["script"]]
    if cfg["guard"]:
        _install_guard(box, cfg["violations_fd"], cfg["homes"])
    else:
        os.close(cfg["violations_fd"])
    os.write(status, (json.dumps(_facts(cfg)) + "\n").encode())
    os.close(status)
    runpy.run_path(os.path.join(box, cfg["script"]), run_name="__main__",
                   init_globals={"channel_fd": cfg["channel_fd"]})


def _status(fd: int, **data: Any) -> None:
    os.write(fd, (json.dumps(data) + "\n").encode())


def _run_worker(cfg: dict[str, Any], seccomp_program: bytes | None) -> int:
    """The worker's body with its exit code (exceptions print a traceback: code 1)."""
    code = 0
    try:
        _worker(cfg, seccomp_program)
    except SetupError as exc:
        try:
            _status(cfg["status_fd"], event="refused", detail=str(exc)[:300])
        except OSError:
            pass
        code = 70
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        code = 1
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
    return code


def _supervise(cfg: dict[str, Any], seccomp_program: bytes | None) -> int:
    """Fork the worker, wait for it (killing the namespace at the deadline) and report."""
    status_fd = cfg["status_fd"]
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    pid = os.fork()
    if pid == 0:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # dies with the supervisor
        os._exit(_run_worker(cfg, seccomp_program))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    deadline = time.monotonic() + cfg["wall_s"] + 1.0
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(-1 if os.getpid() == 1 else pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(0.01)
    if os.WIFSIGNALED(status):
        _status(status_fd, event="exit", signal=os.WTERMSIG(status))
    else:
        _status(status_fd, event="exit", code=os.WEXITSTATUS(status))
    if os.getpid() == 1:
        try:
            os.kill(-1, signal.SIGKILL)  # whatever the worker left behind dies with it
        except OSError:
            pass
    return 0


def main() -> int:
    cfg = json.loads(sys.argv[1])
    mode = cfg["mode"]
    if mode == "worker":
        return _run_worker(cfg, None)  # bubblewrap loaded the filter before exec
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    program = None
    if cfg["seccomp"]:
        with open(cfg["seccomp"], "rb") as fh:
            program = fh.read()
    if mode == "namespaces":
        try:
            _build_root(cfg)
        except (OSError, ValueError) as exc:
            _status(cfg["status_fd"], event="refused", detail=f"fresh root: {exc}"[:300])
            return 70
    return _supervise(cfg, program)


if __name__ == "__main__":
    sys.exit(main())
