"""``codebase.include`` / ``exclude`` patterns, matched in time linear in the path.

The syntax (docs/configuration.md#codebase-patterns): ``*`` is any run of characters
within one folder or file name (never ``/``), ``?`` one such character, ``[abc]`` /
``[a-z]`` / ``[!abc]`` one character of (or not of) a set, ``**/`` any number of whole
folders (none included), ``**`` elsewhere anything, ``/`` included. A pattern matches the
whole path relative to the root; a leading ``./`` is ignored.

Python's ``re`` (and ``fnmatch``) backtrack: ``*a*a*a*a*a*a*b`` against a 250-character
name took minutes. Here every pattern is a small automaton whose states a path is run
through once, a character at a time, the sets of states reached being cached as the
states of a deterministic one (built as paths need them, at most ``_MAX_STATES`` kept):
each character costs one dictionary look-up once seen, and at most one step per pattern
token the first time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Token kinds of the automaton (one flat list for all patterns).
_LIT, _ONE, _SET, _STAR, _ANY, _SKIP2, _ACCEPT = range(7)
#: Cached sets of states (a deterministic automaton built lazily); past this many, the
#: cache starts again, so that no pattern makes it grow without a bound.
_MAX_STATES = 4096


def _tokens(pattern: str) -> list[tuple[int, object]]:
    out: list[tuple[int, object]] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            # (?:.*/)? : either skip all three, or anything then a slash
            out += [(_SKIP2, None), (_ANY, None), (_LIT, "/")]
            i += 3
        elif pattern.startswith("**", i):
            out.append((_ANY, None))
            i += 2
        elif c == "*":
            if not out or out[-1][0] != _STAR:  # ``**`` handled above; ``*`` runs are one
                out.append((_STAR, None))
            i += 1
        elif c == "?":
            out.append((_ONE, None))
            i += 1
        elif c == "[" and (close := pattern.find("]", i + 1)) > 0:
            body = pattern[i + 1:close].replace("\\", "\\\\")
            if body.startswith("!"):
                body = "^" + body[1:]
            try:
                out.append((_SET, re.compile(f"[{body}]", re.DOTALL).match))
            except re.error:  # ``[]``, ``[z-a]``: the characters as they are
                out += [(_LIT, ch) for ch in pattern[i:close + 1]]
            i = close + 1
        else:
            out.append((_LIT, c))
            i += 1
    out.append((_ACCEPT, None))
    return out


class GlobSet:
    """Whether a relative path matches any of some patterns; ``match(path)`` is linear in
    ``len(path)`` whatever the patterns."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self._toks: list[tuple[int, object]] = []
        starts = []
        for pattern in patterns:
            starts.append(len(self._toks))
            self._toks += _tokens(pattern.lstrip("./"))
        self._start = self._closure(starts)
        self._next: dict[tuple[frozenset[int], str], frozenset[int]] = {}
        self._accepts: dict[frozenset[int], bool] = {}

    def _closure(self, states: Iterable[int]) -> frozenset[int]:
        """``states`` with every state reachable from them without reading a character."""
        toks = self._toks
        seen: set[int] = set()
        todo = list(states)
        while todo:
            s = todo.pop()
            if s in seen:
                continue
            seen.add(s)
            kind = toks[s][0]
            if kind in (_STAR, _ANY):
                todo.append(s + 1)
            elif kind == _SKIP2:
                todo += (s + 1, s + 3)
        return frozenset(seen)

    def _step(self, states: frozenset[int], ch: str) -> frozenset[int]:
        toks = self._toks
        reached = []
        for s in states:
            kind, arg = toks[s]
            if kind == _LIT:
                if arg == ch:
                    reached.append(s + 1)
            elif kind == _ONE:
                if ch != "/":
                    reached.append(s + 1)
            elif kind == _SET:
                if arg(ch):  # type: ignore[operator]
                    reached.append(s + 1)
            elif kind == _STAR:
                if ch != "/":
                    reached.append(s)
            elif kind == _ANY:
                reached.append(s)
        return self._closure(reached)

    def match(self, path: str) -> bool:
        """Whether the whole of ``path`` matches one of the patterns."""
        nxt = self._next
        states = self._start
        for ch in path:
            key = (states, ch)
            found = nxt.get(key)
            if found is None:
                if len(nxt) >= _MAX_STATES:
                    nxt.clear()
                found = nxt[key] = self._step(states, ch)
            states = found
            if not states:
                return False
        accepts = self._accepts.get(states)
        if accepts is None:
            if len(self._accepts) >= _MAX_STATES:
                self._accepts.clear()
            toks = self._toks
            accepts = self._accepts[states] = any(toks[s][0] == _ACCEPT for s in states)
        return accepts


def compile_globs(patterns: list[str]) -> GlobSet | None:
    """A matcher of any of ``patterns`` against a whole relative path (None for none)."""
    return GlobSet(patterns) if patterns else None
