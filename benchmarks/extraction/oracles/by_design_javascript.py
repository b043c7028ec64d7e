"""JavaScript differences from the ``typescript`` package's parser that are so by design
(docs/extraction.md, "## TypeScript and JavaScript"): TypeScript's rule, for JavaScript's
grammar."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from by_design_typescript import grammar_error_rule  # noqa: E402

BY_DESIGN = {
    "definitions the grammar cannot parse are left out": grammar_error_rule("javascript"),
}
