"""The session's model calls: planned from the selected items, then made at each
provider's limit, all phases at once.

``plan_calls`` collects, for the items ``-k``/``-m`` left, the summaries they read and
the evaluators they belong to. ``CallRun`` makes everything the plan needs through one
``Scheduler`` in an event loop of its own: the summaries (built-in ones at once, the
models' by calls), the evaluators' run-wide calls (retrieval's queries) and every item's
calls (judge verdicts, contrastive picks, downstream tasks), round after round. An item's
calls start as soon as the summaries it reads exist, so judging overlaps generation, and,
when they read an evaluator's artefacts, as soon as the warm-up published the item's part
(its unit's distractor set) or ``prepare`` built them all. The
tests then score from the answers in the response cache (``evaluators.base.gather``): one
test per item as before, and the same records with and without xdist.

``estimate`` is the dry run: the same plan, priced instead of made.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..evaluators.base import (
    MAX_ROUNDS,
    Answers,
    Evaluator,
    MatrixItem,
    makes_calls,
    prepare_requests_of,
    requests_of,
    summaries_of,
)
from ..llm.requests import ModelRequest
from ..llm.scheduler import BudgetExhausted, ProgressBoard, Scheduler, settle
from ..llm.types import Completion, ModelCallError

if TYPE_CHECKING:
    from ..context import RunContext
    from ..generate.report import GenerationReport
    from ..schemas import CodeUnit, GeneratedSummary
    from .warmup import Published


@dataclass
class CallPlan:
    """What a session's selected items need of the models."""

    ctx: RunContext
    items: list[tuple[Evaluator, MatrixItem]]
    """The selected items whose evaluators make calls, in matrix order."""
    evaluators: dict[str, Evaluator]
    """The evaluators of the selected items."""
    summaries: dict[tuple[str, str], str | None] = field(default_factory=dict)
    """(unit id, model id) of every summary the selected items read, in first-use order,
    with the evaluator that first reads it (what the dry run says a summary is for)."""

    def units_of(self, model_id: str) -> list[str]:
        return [u for u, m in self.summaries if m == model_id]


def plan_calls(ctx: RunContext, evaluators: Mapping[str, Evaluator],
               items: Iterable[MatrixItem]) -> CallPlan:
    """The plan of ``items`` (those of ``evaluators`` that are active)."""
    plan = CallPlan(ctx=ctx, items=[], evaluators={})
    models = {m.id for m in ctx.models}
    for item in items:
        ev = evaluators.get(item.evaluator)
        if ev is None:
            continue
        plan.evaluators[ev.name] = ev
        for unit_id, model_id in summaries_of(ev, item, ctx):
            if model_id in models:
                plan.summaries.setdefault((unit_id, model_id), ev.name)
        if makes_calls(ev):
            plan.items.append((ev, item))
    return plan


#: Seconds ``CallRun.stop`` waits for the run's thread once its calls are cancelled.
STOP_GRACE_S = 3.0


