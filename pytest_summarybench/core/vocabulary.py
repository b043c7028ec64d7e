"""The words the whole project shares: providers, model roles, the validity ladder's
marker and how a pair of models is named.

Each list is written here once, as a ``Literal`` type, and its tuple is derived from it,
so a schema field, an option's check and a help text cannot disagree. Evaluator families
are declared by their packages (``core/family.py``, ``evaluators/registry.py``), not
listed here. Plain standard library: ``plugin/__init__.py`` imports it and must stay cheap.
"""

from __future__ import annotations

from typing import Literal, get_args

#: The instrument-validity ladder's marker (``--sb-validate``): its items carry it next to
#: their family's marker, and ``-m validate`` selects them.
VALIDATE = "validate"

#: Between the two models of a pair in a model id (``a~b``): the model id of a pairwise
#: judge's items and records, as test ids, the store and results.json carry it.
PAIR_SEP = "~"

#: Who serves a model; ``builtin`` are the offline baseline summarizers.
Provider = Literal["anthropic", "openai", "google", "openrouter", "local", "ollama", "builtin"]
PROVIDERS: tuple[str, ...] = get_args(Provider)

#: Why a model is asked: the model under test (``test``: writing a summary, or whatever a
#: hosted benchmark evaluates it on), a judge scoring summaries (``judge``), a helper
#: writing queries or matching summaries to code (``helper``), or the task model of the
#: downstream family (``task``).
Role = Literal["test", "judge", "helper", "task"]
ROLES: tuple[str, ...] = get_args(Role)


def pair_id(a: str, b: str) -> str:
    """The ``a~b`` id of a pair, ``a < b``."""
    lo, hi = sorted((a, b))
    return f"{lo}{PAIR_SEP}{hi}"


def split_pair(pair: str) -> tuple[str, str]:
    """The two models of the pair id ``pair``; ``ValueError`` when it is no pair."""
    a, sep, b = pair.partition(PAIR_SEP)
    if not sep:
        raise ValueError(f"{pair!r} is not a model pair of the form a{PAIR_SEP}b")
    return a, b


def models_of(model_id: str) -> tuple[str, ...]:
    """The models a stored model id names: itself, or the two of a pair (``a~b``).

    Matrix items carry their models as a tuple (``MatrixItem.models``); records and
    report keys carry the id only, and are read through this."""
    return tuple(model_id.split(PAIR_SEP))


__all__ = ["PAIR_SEP", "PROVIDERS", "ROLES", "VALIDATE", "Provider", "Role", "models_of",
           "pair_id", "split_pair"]
