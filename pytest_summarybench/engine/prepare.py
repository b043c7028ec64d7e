"""Preparing a run for its tests, without pytest: every model call the selected items
need (``plan.py``), and each evaluator's artefacts (embeddings, indexes, query sets) built
as soon as what it reads exists.

``prepare_run`` is what the controller does between collection and the first test; a
dry run prices the same plan instead (``estimate.py``), and ``--sb-generate-only`` stops
once the summaries exist. What it has to say goes to ``say``, one line at a time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..context import RunContext
    from ..evaluators import Evaluator, MatrixItem
    from .warmup import WarmUp

#: ``say(line, red=...)``: where the preparation's lines go (the terminal, in a session).
Say = Callable[..., None]


@dataclass
class Prepared:
    """How the preparation ended."""

    ctx: RunContext | None = None
    """The context the tests evaluate with (read afresh after the calls), when they run."""
    lines: list[str] = field(default_factory=list)
    """The calls' summary: generation, each other phase, evaluators that could not
    prepare."""
    finished_early: tuple[str, int] | None = None
    """The closing line and exit code of a session that runs no test (the dry run,
    ``--sb-generate-only``)."""
    dry_run: bool = False


def calls_lines(scheduler: Any) -> list[str]:
    """One line per phase of model calls other than generation (which has its own)."""
    lines = []
    for phase, t in sorted(scheduler.totals().items()):
        if phase == "generation":
            continue
        cost = "unknown" if t.cost_unknown else f"${t.cost:.4f}"
        lines.append(f"summarybench {phase}: {t.calls} calls, {t.cached} from cache, "
                     f"{t.failed} failed" + (f", {t.skipped} over the cost cap"
                                             if t.skipped else "")
                     + f", cost {cost}, in {t.span_s:.1f}s")
    return lines


def selected_models(items: Iterable[MatrixItem]) -> set[str]:
    """The models under test the items score (both of a pair)."""
    return {m for it in items for m in it.models}


def prepare_run(ctx: RunContext, active: Mapping[str, Evaluator],
                selected: list[MatrixItem], *, warm_up: WarmUp, say: Say,
                dry_run: bool = False, generate_only: bool = False,
                before_evaluation: Callable[[], None] = lambda: None,
                bind: Callable[[RunContext], None] = lambda ctx: None) -> Prepared:
    """Make the selected items' model calls and build the evaluators' artefacts.

    :param ctx: the run's context, restricted to the selected models.
    :param warm_up: the evaluators' warm-up, joined before any ``prepare`` runs.
    :param before_evaluation: called once the evaluation is sure to start (the output
        directory is checked there).
    :param bind: called with each fresher context (the tests of this process read it).
    """
    from ..generate.report import GenerationReport, ModelStats
    from .plan import plan_calls, start_calls

    plan = plan_calls(ctx, active, selected)
    if generate_only:
        plan = dataclasses.replace(plan, items=[], evaluators={})
    if dry_run:
        from ..roles.task import task_warnings
        from .estimate import estimate_plan, format_estimate, generation_reasons

        for line in [*format_estimate(estimate_plan(plan)), *generation_reasons(plan)]:
            say(line)
        # The counted calls are not all of the work asked for: say what the family rule skips.
        for text in task_warnings(ctx.settings):
            say(f"warning: {text}")
        return Prepared(dry_run=True, finished_early=(
            "summarybench dry run: no model was called", 0))
    settings = ctx.settings
    report = GenerationReport(models={m.id: ModelStats(m.id) for m in ctx.models},
                              max_cost_usd=settings.evaluation.max_cost_usd)
    run = start_calls(plan, report, progress=ctx.progress, published=warm_up.published)
    if generate_only:
        run.join()
        report.elapsed_s = run.summaries_s
        lines = report.lines()
        for line in lines:
            say(line)
        return Prepared(lines=lines, finished_early=(
            "summarybench: summaries generated (--sb-generate-only); `summarybench "
            "evaluate` (or a run without the flag) scores them", 1 if report.errors else 0))
    failed: list[str] = []
    try:
        before_evaluation()
        # Artefacts built from the code alone first, while the summaries are written and
        # judged; those that read the summaries once they all exist.
        early = [n for n in sorted(plan.evaluators)
                 if not getattr(active[n], "prepare_reads_summaries", True)]
        warm_up.join()  # no prepare computes what a warm-up still computes
        for name in early:
            _prepare_one(name, active[name], ctx, run, failed, say)
        run.summaries_ready.wait()
        ctx = ctx.refreshed()
        bind(ctx)
        for name in sorted(set(plan.evaluators) - set(early)):
            _prepare_one(name, active[name], ctx, run, failed, say)
            # A prepare may have written to the store (queries): the next ones and the
            # tests read it through a fresh context.
            ctx = ctx.refreshed()
            bind(ctx)
    except BaseException:
        # Ctrl-C while waiting here, or the session stopping: no call is waited for
        # (``CallRun.stop``); the answers already received are cached.
        run.stop()
        raise
    run.join()
    report.elapsed_s = run.summaries_s
    ctx = ctx.refreshed()
    bind(ctx)
    return Prepared(ctx=ctx, lines=[*report.lines(), *calls_lines(run.scheduler), *failed])


def _prepare_one(name: str, evaluator: Evaluator, ctx: RunContext, run: Any,
                 failed: list[str], say: Say) -> None:
    """``evaluator.prepare`` once its run-wide calls are answered; a failure is one line
    (its items then fail with their own reasons) and the other evaluators go on. Bad input
    (the store failing, say: an ``InputError``) stops the run instead."""
    from ..core.errors import InputError
    from ..llm.redaction import failure

    run.prepared[name].wait()
    try:
        evaluator.prepare(ctx)
    except InputError:
        raise
    except Exception as exc:
        line = f"summarybench: {name} could not prepare: {failure(exc)}"
        failed.append(line)
        say(line, red=True)
    finally:
        run.built(name)
