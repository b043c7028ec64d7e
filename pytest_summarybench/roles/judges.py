"""Which judges judge which model, and which pair (docs/methods.md#judge-selection).

Rule 1: a judge never judges a model of its own family; for a pair, a judge must be of
neither model's family. Rule 2: at least ``minJudges`` judges where available; with fewer,
the plan says so and the configuration (``allowFewer``) decides whether the model or pair
is judged by those there are or not at all. Rule 3: at most ``maxJudges`` judges, chosen
round-robin over families so that diverse families come first. The plan is a pure
function of the configuration, so every xdist worker computes the same one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from ..core.vocabulary import pair_id
from ..llm.families import families_of, family_of
from ..schemas import ModelConfig
from .advice import example_judge


def exclusion_reason(judge: ModelConfig, targets: Sequence[ModelConfig],
                     extra: Mapping[str, Sequence[str]] | None = None) -> str | None:
    """Why ``judge`` may not judge ``targets`` (a model or the two models of a pair)."""
    if judge.provider == "builtin":
        return "built-in summarizers cannot judge"
    jf = families_of(judge, extra)
    for target in targets:
        if judge.id == target.id:
            return f"it is {target.id} itself"
        shared = jf & families_of(target, extra)
        if shared:
            return f"same family as {target.id} ({', '.join(sorted(shared))})"
    return None


def select_diverse(eligible: Sequence[ModelConfig], k: int,
                   extra: Mapping[str, Sequence[str]] | None = None) -> list[ModelConfig]:
    """Up to ``k`` judges, one per family in turn (families by name, judges by id)."""
    by_family: dict[str, list[ModelConfig]] = {}
    for judge in sorted(eligible, key=lambda j: j.id):
        by_family.setdefault(family_of(judge, extra), []).append(judge)
    chosen: list[ModelConfig] = []
    depth = 0
    while len(chosen) < k and any(len(js) > depth for js in by_family.values()):
        for family in sorted(by_family):
            if len(by_family[family]) > depth and len(chosen) < k:
                chosen.append(by_family[family][depth])
        depth += 1
    return sorted(chosen, key=lambda j: j.id)


@dataclass(frozen=True)
class Assignment:
    """The judges of one model (or one pair) and why the others are not among them."""

    target: str
    """A model id, or a pair id ``a~b``."""
    judges: tuple[str, ...]
    """Judge ids that judge it, sorted (empty when it is not judged)."""
    eligible: int
    """How many configured judges were eligible."""
    excluded: dict[str, str] = field(default_factory=dict)
    """judge id -> why it may not judge this target."""
    shortfall: str | None = None
    """Set when fewer than ``minJudges`` were eligible: what happened instead."""


@dataclass(frozen=True)
class JudgePlan:
    """Judges per model and per pair for one run."""

    min_judges: int
    max_judges: int
    allow_fewer: bool
    models: dict[str, Assignment]
    pairs: dict[str, Assignment]
    families: dict[str, list[str]]
    """model or judge id -> its families."""

    def judges_for_model(self, model_id: str) -> tuple[str, ...]:
        found = self.models.get(model_id)
        return found.judges if found else ()

    def judges_for_pair(self, pair: str) -> tuple[str, ...]:
        found = self.pairs.get(pair)
        return found.judges if found else ()

    def shortfalls(self, *, pairs: bool) -> list[str]:
        """One sentence per model (or pair) with fewer eligible judges than asked."""
        table = self.pairs if pairs else self.models
        return [f"{a.target}: {a.shortfall}" for a in table.values() if a.shortfall]

    def to_json(self, *, pairs: bool) -> dict[str, Any]:
        """The plan as the report shows it."""
        table = self.pairs if pairs else self.models
        return {
            "minJudges": self.min_judges, "maxJudges": self.max_judges,
            "allowFewer": self.allow_fewer, "families": self.families,
            "assignments": {t: {"judges": list(a.judges), "eligible": a.eligible,
                                "excluded": a.excluded, "shortfall": a.shortfall}
                            for t, a in table.items()},
            "shortfalls": self.shortfalls(pairs=pairs),
        }


def _assign(target: str, targets: Sequence[ModelConfig], judges: Sequence[ModelConfig], *,
            min_judges: int, max_judges: int, allow_fewer: bool,
            extra: Mapping[str, Sequence[str]] | None) -> Assignment:
    excluded: dict[str, str] = {}
    eligible: list[ModelConfig] = []
    for judge in judges:
        reason = exclusion_reason(judge, targets, extra)
        if reason is None:
            eligible.append(judge)
        else:
            excluded[judge.id] = reason
    chosen = select_diverse(eligible, max_judges, extra)
    shortfall = None
    if len(eligible) < min_judges:
        # Counted against the judges configured, with minJudges named as the bar: "of 2
        # asked" beside one configured judge read as a miscount.
        plural = "s" if len(judges) != 1 else ""
        if not eligible:
            shortfall = (f"not judged: no eligible judge ({len(judges)} configured); add "
                         f"one of another family ({example_judge(targets, extra)})")
        else:
            have = (f"{len(eligible)} of the {len(judges)} judges may judge it"
                    if len(eligible) < len(judges)
                    else f"{len(judges)} judge{plural} configured")
            have += f", fewer than minJudges ({min_judges})"
            if allow_fewer:
                shortfall = (f"{have}: judged by {', '.join(j.id for j in chosen)} only "
                             f"(evaluation.judge.allowFewer is true)")
            else:
                shortfall = f"{have}: not judged (evaluation.judge.allowFewer is false)"
                chosen = []
    return Assignment(target=target, judges=tuple(j.id for j in chosen),
                      eligible=len(eligible), excluded=excluded, shortfall=shortfall)


def plan_judges(models: Sequence[ModelConfig], judges: Sequence[ModelConfig], *,
                min_judges: int = 2, max_judges: int = 3, allow_fewer: bool = True,
                extra: Mapping[str, Sequence[str]] | None = None) -> JudgePlan:
    """The judges of every model and every pair of ``models`` (see the module doc)."""
    models = sorted(models, key=lambda m: m.id)
    judges = sorted(judges, key=lambda j: j.id)
    opts: dict[str, Any] = {"min_judges": min_judges, "max_judges": max_judges,
                            "allow_fewer": allow_fewer, "extra": extra}
    per_model = {m.id: _assign(m.id, [m], judges, **opts) for m in models}
    per_pair = {pair_id(a.id, b.id): _assign(pair_id(a.id, b.id), [a, b], judges, **opts)
                for a, b in combinations(models, 2)}
    families = {m.id: sorted(families_of(m, extra)) for m in [*models, *judges]}
    return JudgePlan(min_judges=min_judges, max_judges=max_judges, allow_fewer=allow_fewer,
                     models=per_model, pairs=per_pair, families=families)
