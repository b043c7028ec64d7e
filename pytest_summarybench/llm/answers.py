"""What a provider's answer must be before it is cached or used: Unicode text that can be
written as UTF-8, no longer than the call's ``max_tokens`` can explain.

A model answer is hostile input. A lone surrogate (``"\\ud800"`` in the JSON) decodes to a
Python string that no UTF-8 writer accepts: cached, it crashed every later run where the
summary was saved. A 30 MB answer to a 500-token request took pytest to gigabytes and
wrote a 220 MB pytest-html page. Both are refused here, before the response cache sees
them; a store written by an older version that already holds such an answer has it
ignored (read as a miss, and replaced by the next good answer).
"""

from __future__ import annotations

#: Characters a token may stand for, generously: English runs about 4, code and
#: whitespace runs more; a real answer never comes near this.
CHARS_PER_TOKEN = 32
#: Added to every limit, so that a tiny ``max_tokens`` still leaves room.
SLACK_CHARS = 8192
#: The limit when a call has no ``max_tokens``.
DEFAULT_MAX_CHARS = 1_000_000


def max_answer_chars(max_tokens: object) -> int:
    """The longest answer (in characters) accepted from a call with ``max_tokens``."""
    if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens > 0:
        return CHARS_PER_TOKEN * max_tokens + SLACK_CHARS
    return DEFAULT_MAX_CHARS


def answer_problem(text: str, max_tokens: object) -> str | None:
    """Why ``text`` cannot be kept as the answer of a call with ``max_tokens`` (None when
    it can)."""
    limit = max_answer_chars(max_tokens)
    if len(text) > limit:
        return (f"the answer is {len(text):,} characters, more than {limit:,} "
                f"(max_tokens {max_tokens} at most {CHARS_PER_TOKEN} characters a token)")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"the answer is not valid Unicode text ({exc.reason} at character "
                f"{exc.start}: {text[exc.start]!r})")
    return None
