"""The known-answer ladder: summaries of known, decreasing quality built from the
codebase's own documented units, entered into the run as ``validate/*`` models.

Only units with a human docstring of at least ``MIN_DOC_WORDS`` words are ladder units.
For such a unit the levels are, best first:

1. ``validate/l1-docstring``: the docstring itself (as ``builtin/docstring`` cleans it);
2. ``validate/l2-generic``: the docstring with its domain terms replaced by generic words
   (see ``domain_terms`` for the rule);
3. ``validate/l3-boilerplate``: one boilerplate sentence per unit type, the same for every
   unit (no information about the unit at all);
4. ``validate/l4-other``: the docstring of another documented unit, the one (in another
   file) that shares the fewest words with this one: a description of something else.

``validate/l1-twin`` writes exactly level 1's text under another name: the A/A control.
A unit without a docstring gets level 3's boilerplate sentence from every ladder model (the
same text at every level): those summaries are a constant background in the per-model
retrieval indexes and are never scored (``wiring.keep_item``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from random import Random
from typing import TYPE_CHECKING

from ..core.vocabulary import models_of
from .builtin_base import BuiltinResult, clean_docstring, code_only, split_words

if TYPE_CHECKING:
    from ..schemas import CodeUnit

#: Ladder levels in their known order, best first: (model id, built-in name).
LEVELS: tuple[tuple[str, str], ...] = (
    ("validate/l1-docstring", "validate-l1-docstring"),
    ("validate/l2-generic", "validate-l2-generic"),
    ("validate/l3-boilerplate", "validate-l3-boilerplate"),
    ("validate/l4-other", "validate-l4-other"),
)
#: The A/A twin of level 1: the same text under another name.
TWIN: tuple[str, str] = ("validate/l1-twin", "validate-l1-twin")
LEVEL_IDS: tuple[str, ...] = tuple(mid for mid, _ in LEVELS)
LADDER_MODEL_IDS: tuple[str, ...] = (*LEVEL_IDS, TWIN[0])
LADDER_NAMES: tuple[str, ...] = (*(name for _, name in LEVELS), TWIN[1])
#: How a run knows the ladder's models: by their ids (never by a prefix of an id).
LADDER: frozenset[str] = frozenset(LADDER_MODEL_IDS)
#: A docstring shorter than this (in words) says too little to degrade in steps.
MIN_DOC_WORDS = 3

#: Generic stand-ins for domain terms, used in turn (the n-th distinct term gets the n-th).
GENERIC_WORDS: tuple[str, ...] = ("thing", "item", "value", "object", "data", "element",
                                  "entry", "part")

_BOILERPLATE: dict[str, str] = {
    "function": "This function performs an operation on its inputs and returns a result.",
    "method": "This method performs an operation on the object and returns a result.",
    "class": "This class groups related data and behaviour.",
    "file": "This file contains code used by other parts of the program.",
    "module": "This module contains code used by other parts of the program.",
}
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_']*")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_ladder_model(model_id: str) -> bool:
    """Whether ``model_id`` is a ladder model's, or a pair (``a~b``) with one."""
    return any(m in LADDER for m in models_of(model_id))


def level_name(model_id: str) -> str:
    """A ladder model's level as reports name it (``l1-docstring``); any other id as is."""
    return model_id.partition("/")[2] if model_id in LADDER else model_id


def ladder_doc(unit: CodeUnit) -> str | None:
    """The unit's human docstring as level 1 uses it, None when it has none (or too short)."""
    doc = clean_docstring(unit)
    if not doc or len(doc.split()) < MIN_DOC_WORDS:
        return None
    return doc


def identifier_vocabulary(unit: CodeUnit) -> frozenset[str]:
    """Every lower-case word of the unit's name and of the identifiers in its code,
    keywords and numbers included (comments and string literals excluded, as
    ``builtin/identifiers`` reads them; its ``identifier_words`` are the ones worth a
    summary: no keyword, no number, in order of first use)."""
    words: set[str] = set(split_words(unit.short_name))
    for ident in _IDENT.findall(code_only(unit.content, unit.language)):
        words.update(split_words(ident))
    return frozenset(w for w in words if len(w) > 1)


def is_code_like(word: str) -> bool:
    """``BOOKSHOP_URL``, ``ErrPermanent``, ``utf8``: a word written the way code is."""
    return ("_" in word or any(c.isdigit() for c in word)
            or any(c.isupper() for c in word[1:]))


