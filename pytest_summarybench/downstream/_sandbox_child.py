"""The program that runs inside the sandbox: a supervisor and the worker it forks.

This file is copied into each sandbox directory and run by ``sandbox.run_sandboxed`` as
``python -I -S _sandbox_child.py CONFIG``; it uses the standard library only and imports
nothing from summarybench. The supervisor (still privileged, PID 1 of a fresh PID
namespace when namespaces are available) makes every mount read-only except the sandbox
directory, then forks the worker, waits for it and writes its exit status to the status
file. The worker gives up its privileges (every capability, for good, when it is root in
a user namespace; otherwise the ``nobody`` user when started as root), sets the process
limit, installs the audit-hook guard and runs the script; generated code never runs in
the supervisor.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import resource
import runpy
import signal
import sys
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
_FLAG_NAMES = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC,
               "noatime": MS_NOATIME, "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME}
#: Left alone: /proc is the namespace's own, /sys is not writable without capabilities,
#: and /dev is replaced by a minimal one (writes to device nodes ignore read-only mounts).
_SKIP_MOUNTS = ("/proc", "/sys", "/dev")
_MAX_VIOLATIONS = 20


def _unescape(path: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal."""
    return (path.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n")
            .replace("\\134", "\\"))


_DEVICES = ("null", "zero", "full", "random", "urandom")


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _hide(mount: Any, home: str, keep: list[str], box: str) -> None:
    """Cover ``home`` (where keys and credentials live) with an empty file system, then
    put back the parts under it the worker needs (the Python installation)."""
    if not os.path.isdir(home) or home == "/" or _under(box, home):
        return
    kept = [k for k in keep if _under(k, home) and os.path.isdir(k)]
    stash = os.path.join(os.path.dirname(box), "stash")
    for i, path in enumerate(kept):
        os.makedirs(os.path.join(stash, str(i)), exist_ok=True)
        mount(path, os.path.join(stash, str(i)), MS_BIND | MS_REC)
    mount("tmpfs", home, MS_NOSUID | MS_NODEV, "tmpfs", "mode=755,size=64k")
    for i, path in enumerate(kept):
        os.makedirs(path, exist_ok=True)
        mount(os.path.join(stash, str(i)), path, MS_BIND | MS_REC)


def _mount_readonly(box: str, devdir: str, homes: list[str], keep: list[str]) -> list[str]:
    """Bind the sandbox directory onto itself, give the namespace a /dev with only the
    harmless devices, hide the caller's home directories (but for the Python installation
    in ``keep``), then remount every other mount read-only.

    Runs in a private mount namespace, so nothing outside the sandbox sees the change.
    Returns the mount points made read-only.
    """
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)

    def mount(src: str | None, target: str, flags: int, fstype: str | None = None,
              data: str | None = None) -> None:
        if libc.mount(src.encode() if src else None, target.encode(),
                      fstype.encode() if fstype else None, flags,
                      data.encode() if data else None) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"mount {target}: {os.strerror(err)}")

    mount(None, "/", MS_REC | MS_PRIVATE)
    mount(box, box, MS_BIND | MS_REC)
    # The caller's uid 0 is mapped in: with the host's /dev it could open disks.
    mount("tmpfs", devdir, MS_NOSUID | MS_NOEXEC, "tmpfs", "mode=755,size=64k")
    for name in _DEVICES:
        node = os.path.join(devdir, name)
        open(node, "w").close()
        mount(f"/dev/{name}", node, MS_BIND)
    mount(devdir, "/dev", MS_BIND | MS_REC)
    for home in homes:
        _hide(mount, home, keep, box)
    done: list[str] = []
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        entries = [line.split() for line in fh]
    for fields in entries:
        target = _unescape(fields[4])
        if target == box or target.startswith(box + "/"):
            continue
        if any(target == s or target.startswith(s + "/") for s in _SKIP_MOUNTS):
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for opt in fields[5].split(","):
            flags |= _FLAG_NAMES.get(opt, 0)
        try:
            mount(None, target, flags)
        except OSError:
            continue  # a mount we cannot remount (e.g. locked): the other layers still hold
        if target not in done:
            done.append(target)
    return done


