"""Sandbox layer combinations for containment tests: each layer on its own, all of them,
and none (which proves that a payload really does what it claims)."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace

import pytest

from pytest_summarybench.sandbox import SandboxLimits, boundary_status

FAST = SandboxLimits(wall_s=5.0, cpu_s=2, memory_mb=256, processes=16)
#: name -> the layers asked for. Every combination but ``all`` runs without a kernel
#: boundary or without the in-process layers, to show what each holds by itself.
COMBINATIONS: dict[str, SandboxLimits] = {
    "all": FAST,
    "bubblewrap-only": replace(FAST, boundary="bubblewrap", seccomp=False, guard=False),
    "namespaces-only": replace(FAST, boundary="namespaces", seccomp=False, guard=False),
    "seccomp-only": replace(FAST, boundary="none", allow_without_boundary=True, guard=False,
                            drop_privileges=False),
    "guard-only": replace(FAST, boundary="none", allow_without_boundary=True, seccomp=False,
                          drop_privileges=False),
    "none": replace(FAST, boundary="none", allow_without_boundary=True, seccomp=False,
                    guard=False, drop_privileges=False),
}
KERNEL = ("all", "bubblewrap-only", "namespaces-only")


def limits_for(name: str) -> SandboxLimits:
    """The combination ``name``, or a skip saying what to install when it cannot run here."""
    limits = COMBINATIONS[name]
    status = boundary_status()
    if limits.boundary in ("bubblewrap", "namespaces") and limits.boundary not in status.usable:
        hint = ("apt-get install bubblewrap" if limits.boundary == "bubblewrap"
                else "a kernel that allows namespaces (unshare)")
        pytest.skip(f"{limits.boundary} is not usable here "
                    f"({status.reasons.get(limits.boundary)}); needs {hint}")
    if name == "all" and not status.usable:
        pytest.skip(f"no kernel boundary here: {status.explain('auto')}")
    if name.startswith("seccomp") and shutil.which("bwrap") is None and not _has_seccomp():
        pytest.skip("libseccomp is not installed (apt-get install libseccomp2)")
    return limits


def _has_seccomp() -> bool:
    from pytest_summarybench.sandbox import _seccomp

    return _seccomp.available() is None


def as_root() -> bool:
    return os.geteuid() == 0
