"""The offline summarizers, selectable as ``builtin/<name>`` models.

They need no key and no network, make the default run meaningful and give every real
model a floor to beat. Each is a plain function of the unit (and, for the negative
control, of the other sampled units); none sees anything a model under test would not.

- ``builtin/docstring``: the unit's own docstring or leading doc comment
  (``CodeUnit.docstring``); when the unit has none, the ``builtin/signature`` template.
  Which one was used is recorded in ``generationMetadata.modelVersion`` as
  ``builtin-1:docstring`` or ``builtin-1:fallback-signature``.
- ``builtin/signature``: a sentence template from the name, parameters and return type
  (methods for a class, exports for a file).
- ``builtin/lead``: the first lines of the body, after the declaration.
- ``builtin/identifiers``: the identifiers of the code split into lower-case words.
- ``builtin/shuffled``: a NEGATIVE CONTROL. Each unit gets another unit's
  ``builtin/docstring`` summary, through a seeded derangement (no unit keeps its own),
  so a sound evaluator must rank it last.

The instrument-validity ladder (``validate/l1-docstring`` ... ``validate/l4-other`` and the
A/A twin ``validate/l1-twin``) is also built in, under the names ``validate-*``; its texts
are defined in ``pytest_summarybench/generate/ladder.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from random import Random

from ..core.errors import InputError
from ..schemas import CodeUnit
from .builtin_base import (
    BuiltinResult,
    clean_docstring,
    clip,
    code_only,
    split_words,
)

BUILTIN_NAMES: tuple[str, ...] = ("docstring", "identifiers", "lead", "shuffled", "signature")
#: How many non-blank body lines ``builtin/lead`` keeps.
LEAD_LINES = 3
#: At most this many words from ``builtin/identifiers``.
MAX_IDENTIFIER_WORDS = 40

_TOKEN = re.compile(r"\w+|[^\w\s]")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Keywords of the supported languages: they say nothing about what a unit does.
_KEYWORDS = frozenset("""
abstract and as assert async await boolean break byte case catch char chan class const
companion continue def default defer del do double elif else elsif end enum except export
extends false final finally float fn for foreach from fun func function go goto if impl
implements internal lateinit
import in instanceof int interface is let long map match mod module mut namespace new nil
none not null object or override package pass pub public private protected raise range
readonly record return sealed self short static str string struct super suspend switch
then this throw
throws true try type typeof undefined unless until use using val var void when where while
with yield
""".split())


class BuiltinError(InputError, ValueError):
    """A built-in summarizer cannot produce a summary (e.g. an unknown name)."""


def count_tokens(text: str) -> int:
    """An approximate token count (words and punctuation marks) for built-in summaries."""
    return len(_TOKEN.findall(text))


def _phrase(identifier: str) -> str:
    return " ".join(split_words(identifier)) or identifier


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def signature_summary(unit: CodeUnit, method_names: Sequence[str] = ()) -> str:
    """The ``builtin/signature`` template."""
    meta = unit.metadata
    if unit.type in ("function", "method"):
        kind = "Method" if unit.type == "method" else "Function"
        owner = unit.name.rsplit(".", 1)[0] if "." in unit.name else None
        text = f"{kind} {unit.short_name} ({_phrase(unit.short_name)})"
        if owner:
            text += f" of {owner}"
        params = []
        for p in meta.parameters or []:
            notes = [n for n in (p.type, "optional" if p.optional else None) if n]
            params.append(p.name + (f" ({', '.join(notes)})" if notes else ""))
        text += f" taking {_join(params)}" if params else " taking no parameters"
        if meta.return_type:
            text += f" and returning {meta.return_type}"
        return clip(text + ".")
    if unit.type == "class":
        text = f"Class {unit.short_name} ({_phrase(unit.short_name)})"
        if method_names:
            text += f" with methods {_join(list(method_names))}"
        return clip(text + ".")
    text = f"{unit.language.capitalize()} file {unit.path}"
    if meta.exports:
        text += f" exporting {_join(meta.exports)}"
    return clip(text + ".")


def docstring_summary(unit: CodeUnit, method_names: Sequence[str] = ()) -> BuiltinResult:
    """The ``builtin/docstring`` summary: the docstring, else the signature template."""
    doc = clean_docstring(unit)
    if doc:
        return BuiltinResult(doc, "docstring")
    return BuiltinResult(signature_summary(unit, method_names), "fallback-signature")


_DECL_END = re.compile(r"(:|\{|=>|\bdo|\bthen|\bbegin|=)\s*(#.*|//.*)?$")


def _body_lines(unit: CodeUnit) -> list[str]:
    lines = unit.content.splitlines()
    if unit.type in ("file", "module"):
        return lines
    # Skip decorators and the declaration: up to the first line that opens the body,
    # within the first few lines (a long parameter list); else just the first line.
    start = 0
    while start < len(lines) and lines[start].lstrip().startswith("@"):
        start += 1
    for i in range(start, min(start + 12, len(lines))):
        if _DECL_END.search(lines[i].rstrip()):
            return lines[i + 1:]
    return lines[start + 1:]


def lead_summary(unit: CodeUnit) -> str:
    """The ``builtin/lead`` summary: the first non-blank lines after the declaration."""
    kept = [ln.strip() for ln in _body_lines(unit) if ln.strip() and ln.strip() not in "{}"]
    if not kept:
        kept = [ln.strip() for ln in unit.content.splitlines() if ln.strip()]
    return clip(" ".join(kept[:LEAD_LINES]))


def identifier_words(unit: CodeUnit) -> list[str]:
    """Distinct non-keyword words of the unit's name and identifiers, in order of first
    use (comments and string literals are not identifiers)."""
    seen: dict[str, None] = {}
    for ident in [unit.short_name, *_IDENT.findall(code_only(unit.content, unit.language))]:
        for word in split_words(ident):
            if len(word) > 1 and word not in _KEYWORDS and not word.isdigit():
                seen.setdefault(word, None)
    return list(seen)


def identifiers_summary(unit: CodeUnit) -> str:
    """The ``builtin/identifiers`` summary: the first ``MAX_IDENTIFIER_WORDS`` of
    ``identifier_words``."""
    words = identifier_words(unit)[:MAX_IDENTIFIER_WORDS]
    return " ".join(words) if words else _phrase(unit.short_name)


def derangement(ids: Sequence[str], rng: Random) -> dict[str, str]:
    """A seeded permutation of ``ids`` with no fixed point (Sattolo's algorithm: a single
    random cycle), as ``{id: donor id}``. Needs at least two distinct ids."""
    items = list(dict.fromkeys(ids))
    if len(items) < 2:
        raise BuiltinError(
            f"builtin/shuffled needs at least two sampled units, got {len(items)}; "
            "raise evaluation.sampleSize or drop the negative control")
    order = sorted(items)
    perm = list(order)
    for i in range(len(perm) - 1, 0, -1):
        j = rng.randrange(i)
        perm[i], perm[j] = perm[j], perm[i]
    return dict(zip(order, perm, strict=True))


Summarizer = Callable[[CodeUnit, Sequence[str]], BuiltinResult]


def _plain(fn: Callable[[CodeUnit], str], source: str) -> Summarizer:
    return lambda unit, _methods: BuiltinResult(fn(unit), source)


#: The summarizers that need only the unit (``shuffled`` needs the whole sample).
SUMMARIZERS: dict[str, Summarizer] = {
    "docstring": docstring_summary,
    "signature": lambda unit, methods: BuiltinResult(signature_summary(unit, methods),
                                                     "signature"),
    "lead": _plain(lead_summary, "lead"),
    "identifiers": _plain(identifiers_summary, "identifiers"),
}


def summarize_builtin(name: str, units: Sequence[CodeUnit],
                      methods: Callable[[CodeUnit], Sequence[str]],
                      rng: Random) -> dict[str, BuiltinResult]:
    """Summaries of ``units`` by the built-in ``name``, by unit id.

    ``methods`` gives a class's method names; ``rng`` seeds the negative control, which
    is computed over all of ``units`` (the run's sample) so the pairing is stable.
    """
    if name == "shuffled":
        donors = derangement([u.id for u in units], rng)
        by_id = {u.id: u for u in units}
        out: dict[str, BuiltinResult] = {}
        for unit in units:
            donor = by_id[donors[unit.id]]
            text = docstring_summary(donor, methods(donor)).text
            out[unit.id] = BuiltinResult(text, f"from:{donor.id}")
        return out
    if name.startswith("validate-"):
        # The ladder models of ``--sb-validate`` (levels of known quality, see validity/).
        from .ladder import LADDER_NAMES, ladder_summaries

        if name in LADDER_NAMES:
            return ladder_summaries(name, units, methods, rng)
    fn = SUMMARIZERS.get(name)
    if fn is None:
        raise BuiltinError(f"unknown built-in model builtin/{name}; "
                           f"choose one of {', '.join('builtin/' + n for n in BUILTIN_NAMES)}")
    return {u.id: fn(u, methods(u)) for u in units}
