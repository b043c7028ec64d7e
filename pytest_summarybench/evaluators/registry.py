"""The built-in evaluator families, one line each: the declaration (``core.family.Family``)
each family package makes. A new built-in family is a package under ``evaluators/`` and
its line here; a plugin or a ``conftest.py`` adds its own through the
``pytest_summarybench_families`` hook, and single evaluators through
``pytest_summarybench_evaluators``.

Reading this list imports only the packages' declarations; an evaluator's module is
imported when its family runs.
"""

from __future__ import annotations

import importlib

from ..core.family import Family
from .base import Evaluator


def _declared(package: str) -> Family:
    """The family declared by the package ``evaluators/<package>`` (its ``FAMILY``)."""
    family = importlib.import_module(f"{__package__}.{package}").FAMILY
    if not isinstance(family, Family):
        raise TypeError(f"evaluators/{package}: FAMILY is not a Family declaration")
    return family


#: The built-in families, in report order.
BUILTIN_FAMILIES: tuple[Family, ...] = (
    _declared("judge"),
    _declared("contrastive"),
    _declared("retrieval"),
    _declared("downstream"),
)

#: Built-in evaluators by name (``family/method``) -> where their class is, in report order.
BUILTIN_EVALUATORS: dict[str, object] = {
    name: target for family in BUILTIN_FAMILIES for name, target in family.evaluators.items()}


def builtin_family(evaluator: str) -> Family:
    """The built-in family declaring the evaluator ``evaluator``."""
    return next(f for f in BUILTIN_FAMILIES if evaluator in f.evaluators)


def builtin_class(name: str) -> type[Evaluator]:
    """The class of the built-in evaluator called ``name`` (its module imported)."""
    return builtin_family(name).evaluator_class(name)  # type: ignore[no-any-return]


def load_builtin(name: str) -> Evaluator:
    """Instantiate the built-in evaluator called ``name``."""
    return builtin_class(name)()
