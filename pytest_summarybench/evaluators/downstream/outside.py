"""Text that leaves the sandbox (output, exception text, reported values) on its way to
the store and the reports: redacted first, then truncated, control characters made inert
(``llm.scrub``, the one place text is made safe to write).

Everything the generated code prints or raises is hostile text: it may carry a secret it
found, or escape sequences meant for the terminal that renders a report.
"""

from __future__ import annotations

from ...llm.redaction import scrub


def outside_text(text: str, limit: int) -> str:
    """``text`` redacted, then cut to ``limit`` characters, controls shown as ``\\xNN``."""
    return scrub(text, max_chars=limit)
