"""Text that leaves the sandbox (output, exception text, reported values) on its way to
the store and the reports: truncated, secrets masked, control characters neutralised.

Everything the generated code prints or raises is hostile text: it may carry a secret it
found, or escape sequences meant for the terminal that renders a report.
"""

from __future__ import annotations

import re

from ..llm.providers import redact

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def outside_text(text: str, limit: int) -> str:
    """``text`` truncated to ``limit`` characters, redacted, controls shown as ``\\xNN``."""
    if len(text) > limit:
        text = text[:limit] + f"... [{len(text) - limit} more characters]"
    text = redact(text)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
