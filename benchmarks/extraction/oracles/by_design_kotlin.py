"""Kotlin differences from the Kotlin compiler's parser that are so by design
(docs/extraction.md, "## Kotlin")."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compare import distinguished_name  # noqa: E402

BY_DESIGN = {"same-named units are told apart": distinguished_name}
