"""What to tell a user about the family rule (docs/methods.md#judge-selection: no judge judges a
model of its own family): which judges share a family with which models under test, where a model's
family comes from, a judge to suggest that is of none of the tested models' families, and the
short lines the command line and skipped evaluators print.

Advice must be valid where it is given: a suggested judge is never of a family the rule
would exclude, so the suggestion is chosen against the models it is meant to judge.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..llm.families import FAMILY_PATTERNS, PROVIDER_FAMILIES, families_of
from ..schemas import ModelConfig

Extra = Mapping[str, Sequence[str]] | None

#: Judges to suggest, one per family, in order of preference (each in litellm's model
#: list, so that the suggestion itself draws no "not in the model list" warning).
SUGGESTED_JUDGES: tuple[str, ...] = ("openai/gpt-4o", "anthropic/claude-sonnet-4-5",
                                     "google/gemini-2.5-pro")

#: Where the docs explain families; named in the longer messages.
FAMILIES_DOC = "docs/evaluators.md#judge-families"

#: Judge ids named in one line before the rest are counted.
_MAX_NAMED = 3


def family_text(model: ModelConfig, extra: Extra = None) -> str:
    """The model's families as one word (``openai``, or ``deepseek/meta`` for a name that
    matches two)."""
    return "/".join(sorted(families_of(model, extra)))


def family_source(model: ModelConfig, extra: Extra = None) -> str:
    """How the model's family was found: set in the configuration, read from its name, or
    (no pattern matched) taken from its provider."""
    if model.family:
        return "set by its family: key"
    if model.provider == "builtin":
        return "the built-in summarizers' own"
    name = model.model_name
    for table in (extra or {}, FAMILY_PATTERNS):
        for patterns in table.values():
            if any(re.search(p, name, re.IGNORECASE) for p in patterns):
                return "read from its name"
    if model.provider in PROVIDER_FAMILIES:
        return "taken from its provider, as its name matches no known family"
    return "its own, as its name matches no known family"


def suggest_judge(targets: Sequence[ModelConfig], extra: Extra = None,
                  avoid: Sequence[ModelConfig] = ()) -> str | None:
    """A judge of none of ``targets``' families (preferably none of ``avoid``'s either, so
    that it adds a family); None when every suggestion is excluded."""
    excluded: set[str] = set()
    for target in targets:
        excluded |= families_of(target, extra)
    taken: set[str] = set()
    for judge in avoid:
        taken |= families_of(judge, extra)
    allowed = [s for s in SUGGESTED_JUDGES
               if not families_of(ModelConfig.parse(s), extra) & excluded]
    fresh = [s for s in allowed if not families_of(ModelConfig.parse(s), extra) & taken]
    choices = fresh or allowed
    return choices[0] if choices else None


def example_judge(targets: Sequence[ModelConfig], extra: Extra = None,
                  avoid: Sequence[ModelConfig] = ()) -> str:
    """``--sb-judge X`` for a valid suggestion, else which families to avoid."""
    found = suggest_judge(targets, extra, avoid)
    if found:
        return f"--sb-judge {found}"
    families: set[str] = set()
    for target in targets:
        families |= families_of(target, extra)
    return f"one of a family other than {', '.join(sorted(families))}"


def how_to_add(targets: Sequence[ModelConfig], extra: Extra = None) -> str:
    """How to add a judge that may judge ``targets`` (for 'no judge is configured')."""
    return (f"add one under models.judge in summarybench.yaml or pass --sb-judge "
            f"PROVIDER/MODEL, of another family than the models under test (e.g. "
            f"{example_judge(targets, extra)})")


@dataclass(frozen=True)
class Conflict:
    """A judge that shares a family with some models under test (it will not judge them)."""

    judge: ModelConfig
    families: tuple[str, ...]
    """The shared families, sorted."""
    models: tuple[str, ...]
    """Ids of the models under test it shares them with, sorted."""


def family_conflicts(models: Sequence[ModelConfig], judges: Sequence[ModelConfig],
                     extra: Extra = None) -> list[Conflict]:
    """Each judge (by id) that shares a family with a model under test."""
    found = []
    for judge in sorted(judges, key=lambda j: j.id):
        if judge.provider == "builtin":
            continue
        own = families_of(judge, extra)
        shared: set[str] = set()
        hit: list[str] = []
        for model in models:
            common = own & families_of(model, extra)
            if common:
                shared |= common
                hit.append(model.id)
        if hit:
            found.append(Conflict(judge, tuple(sorted(shared)), tuple(sorted(hit))))
    return found


def conflict_warning(conflict: Conflict, models: Sequence[ModelConfig],
                     extra: Extra = None, judges: Sequence[ModelConfig] = ()) -> str:
    """The warning for one ``Conflict``: the family, how it was found, what follows, and
    both ways out (set ``family:`` when it is wrong, or add a judge of another family).
    ``judges``: every configured judge; one that may judge all of the conflict's models is
    named instead of a judge to add, and none is suggested twice."""
    judge = conflict.judge
    families = "/".join(conflict.families)
    named = _named(list(conflict.models))
    every = len(conflict.models) == len(models)
    them = "it" if len(conflict.models) == 1 else "them"
    effect = ("it will judge none of them" if every
              else f"it will not judge {'it' if len(conflict.models) == 1 else 'those'}")
    hit = [m for m in models if m.id in conflict.models]
    covering = [j.id for j in judges if j.id != judge.id and j.provider != "builtin"
                and not any(families_of(j, extra) & families_of(m, extra) for m in hit)]
    suggestion = suggest_judge(models, extra, [judge, *judges])
    if covering:
        other = f"judge{'s' if len(covering) > 1 else ''} {_named(covering)} will judge {them}"
    elif suggestion and suggestion not in {j.id for j in judges}:
        other = f"add a judge of another family (e.g. summarybench add-judge {suggestion})"
    else:
        other = "add a judge of another family"
    # Two lines, what happens and what to do, rather than one of 400 characters.
    return (f"judge {judge.id} is of the {families} family ({family_source(judge, extra)}), "
            f"as the model{'s' if len(conflict.models) > 1 else ''} under test {named}: "
            f"{effect} (a judge never judges its own family).\n"
            f"  {other[0].upper()}{other[1:]}; or, if its family is wrong, set it with "
            f"`summarybench set-model {judge.id} --family NAME` (family: NAME in its "
            f"models.judge entry). See {FAMILIES_DOC}.")


def no_judge_reason(models: Sequence[ModelConfig], judges: Sequence[ModelConfig],
                    extra: Extra = None, *, pairs: bool) -> str:
    """One short line for an evaluator none of whose items any judge may judge: which
    judges of which family, and what to do. ``pairs``: the items are model pairs, for
    which a judge must be of neither model's family."""
    by_family: dict[str, list[str]] = {}
    for judge in sorted(judges, key=lambda j: j.id):
        by_family.setdefault(family_text(judge, extra), []).append(judge.id)
    desc = "; ".join(f"{_named(ids)} ({family})" for family, ids in sorted(by_family.items()))
    # A pair needs a judge of neither model's family: when some judge could judge a model
    # alone, the pairs are what no judge may judge.
    alone = pairs and any(not families_of(j, extra) & families_of(m, extra)
                          for j in judges for m in models)
    their = "its" if len(judges) == 1 else "their"
    what = f"a pair with a model of {their} own family" if alone \
        else f"{their} own family's models"
    return (f"{desc} may not judge {what}; add one of another family "
            f"({example_judge(models, extra)}) or correct family: in models.judge")


def _named(ids: list[str]) -> str:
    """Up to ``_MAX_NAMED`` ids, then how many more."""
    shown = ", ".join(ids[:_MAX_NAMED])
    more = len(ids) - _MAX_NAMED
    return f"{shown} and {more} more" if more > 0 else shown
