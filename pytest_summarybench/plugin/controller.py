"""The controller's hooks from session start to the last test: the dry run, preparing the
run once (generation, then each evaluator's ``prepare``) for what collection selected, and
the records that arrive on test reports, saved in batches. ``session_end.py`` adds the
report at the end; ``XdistControllerHooks`` is registered only when xdist is present, so
the plugin also loads with ``-p no:xdist``.

Registered in ``pytest_configure``: pydantic-based modules are imported where used.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from ..engine.warmup import WarmUp
from . import options
from .recorder import carried
from .state import (
    NO_ITEMS_ID,
    STOP_PREFIX,
    TOKEN_KEY,
    SummaryBenchState,
    case_of,
    failure,
    selected_items,
)

if TYPE_CHECKING:
    from _pytest.terminal import TerminalReporter

    from ..context import RunContext
    from ..evaluators import Evaluator, MatrixItem
    from ..schemas import ScoreRecord
    from ..schemas.report import RunSelection
    from ..store import RecordRow

#: The controller writes records to the store every SAVE_BATCH tests or SAVE_EVERY_S
#: seconds, whichever comes first (see ``Controller.flush_records``).
SAVE_BATCH = 500
SAVE_EVERY_S = 2.0


def calls_lines(scheduler: Any) -> list[str]:
    """One line per phase of model calls other than generation (which has its own)."""
    lines = []
    for phase, t in sorted(scheduler.totals().items()):
        if phase == "generation":
            continue
        cost = "unknown" if t.cost_unknown else f"${t.cost:.4f}"
        lines.append(f"summarybench {phase}: {t.calls} calls, {t.cached} from cache, "
                     f"{t.failed} failed" + (f", {t.skipped} over the cost cap"
                                             if t.skipped else "") + f", cost {cost}")
    return lines


def say(tr: TerminalReporter | None, line: str, **markup: bool) -> None:
    """Write one line of ours to the terminal: every line the plugin prints goes through
    here, redacted and with control characters made inert (errors quote providers)."""
    if tr is not None:
        from ..llm.redaction import scrub

        tr.write_line(scrub(line, one_line=True), **markup)



class Controller:
    """Controller-only, until the tests end: prepare once, collect the records.

    It fails closed: a store or output directory that cannot be used, or an input file
    that is malformed, stops the session with one ``ERROR:`` line and exit code 4
    (``stop``); a configured gate never passes on a session that scored nothing or stopped
    early; and the previous reports are moved aside (``retire_reports``) as soon as a
    complete session starts evaluating, so that the output directory's ``results.json``
    is always that of the last complete session that finished (a partial session writes
    to ``runs/<id>/`` alone: ``report/runs.py``).
    """

    def __init__(self, state: SummaryBenchState) -> None:
        self.state = state
        # Every record that arrived, as the JSON the store keeps, until the session end
        # reads them (``records``): 10,000 live records slowed every full garbage
        # collection of the run, and they are written as JSON anyway.
        self._arrived: list[str] = []
        self._records: list[ScoreRecord] | None = None
        self.prepared = False
        self.dry_run_done = False
        self.finished_early: tuple[str, int] | None = None
        """The line and exit code of a session that ends once its model calls are planned
        or made, running no test (``--sb-dry-run``, ``--sb-generate-only``)."""
        self.started_at = datetime.now(timezone.utc)
        self.generation_summary: list[str] = []
        self._unsaved: list[tuple[str, list[RecordRow]]] = []
        self._saved_at = time.monotonic()
        self.fatal: str | None = None
        """Why the session was stopped (the ERROR line), once it was."""
        self.benchmark_ran = False
        """The code-summary benchmark was collected (items selected, or an empty matrix)."""
        self.notes: list[str] = []
        """Lines for the terminal summary when there is no report to show."""
        self._retired: dict[Path, Path] | None = None
        self.warm_up = WarmUp()
        """Evaluators' work on the code alone, started at collection (``warmup.py``)."""
        self.selection: RunSelection | None = None
        """What this session selected of the run's matrix, once collection chose."""

    # -- failing closed ----------------------------------------------------------------
    def stop(self, message: str) -> NoReturn:
        """Stop the session now: one ``ERROR: summarybench: ...`` line on stderr and exit
        code 4 (pytest's usage error), the previous reports moved aside."""
        self.fatal = message = " ".join(message.split())  # one line, whatever it quotes
        self.retire_reports()
        raise pytest.UsageError(f"summarybench: {message}")

    def replaces_latest(self) -> bool:
        """Whether this session's reports are to become the output directory's own: it
        evaluates a complete selection (not a dry run, not ``--sb-generate-only``). Only
        such a session moves the previous reports aside; a partial one writes to
        ``runs/<id>/`` alone."""
        config = self.state.config
        if self.dry_run_done or config.getoption("sb_generate_only"):
            return False
        if self.selection is not None:
            return self.selection.complete
        from .selection import narrowing_options

        return not narrowing_options(config)

    def retire_reports(self) -> dict[Path, Path]:
        """Move the previous session's reports aside, once per session and only when this
        session replaces them (``replaces_latest``; see ``report.files.retire_reports``);
        where each went."""
        if self._retired is None:
            if not self.replaces_latest():
                return {}
            self._retired = {}
            try:
                output_dir = self.state.settings.output_dir
            except pytest.UsageError:
                return self._retired  # no configuration, hence no output directory
            from ..report.files import retire_reports

            try:
                self._retired = retire_reports(output_dir)
            except OSError as exc:
                self.notes.append(f"summarybench: the previous reports in {output_dir} could "
                                  f"not be moved aside ({exc.strerror or exc})")
        return self._retired

    def _check_output_dir(self) -> None:
        """Stop now, not after the run, when the output directory cannot be written."""
        import tempfile

        output_dir = self.state.settings.output_dir
        try:
            output_dir.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=output_dir):
                pass
        except OSError as exc:
            self.stop(f"output directory {output_dir} is not writable "
                      f"({exc.strerror or exc}): make it writable or pass --sb-output DIR")

    def finish_early(self, message: str, returncode: int) -> None:
        """End the session without running its tests: ``pytest_runtestloop`` runs none,
        the terminal summary ends with ``message``, the exit code is ``returncode``.

        ``pytest.exit`` would print pytest's internal exception name around the message;
        it is left only for an xdist controller, whose test loop is already running when
        the calls are made (``XdistControllerHooks``) and has no other way out. Such a
        session does not start xdist (``plugin.pytest_configure``), so that is a fallback."""
        self.finished_early = (message, returncode)
        if self.state.config.pluginmanager.has_plugin("dsession"):
            pytest.exit(message, returncode=returncode)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        return True if self.finished_early is not None else None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # A collection error summarybench marked as fatal (raised in pytest_generate_tests
        # of this process or of an xdist worker): stop with its one line.
        if report.failed and self.fatal is None:
            text = report.longreprtext.strip()
            if text.startswith(STOP_PREFIX):
                self.stop(text[len(STOP_PREFIX):].strip())

    @property
    def records(self) -> list[ScoreRecord]:
        """Every record of the session, in arrival order (after the hooks saw them)."""
        if self._records is None:
            from ..schemas import ScoreRecord

            self._records = [ScoreRecord.model_validate_json(text) for text in self._arrived]
        return self._records

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        config = self.state.config
        if options.engaged(config):
            # A bad configuration stops here, as one usage error line; so does a codebase
            # path the user gave (the default one is checked only when the code-summary
            # benchmark is collected, so other benchmarks run anywhere).
            settings = self.state.settings
            if config.getoption("sb_codebase") or options.config_path(config) is not None:
                from ..engine.pipeline import check_codebase
                from ..settings import SettingsError

                try:
                    check_codebase(settings)
                except SettingsError as exc:
                    raise pytest.UsageError(str(exc)) from None

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        """At the first benchmark test collected, the units exist: start the evaluators'
        warm-up (not for ``--collect-only`` or the dry run, which call nothing). Under
        xdist the controller collects nothing and no warm-up starts; ``prepare`` does the
        work."""
        if (self.warm_up.started or self.state.is_worker or case_of(item) is None
                or item.config.option.collectonly or item.config.getoption("sb_dry_run")):
            return
        self.warm_up.start(self.state.context(), self.state.evaluators().values())

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.state.is_worker:
            selected = selected_items(session.items)
            self.warm_up.keep_for(set() if self.state.config.getoption("sb_generate_only")
                                  else {it.evaluator for it in selected})
            if selected:
                self.prepare(selected)
            else:
                self.warm_up.join()

    def prepare(self, selected: list[MatrixItem]) -> None:
        """Make the model calls of the selected items and build evaluator artefacts.

        Nothing is called for ``--collect-only`` (listing tests must not spend money);
        ``--sb-generate-only`` stops the session once summaries exist. A store that fails
        meanwhile stops the session (``stop``).
        """
        config = self.state.config
        if self.prepared or config.option.collectonly:
            return
        self.prepared = True
        self.benchmark_ran = True
        from ..core.dependency_warnings import quiet
        from ..store import StoreError
        from .selection import session_selection

        try:
            self.selection = session_selection(config, self.state.session_run_id,
                                               self.state.matrix(), selected)
            with quiet():
                self._prepare(selected)
        except StoreError as exc:
            self.stop(str(exc))

    def _prepare(self, selected: list[MatrixItem]) -> None:
        """Start the calls of the plan (``plan.py``); as soon as the summaries exist, build
        each evaluator's artefacts (embeddings, indexes) while the judges' calls go on; then
        wait for every call."""
        import dataclasses

        from ..engine.plan import plan_calls, start_calls
        from ..generate.report import GenerationReport, ModelStats

        config = self.state.config
        settings = self.state.settings
        ctx = self.state.context().restricted(
            {m for it in selected for m in it.model_id.split("~")})
        active = self.state.evaluators()
        plan = plan_calls(ctx, active, selected)
        generate_only = config.getoption("sb_generate_only")
        if generate_only:
            plan = dataclasses.replace(plan, items=[], evaluators={})
        tr = config.pluginmanager.get_plugin("terminalreporter")
        if config.getoption("sb_dry_run"):
            from ..engine.estimate import estimate_plan, format_estimate

            for line in format_estimate(estimate_plan(plan)):
                say(tr, line)
            self.dry_run_done = True
            self.finish_early("summarybench dry run: no model was called", 0)
            return
        report = GenerationReport(models={m.id: ModelStats(m.id) for m in ctx.models},
                                  max_cost_usd=settings.evaluation.max_cost_usd)
        run = start_calls(plan, report, progress=self.state.progress())
        if generate_only:
            run.join()
            report.elapsed_s = run.elapsed_s
            self.generation_summary = report.lines()
            for line in self.generation_summary:
                say(tr, line)
            self.finish_early("summarybench: summaries generated (--sb-generate-only); "
                              "`summarybench evaluate` (or a run without the flag) scores "
                              "them", 1 if report.errors else 0)
            return
        try:
            # Evaluation starts: an earlier session's reports must not pass for this one's.
            self._check_output_dir()
            self.retire_reports()
            # Artefacts built from the code alone first, while the summaries are written
            # and judged; those that read the summaries once they all exist.
            early = [n for n in sorted(plan.evaluators)
                     if not getattr(active[n], "prepare_reads_summaries", True)]
            self.warm_up.join()  # no prepare computes what a warm-up still computes
            for name in early:
                self._prepare_one(name, active[name], ctx, run, tr)
            run.summaries_ready.wait()
            ctx = ctx.refreshed()
            self.state.bind(ctx)
            for name in sorted(set(plan.evaluators) - set(early)):
                self._prepare_one(name, active[name], ctx, run, tr)
                # A prepare may have written to the store (queries): the next ones and the
                # tests read it through a fresh context.
                ctx = ctx.refreshed()
                self.state.bind(ctx)
        except BaseException:
            # Ctrl-C while waiting here, or the session stopping: no call is waited for
            # (``CallRun.stop``); the answers already received are cached.
            run.stop()
            raise
        run.join()
        report.elapsed_s = run.elapsed_s
        self.generation_summary = [*report.lines(), *calls_lines(run.scheduler),
                                   *self.generation_summary]
        ctx = ctx.refreshed()
        self.state.bind(ctx)

    def _prepare_one(self, name: str, evaluator: Evaluator, ctx: RunContext, run: Any,
                     tr: TerminalReporter | None) -> None:
        """``evaluator.prepare`` once its run-wide calls are answered; a failure is one line
        (its items then fail with their own reasons) and the other evaluators go on."""
        from ..store import StoreError

        run.prepared[name].wait()
        try:
            evaluator.prepare(ctx)
        except StoreError:
            raise
        except Exception as exc:
            line = f"summarybench: {name} could not prepare: {failure(exc)}"
            self.generation_summary.append(line)
            say(tr, line, red=True)
        finally:
            run.built(name)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        raw = carried(report)
        if not raw:
            if report.nodeid.endswith(f"[{NO_ITEMS_ID}]"):
                self.benchmark_ran = True  # collected, with nothing to score
            return
        from ..schemas import ScoreRecord
        from ..store import record_row

        validate = ScoreRecord.model_validate_json
        records = [validate(r) for r in raw]
        hook = self.state.config.hook.pytest_summarybench_record_score
        for rec in records:
            hook(record=rec, config=self.state.config)
        rows = [record_row(rec) for rec in records]  # what the hooks left
        self._arrived.extend(row[4] for row in rows)
        self._records = None
        summary_rows = [row for row in rows if row[0] == "summary"]
        if summary_rows:
            self._unsaved.append((report.nodeid, summary_rows))
            now = time.monotonic()
            if len(self._unsaved) >= SAVE_BATCH or now - self._saved_at >= SAVE_EVERY_S:
                from ..store import StoreError

                try:
                    self.flush_records()
                except StoreError as exc:
                    self.stop(str(exc))

    def flush_records(self) -> None:
        """Write the records that arrived since the last flush, in one transaction.

        Records are written in batches (every ``SAVE_BATCH`` tests or ``SAVE_EVERY_S``
        seconds, and at session end) because a transaction per test was a fifth of a
        cached re-run. A process killed between flushes loses only records, never a model
        answer: the response cache keeps those, so the tests run again without calls.
        """
        self._saved_at = time.monotonic()
        if self._unsaved:
            batch, self._unsaved = self._unsaved, []
            self.state.store.save_record_rows(self.state.context().run_id, batch)

    @pytest.hookimpl(tryfirst=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.warm_up.stop.set()  # a session that ended early: its store closes next
        self.warm_up.join()
        # Reported and written: let the run's records, units and summaries go before
        # pytest's last garbage collections walk every object still alive.
        self._arrived, self._records, self._unsaved = [], None, []
        if self.state.store_opened:
            from ..store import StoreError

            try:
                self.state.store.end_session(self.state.token)
            except StoreError:
                pass  # stale rows of one session; reported when the store is next opened
        self.state.release()


class XdistControllerHooks:
    """Controller hooks that exist only with pytest-xdist."""

    def __init__(self, state: SummaryBenchState) -> None:
        self.state = state

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[TOKEN_KEY] = self.state.token

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        controller = self.state.config.pluginmanager.get_plugin("summarybench-controller")
        if controller is None or controller.prepared or not ids:
            return
        from ..store import StoreError

        store = self.state.store
        try:
            chosen = store.selection.of(self.state.token)
        except StoreError as exc:
            controller.stop(str(exc))
        if chosen:
            controller.prepare([it for it in self.state.matrix() if it.test_id in chosen])
