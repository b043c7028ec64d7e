"""Text made safe to print: control characters written out, paths quoted so that they can
be pasted back into a shell.

Names, paths and keys come from places we do not control (a repository's file names, a
model's name in the store, a key in a YAML file). A file named ``ESC]0;...BEL ESC[2J`` set
the terminal's title and cleared the screen when a warning printed it, and a newline in
a name forged a line. ``neutralise`` (shared by the reports, ``llm/redaction.py``) writes
C0/C1 controls, bidirectional overrides and lone surrogates as visible ``\\x1b``-style
escapes; ``shown_path`` quotes a path the way a shell reads it back.
"""

from __future__ import annotations

import os
import re

#: C0 controls but tab and newline, DEL, C1 controls, bidirectional embeddings, overrides
#: and isolates, and lone surrogates.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_LINE_BREAKS = re.compile(r"\r\n|[\t\n\r\x0b\x0c\x85\u2028\u2029]")
#: Characters a POSIX shell reads as themselves outside quotes (``shlex.quote``'s set).
_PLAIN = re.compile(r"[\w@%+=:,./-]+\Z", re.ASCII)
#: What ANSI-C quoting (``$'...'``) must escape: controls, line breaks, the quote and the
#: backslash.
_ANSI_C = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                     "\ud800-\udfff'\\\\]")
_ANSI_C_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "'": "\\'", "\\": "\\\\"}


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def neutralise(text: str, *, one_line: bool = False) -> str:
    """``text`` with control characters written out as ``\\x1b``-style escapes: inert in a
    terminal, a report or a log. Newlines and tabs are kept (CRLF becomes LF); with
    ``one_line``, every line break and tab becomes a space."""
    if one_line:
        text = _LINE_BREAKS.sub(" ", text)
    elif "\r" in text:
        text = text.replace("\r\n", "\n")
    return _CONTROLS.sub(_escape, text)


def _ansi_c(match: re.Match[str]) -> str:
    char = match.group()
    named = _ANSI_C_NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8 (os.fsdecode's surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` as one line a shell reads back as the same path: as it is when it holds
    only plain characters, in single quotes when it holds spaces or shell syntax, in
    ANSI-C quotes (``$'a\\nb'``: bash, zsh, ksh) when it holds a line break, a control
    character, a byte that is not UTF-8 or a quote, each written as its escape (never
    raw, never a space)."""
    text = os.fspath(path)
    if _PLAIN.match(text):
        return text
    if not _ANSI_C.search(text):
        return f"'{text}'"
    return "$'" + _ANSI_C.sub(_ansi_c, text) + "'"


_NAME_CONTROLS = re.compile(_CONTROLS.pattern[:-1] + "\t\n\r\x85\u2028\u2029]")
_NAME_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape_name(match: re.Match[str]) -> str:
    return _NAME_NAMED.get(match.group()) or _escape(match)


def shown_name(name: str) -> str:
    """A name or key from outside (a model id in the store, a YAML key) on one line: its
    control characters and line breaks written as escapes (``\\n``, ``\\x1b``), as
    ``neutralise`` writes control characters."""
    return _NAME_CONTROLS.sub(_escape_name, name)


def utf8_text(name: str) -> str:
    """A name read from the file system as text that encodes: the bytes of a name that
    is not UTF-8 (lone surrogates, as ``os.fsdecode`` gives them) written ``\\xff``."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
