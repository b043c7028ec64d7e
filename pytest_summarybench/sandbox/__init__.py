"""Runs model-written code in a sandbox: nothing of the host in it but a read-only Python.

The boundary is the kernel's, never Python's. Layers, outermost first (``SandboxResult.
layers`` lists those that held for a run, from what the sandboxed process itself reported
before any model-written code ran):

- ``bubblewrap`` or ``namespaces`` (the kernel boundary): new mount, PID, network, IPC and
  UTS namespaces around a fresh root file system that holds only the interpreter, its
  standard library and shared libraries (read-only, ``_runtime.py``), a minimal ``/dev``,
  its own ``/proc`` and the run's directory, ``/sandbox/box``: a size-capped in-memory
  file system with the inputs bound read-only inside it. No ``/etc``, no ``/tmp``, no home,
  project or output directory, no host socket, no network interface. bubblewrap (the
  sandbox of Flatpak) sets this up where it is installed; otherwise ``_child.py``
  does the same with ``unshare`` and ``pivot_root``.
- ``unprivileged``: the code runs as ``nobody`` (uid 65534) with no capabilities and
  ``no_new_privs``; started as root, it is host uid 65534 too.
- ``seccomp``: a syscall filter (``_seccomp.py``): no sockets, no namespaces or mounts, no
  ``ptrace``, no kernel keyrings, BPF or io_uring.
- ``cgroup``: the run's processes and memory are capped in total (``_cgroup.py``; needs
  write access to the cgroup hierarchy).
- ``rlimits``: CPU seconds, address space, file size, open files, processes per process;
  a session of its own killed at the wall-clock timeout; the sandbox dies with its
  supervisor (and with the pytest process that started it); an environment reduced to an
  allowlist (no keys).
- ``guard``: a Python audit hook refusing sockets, process creation, ctypes, writes outside
  the box and reads in home directories, with a reason. Defence in depth only: code that
  wants to can switch an audit hook off.

Without a kernel boundary (``boundary: none``, or neither bubblewrap nor ``unshare``
works here) nothing runs unless the caller opts in with ``allow_without_boundary``:
``SandboxUnavailable`` says why and what to install. Each layer is proven by
``tests/sandbox/test_sandbox_escape.py`` and ``tests/sandbox/test_sandbox.py``.

Modules: ``limits`` (what a run may use, how it ended), ``boundary`` (which kernel boundary
works here), ``launch`` (one run), and the pieces it uses: ``_child`` (the program that
sets the sandbox up from inside), ``_runtime`` (what of the host Python needs),
``_seccomp`` (the syscall filter) and ``_cgroup`` (totals of processes and memory).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .boundary import BoundaryStatus, boundary_status, resolve_boundary
from .launch import launch
from .limits import (
    KERNEL_BOUNDARIES,
    Boundary,
    ConfiguredLimits,
    SandboxLimits,
    SandboxResult,
    SandboxUnavailable,
    SandboxWarning,
)


def run_sandboxed(script: str, *, files: Mapping[str, str] | None = None,
                  readonly_dirs: Mapping[str, Path] | None = None,
                  limits: SandboxLimits | None = None) -> SandboxResult:
    """Run the Python ``script`` (source text) in a fresh sandbox and return how it ended.

    :param files: files placed in the run's directory (relative path -> text), after the
        directories are copied (so one may replace a copied module); all read-only.
    :param readonly_dirs: directories copied into the run's directory read-only
        (name -> source), e.g. the package the generated code belongs to. Symbolic links
        in them are copied as links and lead nowhere inside the sandbox.
    :param limits: the limits and layers (default ``SandboxLimits()``).

    The script finds the descriptor of its report channel as ``channel_fd`` in its
    globals; what it writes there comes back as ``SandboxResult.channel``.
    Raises ``SandboxUnavailable`` (see ``resolve_boundary``).
    """
    limits = limits or SandboxLimits()
    boundary = resolve_boundary(limits)
    return launch(limits, boundary, script, files or {}, readonly_dirs or {})


__all__ = ["KERNEL_BOUNDARIES", "Boundary", "BoundaryStatus", "ConfiguredLimits", "SandboxLimits",
           "SandboxResult", "SandboxUnavailable", "SandboxWarning", "boundary_status",
           "resolve_boundary", "run_sandboxed"]
