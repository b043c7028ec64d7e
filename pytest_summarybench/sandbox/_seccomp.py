"""The sandbox's syscall filter, compiled to a BPF program by libseccomp.

The filter allows by default and refuses (``EPERM``) what sandboxed test code never needs
and what a kernel attack or an escape would: namespaces and mounts, other processes'
memory (``ptrace``, ``process_vm_*``), kernel keyrings, BPF, perf events, io_uring,
module loading, socket creation (no network at all, not even a Unix socket to a host
path), namespace flags to ``clone``, terminal injection ioctls and system-wide settings.
``clone3`` answers ``ENOSYS`` (its flags sit behind a pointer the filter cannot read), so
the C library falls back to ``clone``, whose flags are checked. Syscalls of other
architectures (the i386 and x32 entry points on x86-64) kill the process.

libseccomp (the library behind Docker's, systemd's and bubblewrap's filters) is loaded
with ctypes and only exports the program: bubblewrap loads it with ``--seccomp FD``, the
in-house namespace boundary with ``prctl`` (``_child.py``). Where libseccomp is
missing the filter is simply not a layer of the run, and the result says so.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import tempfile

from ..core.errors import RunError

#: Refused with EPERM: (syscall names; those unknown on this architecture are skipped).
DENIED = (
    # namespaces, mounts and roots
    "mount", "umount", "umount2", "pivot_root", "chroot", "unshare", "setns", "move_mount",
    "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    # network: no sockets at all (socketpair stays: it reaches nobody)
    "socket",
    # other processes and their memory
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp", "pidfd_getfd",
    # kernel attack surface and system-wide state
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "open_by_handle_at",
    "name_to_handle_at", "fanotify_init", "init_module", "finit_module", "delete_module",
    "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff", "syslog", "acct",
    "quotactl", "quotactl_fd", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "sethostname", "setdomainname", "iopl", "ioperm", "personality", "lookup_dcookie",
    "vhangup", "uselib", "_sysctl", "nfsservctl",
)
#: ``clone`` flags that create namespaces (refused: a new user namespace would give the
#: code capabilities again inside it).
CLONE_NAMESPACE_FLAGS = (0x10000000, 0x00020000, 0x20000000, 0x40000000, 0x04000000,
                         0x08000000, 0x02000000)  # NEWUSER NS NEWPID NEWNET NEWUTS NEWIPC NEWCGROUP
#: ioctl requests that push input into a terminal or console (TIOCSTI, TIOCLINUX).
DENIED_IOCTLS = (0x5412, 0x541C)

_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_CMP_MASKED_EQ = 7


def _act_errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


class SeccompUnavailable(RunError, RuntimeError):
    """libseccomp is not installed, or refused to build the filter."""


def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp")
    if not name:
        raise SeccompUnavailable("libseccomp is not installed (Debian/Ubuntu: apt-get install "
                                 "libseccomp2)")
    lib = ctypes.CDLL(name, use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.c_void_p]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def _rule(lib: ctypes.CDLL, ctx: int, action: int, name: str,
          compare: tuple[int, int, int] | None = None) -> None:
    nr = lib.seccomp_syscall_resolve_name(name.encode())
    if nr < 0:
        return  # not a syscall of this architecture
    if compare is None:
        rc = lib.seccomp_rule_add_array(ctypes.c_void_p(ctx), action, nr, 0, None)
    else:
        arg, mask, value = compare
        cmp = _ArgCmp(arg, _SCMP_CMP_MASKED_EQ, mask, value)
        rc = lib.seccomp_rule_add_array(ctypes.c_void_p(ctx), action, nr, 1, ctypes.byref(cmp))
    if rc < 0:
        raise SeccompUnavailable(f"libseccomp refused the rule for {name}: "
                                 f"{os.strerror(-rc)}")


@functools.cache
def filter_program() -> bytes:
    """The filter as a BPF program (``struct sock_filter`` entries), built once per process.

    Raises ``SeccompUnavailable`` when libseccomp is missing or fails.
    """
    lib = _library()
    ctx = lib.seccomp_init(_SCMP_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable("seccomp_init failed")
    try:
        eperm = _act_errno(errno.EPERM)
        for name in DENIED:
            _rule(lib, ctx, eperm, name)
        _rule(lib, ctx, _act_errno(errno.ENOSYS), "clone3")
        for flag in CLONE_NAMESPACE_FLAGS:
            _rule(lib, ctx, eperm, "clone", (0, flag, flag))
        for request in DENIED_IOCTLS:
            _rule(lib, ctx, eperm, "ioctl", (1, 0xFFFFFFFF, request))
        with tempfile.TemporaryFile() as fh:
            rc = lib.seccomp_export_bpf(ctypes.c_void_p(ctx), fh.fileno())
            if rc < 0:
                raise SeccompUnavailable(f"seccomp_export_bpf failed: {os.strerror(-rc)}")
            fh.seek(0)
            program = fh.read()
    finally:
        lib.seccomp_release(ctypes.c_void_p(ctx))
    if not program or len(program) % 8:
        raise SeccompUnavailable("libseccomp exported an empty or malformed program")
    return program


def available() -> str | None:
    """None when the filter can be built here, else why not."""
    try:
        filter_program()
    except (SeccompUnavailable, OSError) as exc:
        return str(exc)
    return None
