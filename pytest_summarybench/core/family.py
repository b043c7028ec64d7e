"""What an evaluator family is to the harness: one declaration (``Family``) that its package
makes, naming everything the rest of the run derives from it.

A family declares its name (its pytest marker, its ``--sb-eval`` and ``--sb-only`` name, its
YAML keys), its title in the reports, its default weight in the overall score, its
evaluators, the default weights of its score components, its settings section and the
report layout of each evaluator. The built-in families are listed in
``evaluators/registry.py``, one line each; a plugin or a ``conftest.py`` adds its own through
the ``pytest_summarybench_families`` hook. Markers, options, the settings schema, weights,
titles and the reports' family lists are all built from these declarations.

Evaluators, settings sections and layouts may be given as ``"module:attribute"`` and are
imported only when used, so reading a declaration costs nothing (the plugin reads the names
at startup, before pydantic is imported). Plain standard library.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError

#: A family's name is a pytest marker and a YAML key: a lower-case identifier.
_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
#: Words a family cannot be called: the ladder's marker and the option value for "every
#: family".
RESERVED = frozenset({"validate", "all"})

#: Something a declaration names: ``"package.module:attribute"``, imported when first
#: used, or the object itself (a class defined in a ``conftest.py``).
Target = str | Callable[..., Any]


class FamilyError(InputError, ValueError):
    """A family declaration (or a set of them) is not usable; the message names the family
    and what to change."""


def resolve(target: Target) -> Any:
    """The object ``target`` names (imported when it is a ``"module:attribute"`` string)."""
    if not isinstance(target, str):
        return target
    module, sep, attribute = target.partition(":")
    if not sep or not module or not attribute:
        raise FamilyError(f"{target!r} is not of the form 'package.module:attribute'")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True, eq=False)
class Family:
    """The declaration of an evaluator family (see the module docstring)."""

    name: str
    """Its marker (``-m NAME``), its name for ``--sb-eval`` and ``--sb-only``, and its YAML
    keys: ``evaluation.NAME``, ``weights.NAME``, ``scoring.NAMEWeights``."""
    title: str
    """Its section heading in the reports (``Judges``)."""
    weight: float
    """Its default weight in the overall score (``weights.NAME``); the scores of the
    families that ran are averaged with these weights, renormalized."""
    evaluators: Mapping[str, Target] = field(default_factory=dict)
    """Its evaluators by name (``NAME/method``), in report order: each the class, or
    ``"module:Class"`` to import it only when the family runs."""
    weights: Mapping[str, float] = field(default_factory=dict)
    """The default weight of each of its score components within the family, by the
    weight key the evaluators' ``Component``s declare (``scoring.NAMEWeights.KEY``, in
    camelCase there). A component whose key is not declared here weighs 1."""
    settings: Target | None = None
    """Its section ``evaluation.NAME``: a subclass of ``settings.FamilySection`` (the class
    or ``"module:Class"``). None: the section holds ``enabled`` alone."""
    layouts: Mapping[str, Target] = field(default_factory=dict)
    """Per evaluator name, the function laying out its report section: details (its
    ``summarize`` result) -> a list of ``evaluators.blocks.Block``. It raises ``KeyError``,
    ``TypeError`` or ``ValueError`` on details it cannot lay out (an older run's), which are
    then shown generically, as are those of an evaluator without a layout."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise FamilyError(f"family name {self.name!r}: expected a lower-case identifier "
                              "(letters, digits, _), as it is a pytest marker and a YAML key")
        if self.name in RESERVED:
            raise FamilyError(f"family name {self.name!r} is reserved; choose another")
        if isinstance(self.weight, bool) or not isinstance(self.weight, (int, float)) \
                or not self.weight >= 0:
            raise FamilyError(f"family {self.name!r}: weight {self.weight!r} is not a "
                              "number >= 0")
        for key, value in self.weights.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise FamilyError(f"family {self.name!r}: component weight {key} = {value!r} "
                                  "is not a number >= 0")
        for name in (*self.evaluators, *self.layouts):
            if not self.owns(name):
                raise FamilyError(f"family {self.name!r}: evaluator {name!r} is not named "
                                  f"{self.name}/METHOD")

    def owns(self, evaluator: str) -> bool:
        """Whether an evaluator called ``evaluator`` is named as one of this family's."""
        return family_of(evaluator) == self.name

    def evaluator_class(self, name: str) -> Any:
        """The class of the evaluator ``name`` (its module imported)."""
        return resolve(self.evaluators[name])

    def section(self) -> Any:
        """The class of its settings section; None when it declares none (the settings
        then give it ``settings.FamilySection``)."""
        return None if self.settings is None else resolve(self.settings)

    def layout(self, evaluator: str) -> Callable[[Mapping[str, Any]], list[Any]] | None:
        """The report layout of ``evaluator``'s details, None when it has none."""
        target = self.layouts.get(evaluator)
        return None if target is None else resolve(target)  # type: ignore[no-any-return]

    @property
    def scoring_key(self) -> str:
        """Its key under ``scoring`` in summarybench.yaml and results.json."""
        return f"{self.name}Weights"


def family_of(evaluator: str) -> str:
    """The family of the evaluator called ``evaluator``: the part before ``/``.

    Evaluators are named ``family/method`` (or the family's name alone); the plugin
    refuses one whose name disagrees with its ``family``, so stored records and report
    sections, which carry only the name, need nothing else to be grouped by family."""
    return evaluator.partition("/")[0]


def check_families(families: Iterable[Family]) -> tuple[Family, ...]:
    """``families`` as a tuple, refusing two of one name."""
    out: list[Family] = []
    seen: set[str] = set()
    for family in families:
        if not isinstance(family, Family):
            raise FamilyError(f"{family!r} is not a pytest_summarybench Family declaration")
        if family.name in seen:
            raise FamilyError(f"the evaluator family {family.name!r} is declared twice; a "
                              "plugin's family needs a name of its own")
        seen.add(family.name)
        out.append(family)
    return tuple(out)


def parse_families(text: str, names: Iterable[str], *, allow_all: bool = True) -> list[str]:
    """The families named by a comma-separated list (``all``, when allowed: every family),
    each one of ``names``.

    Raises ``ValueError`` when the list is empty or names something that is no family; the
    caller says which option was wrong and what it accepts."""
    known = list(names)
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if allow_all and parts == ["all"]:
        return known
    unknown = [p for p in parts if p not in known]
    if unknown or not parts:
        raise ValueError(f"not a list of {', '.join(known)}: {text!r}")
    return parts


__all__ = ["RESERVED", "Family", "FamilyError", "Target", "check_families", "family_of",
           "parse_families", "resolve"]