class CallRun:
    """Makes a plan's calls in a thread of its own (see the module docstring).

    ``summaries_ready`` is set once every summary the plan needs is written (or failed),
    so that the controller can build the evaluators' artefacts (embeddings of the
    summaries) while the judge calls go on; ``join`` waits for everything.

    ``stop`` ends the run early (Ctrl-C, or the session stopping for another reason):
    SIGINT reaches only the main thread, never this one, so without it the controller,
    interrupted while it waited, would still wait for every planned call before the
    session could end. Stopping cancels the event loop's work: no new call starts, calls
    on their way are abandoned, and every answer received so far is already cached (the
    model layer writes the cache when an answer arrives), so a re-run reuses it.
    """

    def __init__(self, plan: CallPlan, scheduler: Scheduler, report: GenerationReport,
                 published: Published | None = None) -> None:
        self.plan = plan
        self.scheduler = scheduler
        self.report = report
        self.published = published
        """What the warm-up has stored so far (``Evaluator.requests_read``); None: the
        items that read artefacts wait for ``built``."""
        self.summaries_ready = threading.Event()
        self.prepared: dict[str, threading.Event] = {
            name: threading.Event() for name in plan.evaluators}
        """Per evaluator: its run-wide calls (``prepare_requests``) are answered."""
        self.fresh: dict[tuple[str, str], GeneratedSummary] = {}
        self._built: dict[str, asyncio.Event] = {}
        """Per evaluator whose requests read its artefacts: set once they are built."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self.elapsed_s = 0.0
        """From the start to the last call of every phase."""
        self.summaries_s = 0.0
        """The generation phase's own time: from the start until every summary the plan
        needs is written or failed (the other phases go on after it)."""
        self._started = time.perf_counter()

    # -- running --------------------------------------------------------------------------
    def start(self) -> CallRun:
        self._thread = threading.Thread(target=self._main, name="summarybench-calls",
                                        daemon=True)
        self._thread.start()
        return self

    def built(self, name: str) -> None:
        """The controller built evaluator ``name``'s artefacts (its ``prepare`` ran)."""
        loop, event = self._loop, self._built.get(name)
        if loop is not None and event is not None:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the loop is closed: every call was made without it
                pass

    def join(self) -> None:
        """Wait for every call; interrupted while waiting (Ctrl-C), ``stop`` the run first."""
        try:
            if self._thread is not None:
                self._thread.join()
        except BaseException:
            self.stop()
            raise
        self.scheduler.close()
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        """End the run now (see the class docstring) and wait up to ``STOP_GRACE_S`` for
        its thread to unwind; the session is ending, so a failure of the run is not raised
        here (the cause of the stop is)."""
        self._stopping.set()
        loop, task = self._loop, self._task
        if loop is not None and task is not None:
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop is closed: the run has already ended
                pass
        if self._thread is not None:
            # Cancelled calls unwind at once; the bound is for a call stuck outside the
            # event loop, which the daemon thread then leaves behind.
            self._thread.join(STOP_GRACE_S)
        self.scheduler.close()

    def _main(self) -> None:
        started = self._started = time.perf_counter()
        try:
            asyncio.run(self._everything())
        except BaseException as exc:  # raised again in the controller by ``join``
            self._error = exc
        finally:
            if not self.summaries_ready.is_set():
                self.summaries_s = time.perf_counter() - started
            self.summaries_ready.set()
            for event in self.prepared.values():
                event.set()
            self.elapsed_s = time.perf_counter() - started

    async def _everything(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        if self._stopping.is_set():  # stopped before the loop could be told
            return
        try:
            await self._calls()
        except asyncio.CancelledError:
            if not self._stopping.is_set():
                raise

    async def _calls(self) -> None:
        self._built = {name: asyncio.Event() for name, ev in self.plan.evaluators.items()
                       if getattr(ev, "requests_need_prepare", False)}
        ready = self._generate()
        await settle([*ready.values(), *(self._prepare_calls(ev) for ev in
                                         self.plan.evaluators.values()),
                      *(self._chain(ev, item, ready) for ev, item in self.plan.items),
                      self._mark_ready(ready)])

    async def _mark_ready(self, ready: Mapping[tuple[str, str], asyncio.Future[None]]) -> None:
        await asyncio.gather(*ready.values(), return_exceptions=True)
        self.summaries_s = time.perf_counter() - self._started
        self.summaries_ready.set()

    # -- the phases ---------------------------------------------------------------------------
    def _generate(self) -> dict[tuple[str, str], asyncio.Future[None]]:
        """Start writing every missing summary; per (unit, model), a future done when it is
        written or failed (summaries the run already has are done at once)."""
        from ..generate.calls import PHASE, summarize
        from ..generate.runner import builtin_missing, missing

        ctx, loop = self.plan.ctx, asyncio.get_running_loop()
        ready: dict[tuple[str, str], asyncio.Future[None]] = {}
        remote: list[tuple[str, CodeUnit]] = []
        for model in ctx.models:
            wanted = self.plan.units_of(model.id)
            if not wanted:
                continue
            todo, stats = missing(ctx, model, wanted, self.report)
            if model.provider == "builtin":
                builtin_missing(ctx, model, todo, stats)  # fast, in-process
                todo = []
            remote += [(model.id, unit) for unit in todo]
            for unit_id in wanted:
                done = loop.create_future()
                done.set_result(None)
                ready[(unit_id, model.id)] = done
        self.scheduler.expect(PHASE, len(remote))
        models = {m.id: m for m in ctx.models}
        for model_id, unit in remote:
            ready[(unit.id, model_id)] = asyncio.ensure_future(
                self._summary(summarize(ctx, models[model_id], unit, self.scheduler,
                                        self.report), (unit.id, model_id)))
        return ready

    async def _summary(self, making: object, key: tuple[str, str]) -> None:
        summary = await making  # type: ignore[misc]
        if summary is not None:
            self.fresh[key] = summary

    async def _prepare_calls(self, ev: Evaluator) -> None:
        try:
            requests = prepare_requests_of(ev, self.plan.ctx)
            for phase, n in _by_phase(requests).items():
                self.scheduler.expect(phase, n)
            await settle([self.scheduler.call(r) for r in requests])
        finally:
            self.prepared[ev.name].set()

    async def _chain(self, ev: Evaluator, item: MatrixItem,
                     ready: Mapping[tuple[str, str], asyncio.Future[None]]) -> None:
        """The item's calls, round after round, once its summaries exist."""
        needed = [ready[key] for key in summaries_of(ev, item, self.plan.ctx) if key in ready]
        await asyncio.gather(*needed, return_exceptions=True)
        if ev.name in self._built:
            await self._artefacts(ev, item)
        ctx = dataclasses.replace(self.plan.ctx, fresh=self.fresh)
        answers: Answers = {}
        for _ in range(MAX_ROUNDS):
            try:
                requests = [r for r in requests_of(ev, item, ctx, answers)
                            if r.key not in answers]
            except Exception:  # noqa: BLE001 - the item's test raises it again, with context
                return
            if not requests:
                return
            for phase, n in _by_phase(requests).items():
                self.scheduler.expect(phase, n)
            results = await settle([self.scheduler.call(r) for r in requests])
            for request, result in zip(requests, results, strict=True):
                if isinstance(result, BudgetExhausted):
                    return
                if not isinstance(result, (Completion, ModelCallError)):
                    raise result
                answers[request.key] = result

    async def _artefacts(self, ev: Evaluator, item: MatrixItem) -> None:
        """Until the item's requests can read ``ev``'s artefacts: the warm-up published the
        item's part (``requests_read``), or ``ev``'s ``prepare`` ran (which also covers a
        warm-up that stopped or failed before it got there)."""
        built = self._built[ev.name]
        read = getattr(ev, "requests_read", None)
        name = read(item, self.plan.ctx) if self.published is not None and read else None
        if name is None or self.published is None:
            await built.wait()
            return
        waits = [asyncio.ensure_future(built.wait()),
                 asyncio.ensure_future(self.published.wait(name))]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()


def _by_phase(requests: Iterable[ModelRequest]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in requests:
        counts[r.phase] = counts.get(r.phase, 0) + 1
    return counts


def start_calls(plan: CallPlan, report: GenerationReport, *, progress: ProgressBoard | None,
                published: Published | None = None) -> CallRun:
    """Start making ``plan``'s calls with a scheduler set up from the run's settings
    (``published``: the warm-up's, see ``CallRun``)."""
    from ..generate.calls import announce_cap, warn_unpriced

    ctx = plan.ctx
    settings = ctx.settings
    warn_unpriced(ctx.models, settings.evaluation.max_cost_usd)
    scheduler = Scheduler(ctx.store, parallel=settings.evaluation.parallel,
                          max_cost_usd=settings.evaluation.max_cost_usd, progress=progress,
                          session=ctx.session, on_cap=announce_cap,
                          endpoints=ctx.endpoints)
    return CallRun(plan, scheduler, report, published).start()