def domain_terms(doc: str, unit: CodeUnit) -> list[str]:
    """The docstring's domain terms, in order of first appearance (lower case).

    The rule: a word of the docstring is a domain term when it, or one of its
    ``split_words`` parts, is a word of the unit's identifiers (``identifier_vocabulary``:
    ``apply_discount`` in the code makes ``apply`` and ``discount`` domain terms), or when
    it is written like code (``is_code_like``). Everything else is kept: the sentence's
    shape and its general English, without the vocabulary it shares with the code.
    """
    idents = identifier_vocabulary(unit)
    seen: dict[str, None] = {}
    for match in _WORD.finditer(doc):
        word = match.group(0)
        if is_code_like(word) or any(p in idents for p in [word.lower(), *split_words(word)]):
            seen.setdefault(word.lower(), None)
    return list(seen)


def generic_summary(doc: str, unit: CodeUnit) -> str:
    """Level 2: ``doc`` with every domain term replaced by a generic word; the same term
    gets the same word each time, so the sentence keeps its structure."""
    terms = domain_terms(doc, unit)
    replacement = {t: GENERIC_WORDS[i % len(GENERIC_WORDS)] for i, t in enumerate(terms)}

    def sub(match: re.Match[str]) -> str:
        word = match.group(0)
        generic = replacement.get(word.lower())
        if generic is None:
            return word
        return generic.capitalize() if word[:1].isupper() else generic

    return _WORD.sub(sub, doc)


def boilerplate_summary(unit: CodeUnit) -> str:
    """Level 3: the unit type's boilerplate sentence."""
    return _BOILERPLATE.get(unit.type, _BOILERPLATE["function"])


def _vocabulary(unit: CodeUnit, doc: str) -> frozenset[str]:
    return identifier_vocabulary(unit) | {w.lower() for w in _WORD.findall(doc) if len(w) > 2}


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def donors(units: Sequence[CodeUnit], docs: dict[str, str], rng: Random) -> dict[str, str]:
    """Level 4's donor of every documented unit: the documented unit in another file whose
    docstring and identifiers share the fewest words with this unit's (Jaccard), of the
    same language and type when there is one; ties are broken by ``rng``. A unit in the
    same file (or any unit, when every documented unit is in one file) is the fallback.

    The donor must carry no true information about the unit, or level 4 would not be a
    known answer below level 3: a sibling's docstring still tells the module's topic,
    which is what a vague search query asks for.
    """
    documented = sorted((u for u in units if u.id in docs), key=lambda u: u.id)
    vocab = {u.id: _vocabulary(u, docs[u.id]) for u in documented}
    tiers: list[Callable[[CodeUnit, CodeUnit], bool]] = [
        lambda a, b: a.path != b.path and (a.language, a.type) == (b.language, b.type),
        lambda a, b: a.path != b.path,
        lambda a, b: True,
    ]
    out: dict[str, str] = {}
    for unit in documented:
        others = [o for o in documented if o.id != unit.id and docs[o.id] != docs[unit.id]]
        for same in tiers:
            pool = [o for o in others if same(unit, o)]
            if pool:
                shared = {o.id: _jaccard(vocab[unit.id], vocab[o.id]) for o in pool}
                least = min(shared.values())
                closest = [o for o in pool if shared[o.id] == least]
                out[unit.id] = closest[rng.randrange(len(closest))].id
                break
    return out


def ladder_summaries(name: str, units: Sequence[CodeUnit],
                     methods: Callable[[CodeUnit], Sequence[str]],
                     rng: Random) -> dict[str, BuiltinResult]:
    """Summaries of ``units`` by the ladder model ``name`` (one of ``LADDER_NAMES``).

    ``methods`` is accepted for the built-in summarizers' signature; the ladder does not
    use it. ``rng`` seeds level 4's choice of donors."""
    docs = {u.id: d for u in units if (d := ladder_doc(u)) is not None}
    pick = donors(units, docs, rng) if name == LEVELS[3][1] else {}
    out: dict[str, BuiltinResult] = {}
    for unit in units:
        doc = docs.get(unit.id)
        if doc is None or (name == LEVELS[3][1] and unit.id not in pick):
            out[unit.id] = BuiltinResult(boilerplate_summary(unit), "ladder-undocumented")
        elif name in (LEVELS[0][1], TWIN[1]):
            out[unit.id] = BuiltinResult(doc, "ladder-docstring")
        elif name == LEVELS[1][1]:
            out[unit.id] = BuiltinResult(generic_summary(doc, unit), "ladder-generic")
        elif name == LEVELS[2][1]:
            out[unit.id] = BuiltinResult(boilerplate_summary(unit), "ladder-boilerplate")
        else:
            out[unit.id] = BuiltinResult(docs[pick[unit.id]], f"ladder-from:{pick[unit.id]}")
    return out
