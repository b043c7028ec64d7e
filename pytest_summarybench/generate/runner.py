"""The generation phase: every model under test summarizes every sampled unit once.

Runs on the controller before the tests that need summaries. Work already linked to the
run in the store is skipped, every summary is saved and linked the moment it exists, and
failures are linked as errors (never cached) so the next run retries exactly those. With
the response cache of the model layer, a run killed halfway and started again repeats no
completed call, and a second run over the same configuration makes none.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..llm.retry import RetryPolicy
from ..schemas import CodeUnit, GeneratedSummary, ModelConfig
from .builtin import BuiltinError, summarize_builtin
from .builtin_base import BUILTIN_VERSION
from .prompts import PROMPT_VERSION, method_names
from .report import GenerationReport, ModelStats
from .summaries import builtin_summary, summary_id

if TYPE_CHECKING:
    from ..context import RunContext

def _current(summary: GeneratedSummary, model: ModelConfig) -> bool:
    """Whether a linked summary was made with today's prompt and the model's parameters
    (a run id reused after a configuration change must not keep stale summaries)."""
    if model.provider == "builtin":
        return summary.generation_metadata.prompt_version == BUILTIN_VERSION
    return summary.id == summary_id(summary.code_unit_id, model, PROMPT_VERSION)


def pending_units(ctx: RunContext, model: ModelConfig,
                  linked: dict[tuple[str, str], GeneratedSummary]) -> list[CodeUnit]:
    """The sampled units that ``model`` still has to summarize for this run."""
    todo = []
    for unit in ctx.units:
        found = linked.get((unit.id, model.id))
        if found is None or not _current(found, model):
            todo.append(unit)
    return todo


def missing(ctx: RunContext, model: ModelConfig, unit_ids: list[str],
            report: GenerationReport, *, adopt: bool = True) -> tuple[list[CodeUnit],
                                                                      ModelStats]:
    """Of ``unit_ids``, the units ``model`` still has to summarize for this run (the others
    are counted as reused in ``report``), and the model's stats.

    A model's summary of a unit that another run already stored is reused (``adopt``:
    linked to this run; the dry run only counts it): its id is a hash of the unit's id
    (path, type, name and body), the model, its parameters and the prompt's version, so
    it is what this run would ask for. A run after a small code change (a new run id)
    thus asks only for the changed and added units. Built-in summarizers are not adopted:
    the shuffled control pairs a unit with another unit of the same sample."""
    stats = report.models.setdefault(model.id, ModelStats(model.id))
    summaries = ctx.store.run_summaries(ctx.run_id)
    todo = []
    for unit_id in unit_ids:
        found = summaries.get((unit_id, model.id))
        if isinstance(found, GeneratedSummary) and _current(found, model):
            stats.reused += 1
        else:
            todo.append(ctx.unit(unit_id))
    if todo and model.provider != "builtin":
        wanted = {summary_id(u.id, model, PROMPT_VERSION): u.id for u in todo}
        stored = ctx.store.summaries_by_id(wanted)
        if stored:
            if adopt:
                ctx.store.link_summaries(ctx.run_id, [(wanted[sid], model.id, sid)
                                                      for sid in sorted(stored)])
            stats.reused += len(stored)
            done = {wanted[sid] for sid in stored}
            todo = [u for u in todo if u.id not in done]
    return todo, stats


def builtin_missing(ctx: RunContext, model: ModelConfig, todo: list[CodeUnit],
                    stats: ModelStats) -> None:
    """Write a built-in summarizer's summaries of ``todo``: those of the sample against
    the whole sample (the shuffled control pairs over it), the others (units a downstream
    task shows) among themselves."""
    sampled = {u.id for u in ctx.units}
    inside = [u for u in todo if u.id in sampled]
    outside = [u for u in todo if u.id not in sampled]
    if inside:
        _run_builtin(ctx, model, inside, stats)
    if outside:
        _run_builtin(ctx.with_units(outside), model, outside, stats)


def linked_pairs(ctx: RunContext) -> dict[tuple[str, str], GeneratedSummary]:
    """(unit id, model id) -> the summary the run already has (errors excluded)."""
    return {key: found for key, found in ctx.store.run_summaries(ctx.run_id).items()
            if isinstance(found, GeneratedSummary)}


def run_generation(ctx: RunContext, *, parallel: int | None = None,
                   max_cost_usd: float | None = None, progress: bool = True,
                   retry_policy: RetryPolicy | None = None) -> GenerationReport:
    """Produce the missing summaries of the run (see the module docstring).

    :param parallel: concurrent calls per model (default ``evaluation.parallel``).
    :param max_cost_usd: stop starting new calls once this much was spent
        (default ``evaluation.maxCostUsd``).
    :param progress: show a progress display on stderr for model calls.
    :param retry_policy: how model calls are retried (default: ``llm.RetryPolicy()``).

    A context made afterwards (``ctx.refreshed()``) sees the new summaries.
    """
    started = time.perf_counter()
    parallel = parallel or ctx.settings.evaluation.parallel
    if max_cost_usd is None:
        max_cost_usd = ctx.settings.evaluation.max_cost_usd
    linked = linked_pairs(ctx)
    report = GenerationReport(models={m.id: ModelStats(m.id) for m in ctx.models},
                              max_cost_usd=max_cost_usd)
    remote: dict[str, list[CodeUnit]] = {}
    for model in ctx.models:
        stats = report.models[model.id]
        todo = pending_units(ctx, model, linked)
        stats.reused = len(ctx.units) - len(todo)
        if not todo:
            continue
        if model.provider == "builtin":
            _run_builtin(ctx, model, todo, stats)
        else:
            remote[model.id] = todo
    if remote:
        from .calls import run_model_calls  # the model layer imports litellm lazily

        run_model_calls(ctx, remote, report, parallel=parallel, retry_policy=retry_policy,
                        progress=ctx.progress if progress else None)
    report.elapsed_s = time.perf_counter() - started
    return report


def _run_builtin(ctx: RunContext, model: ModelConfig, todo: list[CodeUnit],
                 stats: ModelStats) -> None:
    # The negative control pairs over the whole sample, so every run of the same sample
    # gives each unit the same donor whichever units are still missing.
    start = time.perf_counter()
    try:
        results = summarize_builtin(model.model_name, ctx.units,
                                    lambda u: method_names(u, ctx), ctx.rng("builtin", model.id))
    except BuiltinError as exc:
        for unit in todo:
            ctx.store.link_summary(ctx.run_id, unit.id, model.id, None, error=str(exc))
            stats.add_error(f"{model.id}: {exc}")
        return
    latency_ms = (time.perf_counter() - start) * 1000 / max(1, len(ctx.units))
    summaries = [builtin_summary(u, model, results[u.id], latency_ms) for u in todo]
    ctx.store.save_summaries(summaries)
    for summary in summaries:
        ctx.store.link_summary(ctx.run_id, summary.code_unit_id, model.id, summary.id)
    stats.generated += len(summaries)
    stats.fallbacks += sum(results[u.id].source == "fallback-signature" for u in todo)
