"""How metrics become scores: the components the evaluators declare, and their weights.

Each evaluator declares its score components (``evaluators.base.Component``): which of its
metrics counts, under which weight key of its family, with what range and label. A run's
``Scoring`` collects the components of the evaluators that ran, with the weights of the
configuration (docs/methods.md#weights for the built-in families; any other family gets its
weight from ``weights.<family>`` and its components' from their declarations).
Aggregation, the reports and the gate read this and nothing else, and it is saved with the
run so that a report rebuilt from the store scores exactly as the session did.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.vocabulary import FAMILIES

if TYPE_CHECKING:
    from ..evaluators.base import Evaluator
    from ..schemas import BenchmarkConfig


class ScoringError(ValueError):
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
        """The spec's families first, in the spec's order, then the others by name."""
        declared = {c.family for c in self.components}
        return (*(f for f in FAMILIES if f in declared),
                *sorted(declared - set(FAMILIES)))

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
                component_weights: Mapping[str, Mapping[str, float]]) -> Scoring:
    """The scoring of a run of ``evaluators`` (see the module docstring).

    ``family_weights`` and ``component_weights`` are the configuration's (``weights`` and
    ``scoring`` of summarybench.yaml). Raises ``ScoringError`` for a family without a
    weight or two evaluators declaring the same weight key.
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
                configured.get(comp.weight, comp.default_weight))
    fweights: dict[str, float] = {}
    for family in sorted({c.family for c in components}):
        if family not in family_weights:
            spec = ", ".join(f"{f} {family_weights[f]:g}" for f in FAMILIES
                             if f in family_weights)
            raise ScoringError(
                f"the evaluator family {family!r} has no weight in the overall score: set "
                f"weights.{family} in summarybench.yaml (the spec's families weigh {spec})")
        fweights[family] = float(family_weights[family])
    # Grouped by family, in the order the evaluators declared them (sums run in this
    # order: a report rebuilt from the store adds the same floats in the same order).
    families = Scoring(tuple(components)).families
    ordered = sorted(components, key=lambda c: families.index(c.family))
    return Scoring(components=tuple(ordered), component_weights=cweights,
                   family_weights=fweights)


def config_weights(config: BenchmarkConfig) -> tuple[dict[str, float],
                                                     dict[str, dict[str, float]]]:
    """(family weights, component weights) of a run's configuration (the defaults of
    docs/methods.md#weights; other families as ``weights.<family>``)."""
    s = config.scoring
    return config.weights.model_dump(), {
        "judge": s.judge_weights.model_dump(),
        "contrastive": s.contrastive_weights.model_dump(),
        "retrieval": s.retrieval_weights.model_dump(),
        "downstream": s.downstream_weights.model_dump(),
    }


def scoring_from_config(evaluators: Iterable[Evaluator], config: BenchmarkConfig) -> Scoring:
    """``scoring_for`` with the weights of ``config``."""
    family, component = config_weights(config)
    return scoring_for(evaluators, family_weights=family, component_weights=component)


def builtin_scoring(config: BenchmarkConfig) -> Scoring:
    """The scoring of the built-in evaluators under ``config`` (for runs saved before the
    scoring was kept with them, and for inputs that bring none)."""
    from ..evaluators import BUILTIN_EVALUATORS, builtin_class

    return scoring_from_config([builtin_class(n) for n in BUILTIN_EVALUATORS],  # type: ignore[misc]
                               config)
