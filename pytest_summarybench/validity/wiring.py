"""How the ladder enters a run and leaves its report: the ladder models added to the
settings, their matrix items narrowed to documented units, and their records kept out of
the ranking and analysed into the report's ``validity`` section instead."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..generate.ladder import LADDER_MODEL_IDS, LADDER_NAMES, is_ladder_model, ladder_doc

if TYPE_CHECKING:
    from ..aggregate import ReportInputs
    from ..context import RunContext
    from ..evaluators import MatrixItem
    from ..schemas import BenchmarkReport, CodeUnit
    from ..settings import Settings


def costs_no_calls(settings: Settings) -> bool:
    """Whether the ladder would cost no model call in a run with ``settings``, so that it
    runs by default (``--sb-no-validate`` leaves it out; ``--sb-validate`` adds it anyway).

    The ladder's summaries are built in; what it can cost is its evaluators' calls, and
    evaluators call only the judges (judge verdicts, and the helper's contrastive picks
    and retrieval queries) and the downstream task model. So it is free when no enabled
    family has one of those to call: no judge model for the judge, contrastive and
    retrieval families, no task model for downstream. An evaluator of a hook that asks
    for calls anyway does not score the default ladder (``keep_item``).
    """
    ev = settings.evaluation
    if ev.downstream.enabled and ev.downstream.completion_model:
        return False
    uses_judges = ev.judge.enabled or ev.contrastive.enabled or ev.retrieval.enabled
    return not (uses_judges and settings.models.judge)


def with_ladder(settings: Settings) -> Settings:
    """``settings`` with the ladder models added to the models under test (the configured
    ones, or the default offline ones). ``-m validate`` then runs the ladder alone, which
    is what ``summarybench validate`` does; a later full run reuses its summaries."""
    from ..settings import DEFAULT_MODELS, ModelEntry, ModelsSection

    if settings.models.test:
        entries = list(settings.models.test)
    else:
        entries = [ModelEntry(provider="builtin", model=spec.partition("/")[2])
                   for spec in DEFAULT_MODELS]
    entries = [e for e in entries if e.id not in LADDER_MODEL_IDS]
    entries += [ModelEntry(provider="builtin", model=name, id=model_id)
                for model_id, name in zip(LADDER_MODEL_IDS, LADDER_NAMES, strict=True)]
    models = ModelsSection(test=entries, judge=list(settings.models.judge))
    return settings.model_copy(update={"models": models})


def documented_ids(units: list[CodeUnit]) -> frozenset[str]:
    """Ids of the units the ladder is built from (a human docstring of a few words)."""
    return frozenset(u.id for u in units if ladder_doc(u) is not None)


def keep_item(item: MatrixItem, ctx: RunContext, documented: frozenset[str], *,
              calls: bool = True) -> bool:
    """Whether a matrix item belongs in the run: ladder models are scored only on
    documented units and are judged against each other, never against a real model.
    ``calls`` False: the ladder runs by default, and the item's evaluator asks for model
    calls (a hook's), which the default ladder never makes."""
    if not item.ladder:
        return True
    if not all(is_ladder_model(m) for m in item.models) or not calls:
        return False
    return item.unit_id not in ctx.unit_ids or item.unit_id in documented


def split_inputs(inputs: ReportInputs) -> tuple[ReportInputs, ReportInputs | None]:
    """The report's inputs without the ladder models, and the ladder's own (None when the
    run had no ladder records)."""
    ladder = [r for r in inputs.records if is_ladder_model(r.model_id)]
    if not ladder:
        return inputs, None
    main = dataclasses.replace(
        inputs, records=[r for r in inputs.records if not is_ladder_model(r.model_id)],
        model_ids=[m for m in inputs.model_ids if not is_ladder_model(m)],
        summaries={k: s for k, s in inputs.summaries.items() if not is_ladder_model(k[1])})
    return main, dataclasses.replace(inputs, records=ladder,
                                     model_ids=[m for m in inputs.model_ids
                                                if is_ladder_model(m)])


def attach_validity(report: BenchmarkReport, ladder: ReportInputs | None) -> BenchmarkReport:
    """Set ``report.validity`` from the ladder's inputs (unchanged report without them)."""
    if ladder is None:
        return report
    from .analysis import analyze

    scored = {r.unit_id for r in ladder.records}
    units = sum(1 for u in ladder.units if u.id in scored and ladder_doc(u) is not None)
    report.validity = analyze(ladder.records, ladder.config, units, ladder.score_spec)
    if not report.rankings:
        # The ladder alone (-m validate): the families that scored it did run.
        meta = report.metadata
        ran = [f.family for f in report.validity.families]
        meta.families_run = list(dict.fromkeys([*meta.families_run, *ran]))
        meta.families_skipped = {f: r for f, r in meta.families_skipped.items()
                                 if f not in ran}
    return report