def _python_dirs() -> list[str]:
    """The Python installation the worker runs (its standard library must stay readable)."""
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return sorted(os.path.realpath(d) for d in dirs if d)


def _install_guard(box: str, report: int, homes: list[str]) -> None:
    """An audit hook that refuses network use, process creation, native code loading,
    writes outside ``box`` and reads in the caller's home directories (but for the Python
    installation), and reports each refusal on the ``report`` descriptor."""
    state = {"count": 0}
    python_dirs = _python_dirs()
    private = [os.path.realpath(h) for h in homes if h and os.path.realpath(h) != "/"]
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    allowed_files = {"/dev/null"}
    denied_always = {
        "socket.connect": "network access", "socket.bind": "network access",
        "socket.sendto": "network access", "socket.sendmsg": "network access",
        "socket.getaddrinfo": "network access", "socket.gethostbyname": "network access",
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
            if event == "os.chdir" or event == "os.rename":
                targets = targets[:2]
            else:
                targets = targets[:1]
            for target in targets:
                if not inside(target):
                    what = ("leaving the sandbox directory" if event == "os.chdir"
                            else "writing outside the sandbox directory")
                    deny(what, f"{event} {target!r}")

    sys.addaudithook(hook)


PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_NO_NEW_PRIVS = 38
#: SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP and their locks, SECBIT_KEEP_CAPS_LOCKED: uid 0
#: never gets capabilities back, not even by exec.
_SECUREBITS = 0x2F
_LAST_CAP = 63


def _drop_capabilities() -> None:
    """Give up every capability for good (the worker stays uid 0 of its user namespace,
    mapped to the caller, but may no longer mount, override permissions or exceed
    limits)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if libc.prctl(PR_SET_SECUREBITS, _SECUREBITS, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECUREBITS) failed")
    for cap in range(_LAST_CAP + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    header = Header(0x20080522, 0)
    data = (Data * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")


def _drop_to_user(uid: int) -> None:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def _worker(cfg: dict[str, Any]) -> None:
    os.close(cfg["status_fd"])
    box = cfg["box"]
    if cfg["drop"] == "capabilities":
        _drop_capabilities()
    elif cfg["drop"] == "user" and os.getuid() == 0:
        _drop_to_user(cfg["drop_uid"])
    nproc = cfg["processes"]
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    os.chdir(box)
    sys.path[:0] = [box]
    sys.dont_write_bytecode = True
    sys.argv = [cfg["script"]]
    if cfg["guard"]:
        _install_guard(box, cfg["violations_fd"], cfg["homes"])
    else:
        os.close(cfg["violations_fd"])
    runpy.run_path(os.path.join(box, cfg["script"]), run_name="__main__")


def _status(fd: int, **data: Any) -> None:
    os.write(fd, (json.dumps(data) + "\n").encode())


def main() -> int:
    cfg = json.loads(sys.argv[1])
    status_fd = cfg["status_fd"]
    readonly: list[str] = []
    if cfg["mount_readonly"]:
        try:
            readonly = _mount_readonly(cfg["box"], cfg["devdir"], cfg["homes"], _python_dirs())
        except OSError as exc:
            _status(status_fd, event="mount_failed", detail=str(exc))
    _status(status_fd, event="ready", readonly=readonly, pid=os.getpid())
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            _worker(cfg)
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
            finally:
                os._exit(code)
    # The supervisor ignores the signals a runaway worker provokes, and outlives it.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        _status(status_fd, event="exit", signal=os.WTERMSIG(status))
    else:
        _status(status_fd, event="exit", code=os.WEXITSTATUS(status))
    return 0


if __name__ == "__main__":
    sys.exit(main())
