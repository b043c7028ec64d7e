"""How metrics become scores: the components the evaluators declare, and their weights.

Each evaluator declares its score components (``evaluators.base.Component``): which of its
metrics counts, under which weight key of its family, with what range and label. A run's
``Scoring`` collects the components of the evaluators that ran, with the weights of the
configuration (``weights.<family>`` and ``scoring.<family>Weights``, whose defaults each
family declares: ``core.family.Family``, docs/methods.md#weights for the built-in ones; a
component whose key no family declares weighs 1).
Aggregation, the reports and the gate read this and nothing else, and it is saved with the
run so that a report rebuilt from the store scores exactly as the session did.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic.alias_generators import to_camel

from ..core.errors import InputError

if TYPE_CHECKING:
    from ..core.family import Family
    from ..evaluators.base import Evaluator
    from ..schemas import BenchmarkConfig


class ScoringError(InputError, ValueError):
    """The declared components or the weights do not make a score (named in the text)."""


@dataclass(frozen=True)
class ScoreComponent:
    """One input of a family score: the mean of ``metric`` over ``evaluator``'s records,
    normalized to 0-1."""

    family: str
    weight_key: str
    """The weight's key within the family (``pointwise``, ``precision1``...)."""
    evaluator: str
    metric: str
    label: str
    """How reports name it (``judge rubric score``)."""
    low: float = 0.0
    high: float = 1.0
    """The metric's range: a mean ``x`` counts as ``(x - low) / (high - low)``."""

    def normalize(self, value: float) -> float:
        return (value - self.low) / (self.high - self.low)


@dataclass(frozen=True)
class Scoring:
    """A run's components and weights."""

    components: tuple[ScoreComponent, ...]
    component_weights: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """family -> weight key -> weight."""
    family_weights: Mapping[str, float] = field(default_factory=dict)

    @property
    def families(self) -> tuple[str, ...]:
        """The families of the components, in their order (``scoring_for`` puts the
        declared families first, in their declared order, then the others by name)."""
        return tuple(dict.fromkeys(c.family for c in self.components))

    def of(self, evaluator: str) -> list[ScoreComponent]:
        return [c for c in self.components if c.evaluator == evaluator]

    def label(self, family: str, weight_key: str) -> str:
        for c in self.components:
            if c.family == family and c.weight_key == weight_key:
                return c.label
        return f"{family} {weight_key}"

    def to_json(self) -> dict[str, Any]:
        return {"components": [asdict(c) for c in self.components],
                "componentWeights": {f: dict(w) for f, w in self.component_weights.items()},
                "familyWeights": dict(self.family_weights)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Scoring:
        return cls(components=tuple(ScoreComponent(**c) for c in data["components"]),
                   component_weights={f: dict(w) for f, w in
                                      data.get("componentWeights", {}).items()},
                   family_weights=dict(data.get("familyWeights", {})))

    def fingerprint(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)


def scoring_for(evaluators: Iterable[Evaluator], *, family_weights: Mapping[str, float],
                component_weights: Mapping[str, Mapping[str, float]],
                order: Iterable[str] = ()) -> Scoring:
    """The scoring of a run of ``evaluators`` (see the module docstring).

    ``family_weights`` and ``component_weights`` are the configuration's (``weights`` and
    ``scoring`` of summarybench.yaml; a component's key in camelCase, as written there, or
    as the component declares it); ``order`` is the declared families' order. Raises
    ``ScoringError`` for a family without a weight or two evaluators declaring the same
    weight key.
    """
    components: list[ScoreComponent] = []
    cweights: dict[str, dict[str, float]] = {}
    seen: dict[tuple[str, str], str] = {}
    for ev in evaluators:
        for comp in getattr(ev, "components", ()):
            family = comp.family or ev.family
            key = (family, comp.weight)
            if key in seen and seen[key] != ev.name:
                raise ScoringError(f"{ev.name} and {seen[key]} both declare the component "
                                   f"{family}/{comp.weight}; give one another weight key")
            seen[key] = ev.name
            components.append(ScoreComponent(family=family, weight_key=comp.weight,
                                             evaluator=ev.name, metric=comp.metric,
                                             label=comp.label, low=comp.low, high=comp.high))
            configured = component_weights.get(family, {})
            cweights.setdefault(family, {})[comp.weight] = float(
                configured.get(to_camel(comp.weight), configured.get(comp.weight, 1.0)))
    fweights: dict[str, float] = {}
    for family in sorted({c.family for c in components}):
        if family not in family_weights:
            known = ", ".join(f"{f} {w:g}" for f, w in family_weights.items())
            raise ScoringError(
                f"the evaluator family {family!r} has no weight in the overall score: set "
                f"weights.{family} in summarybench.yaml, or declare the family with its "
                f"weight (pytest_summarybench_families); the others weigh {known}")
        fweights[family] = float(family_weights[family])
    # Grouped by family, the declared ones in their order, and within a family in the
    # order the evaluators declared them (sums run in this order: a report rebuilt from
    # the store adds the same floats in the same order).
    rank = {f: i for i, f in enumerate(order)}
    families = sorted({c.family for c in components}, key=lambda f: (rank.get(f, len(rank)), f))
    ordered = sorted(components, key=lambda c: families.index(c.family))
    return Scoring(components=tuple(ordered), component_weights=cweights,
                   family_weights=fweights)


def config_weights(config: BenchmarkConfig, families: Iterable[Family] = ()
                   ) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """(family weights, component weights) of a run's configuration, over the defaults of
    ``families`` (a stored run's configuration may predate a family: its weights are then
    the family's defaults, which weigh nothing without its records)."""
    weights = {f.name: float(f.weight) for f in families}
    weights.update(config.weights.model_dump(by_alias=True))
    components = {f.name: {to_camel(k): float(v) for k, v in f.weights.items()}
                  for f in families}
    for family in dict.fromkeys([*components, *weights]):
        components.setdefault(family, {}).update(config.scoring.of_family(family))
    return weights, components


def scoring_from_config(evaluators: Iterable[Evaluator], config: BenchmarkConfig,
                        families: Iterable[Family] = ()) -> Scoring:
    """``scoring_for`` with the weights of ``config`` (over the defaults of ``families``),
    in the order of ``families``."""
    declared = tuple(families)
    family, component = config_weights(config, declared)
    return scoring_for(evaluators, family_weights=family, component_weights=component,
                       order=[f.name for f in declared])


def builtin_scoring(config: BenchmarkConfig) -> Scoring:
    """The scoring of the built-in evaluators under ``config`` (for runs saved before the
    scoring was kept with them, and for inputs that bring none)."""
    from ..evaluators.registry import BUILTIN_FAMILIES

    classes = [f.evaluator_class(name) for f in BUILTIN_FAMILIES for name in f.evaluators]
    return scoring_from_config(classes, config, BUILTIN_FAMILIES)
