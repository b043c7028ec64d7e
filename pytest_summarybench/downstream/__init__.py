"""Phase 3d of the spec (section 8): downstream tasks run with each model's summaries.

``sandbox`` runs generated code in a limited, isolated process.
"""

from __future__ import annotations

from .sandbox import SandboxLimits, SandboxResult, run_sandboxed

__all__ = ["SandboxLimits", "SandboxResult", "run_sandboxed"]
