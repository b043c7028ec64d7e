"""The words the whole project shares: evaluator families, providers and model roles.

Each list is written here once, as a ``Literal`` type, and its tuple is derived from it,
so a schema field, an option's check, a help text and a marker cannot disagree. Plain
standard library: ``plugin/__init__.py`` imports it for the markers and must stay cheap.
"""

from __future__ import annotations

from typing import Literal, get_args

#: Evaluator families (spec sections 5-8), in report order.
Family = Literal["judge", "contrastive", "retrieval", "downstream"]
FAMILIES: tuple[str, ...] = get_args(Family)

#: The instrument-validity ladder's marker and evaluation type (``--sb-validate``): its
#: items carry it next to their family's marker, and ``-m validate`` selects them.
VALIDATE = "validate"
Marker = Literal[Family, "validate"]
#: Every pytest marker of a matrix item: the families, then the ladder's.
MARKERS: tuple[str, ...] = get_args(Marker)
#: Model id prefix of every ladder model (``validate/l1-docstring``...).
LADDER_PREFIX = f"{VALIDATE}/"

#: Who serves a model; ``builtin`` are the offline baseline summarizers.
Provider = Literal["anthropic", "openai", "google", "openrouter", "local", "ollama", "builtin"]
PROVIDERS: tuple[str, ...] = get_args(Provider)

#: Why a model is asked: the model under test (``test``: writing a summary, or whatever a
#: hosted benchmark evaluates it on), a judge scoring summaries (``judge``), a helper
#: writing queries or matching summaries to code (``helper``), or the task model of the
#: downstream family (``task``).
Role = Literal["test", "judge", "helper", "task"]
ROLES: tuple[str, ...] = get_args(Role)


def parse_families(text: str, *, allow_all: bool = True) -> list[str]:
    """The families named by a comma-separated list (``all``, when allowed: every family).

    Raises ``ValueError`` when the list is empty or names something that is no family; the
    caller says which option was wrong and what it accepts."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if allow_all and parts == ["all"]:
        return list(FAMILIES)
    unknown = [p for p in parts if p not in FAMILIES]
    if unknown or not parts:
        raise ValueError(f"not a list of {', '.join(FAMILIES)}: {text!r}")
    return parts


__all__ = ["FAMILIES", "LADDER_PREFIX", "MARKERS", "PROVIDERS", "ROLES", "VALIDATE", "Family",
           "Marker", "Provider", "Role", "parse_families"]
