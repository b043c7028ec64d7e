"""Which kernel boundary a sandboxed run gets: bubblewrap where it works, else Linux
namespaces through ``unshare``, each proven by a trial run once per process; or none,
which only an explicit opt-in accepts."""

from __future__ import annotations

import functools
import shutil
import sys
from dataclasses import dataclass

from .launch import launch
from .limits import KERNEL_BOUNDARIES, Boundary, SandboxLimits, SandboxUnavailable, last_line

INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf "
                "install bubblewrap) or allow unprivileged user namespaces")


@dataclass(frozen=True)
class BoundaryStatus:
    """Which kernel boundaries work in this process's environment, and why not."""

    usable: tuple[str, ...]
    """Working boundaries, preferred first."""
    reasons: dict[str, str]
    """Why each other boundary does not work."""

    def choose(self, wanted: Boundary) -> str | None:
        """The boundary a run asking for ``wanted`` gets (None: none works)."""
        if wanted == "none":
            return None
        if wanted == "auto":
            return self.usable[0] if self.usable else None
        return wanted if wanted in self.usable else None

    def explain(self, wanted: Boundary) -> str:
        """Why a run asking for ``wanted`` has no kernel boundary, and what to do."""
        if wanted == "none":
            return "the configuration asks for no kernel boundary (sandbox.boundary: none)"
        names = KERNEL_BOUNDARIES if wanted == "auto" else (wanted,)
        why = "; ".join(f"{n}: {self.reasons.get(n, 'not usable')}" for n in names)
        return f"no kernel sandbox boundary works here ({why}); {INSTALL_HINT}"


def _probe(boundary: str) -> str | None:
    """None when a trivial program runs behind ``boundary`` and reports the isolation
    expected of it; else why not."""
    if not sys.platform.startswith("linux"):
        return "Linux only"
    tool = "bwrap" if boundary == "bubblewrap" else "unshare"
    if shutil.which(tool) is None:
        return f"{tool} is not installed"
    limits = SandboxLimits(wall_s=30.0, cpu_s=10, boundary=boundary,  # type: ignore[arg-type]
                           guard=False)
    try:
        result = launch(limits, boundary, "print('ok')\n", {}, {})
    except (OSError, SandboxUnavailable) as exc:
        return f"{type(exc).__name__}: {exc}"
    if result.stdout.strip() != "ok" or boundary not in result.layers:
        detail = (result.facts.get("refused") or last_line(result.stderr)
                  or result.failure_reason(limits) or "its isolation could not be confirmed")
        return f"a trial run failed: {detail}"
    return None


@functools.cache
def boundary_status() -> BoundaryStatus:
    """Probe bubblewrap and the in-house namespaces once per process."""
    reasons = {name: _probe(name) for name in KERNEL_BOUNDARIES}
    return BoundaryStatus(usable=tuple(n for n in KERNEL_BOUNDARIES if reasons[n] is None),
                          reasons={n: r for n, r in reasons.items() if r is not None})


def resolve_boundary(limits: SandboxLimits) -> str | None:
    """The kernel boundary runs with ``limits`` get, None for the process layers only.

    Raises ``SandboxUnavailable`` when there is none and ``allow_without_boundary`` is off.
    """
    status = boundary_status()
    chosen = status.choose(limits.boundary)
    if chosen is None and not limits.allow_without_boundary:
        raise SandboxUnavailable(status.explain(limits.boundary) + "; or set "
                                 "allowWithoutBoundary to run model-written code behind the "
                                 "process limits, seccomp and the guard only")
    return chosen
