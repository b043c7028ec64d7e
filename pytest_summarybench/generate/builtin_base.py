"""What every built-in summarizer shares: the offline ones of ``builtin.py`` and the
validity ladder's (``generate/ladder.py``): the result they give, and how they read a
unit's text (identifiers split into words, code without comments and string literals,
the docstring without doc-comment markup), so that both read a unit alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..schemas import CodeUnit

#: Recorded as ``promptVersion`` of built-in summaries: they use no prompt, but a change to
#: their templates must not reuse summaries written by the old ones.
BUILTIN_VERSION = "builtin-1"
_MAX_CHARS = 600
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


@dataclass(frozen=True)
class BuiltinResult:
    """A built-in summary and how it was made."""

    text: str
    """The summary."""
    source: str
    """What produced it: the summarizer name, ``fallback-signature`` for a docstring
    fallback, or ``from:<unit id>`` for the negative control."""

    @property
    def model_version(self) -> str:
        return f"{BUILTIN_VERSION}:{self.source}"


def split_words(identifier: str) -> list[str]:
    """``parseHTTPResponse_v2`` -> ``['parse', 'http', 'response', 'v', '2']``."""
    words: list[str] = []
    for part in identifier.split("_"):
        words.extend(w.lower() for w in _CAMEL.findall(part))
    return words


def clip(text: str) -> str:
    """``text`` on one line, cut to ``_MAX_CHARS`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= _MAX_CHARS else text[:_MAX_CHARS - 3].rstrip() + "..."


_XML_TAG = re.compile(r"</?[A-Za-z][\w:-]*(\s[^<>]*)?/?>")
_INLINE_TAG = re.compile(r"\{@\w+\s+([^{}]*)\}")


def clean_docstring(unit: CodeUnit) -> str:
    """The unit's docstring as a summary ("" when it has none): doc-comment markup (C#'s
    ``<summary>``, Javadoc's ``{@code x}``) is not summary text, and the length is bounded."""
    doc = unit.docstring or ""
    if unit.language == "csharp":
        doc = _XML_TAG.sub(" ", doc)
    doc = _INLINE_TAG.sub(r"\1", doc).strip()
    return clip(doc) if doc else ""


#: Languages whose line comments start with ``#`` (the others use ``//``; PHP has both).
_HASH_COMMENTS = frozenset({"python", "ruby", "php"})
_STRINGS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:\\.|[^"\\\n])*"'
                      r"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`")
#: Rust without single-quoted literals: ``'a`` is a lifetime, not a string.
_STRINGS_RUST = re.compile(r'"(?:\\.|[^"\\\n])*"')
_BLOCK_COMMENT = re.compile(r"/\*[\s\S]*?\*/")


def code_only(text: str, language: str) -> str:
    """``text`` without comments and string literals: what identifiers are read from."""
    text = _BLOCK_COMMENT.sub(" ", text) if language not in ("python", "ruby") else text
    text = (_STRINGS_RUST if language == "rust" else _STRINGS).sub(" ", text)
    line_comment = r"(#|//).*" if language == "php" else (
        r"#.*" if language in _HASH_COMMENTS else r"//.*")
    return re.sub(line_comment, " ", text)
