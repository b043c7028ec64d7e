"""The controller: the one process that prepares the run and ends it (the only process
without xdist; xdist's controller with it).

From collection to the last test it makes the selected items' model calls and builds the
evaluators' artefacts (``engine.prepare``), and it saves the records that arrive on the
test reports in batches; at the end it hands them to ``engine.finish`` and prints the
outcome. ``XdistControllerHooks`` is registered only when xdist is present, so the plugin
also loads with ``-p no:xdist``.

It fails closed: a store or output directory that cannot be used, or an input file that
is malformed, stops the session with one ``ERROR:`` line and exit code 4 (``stop``); a
configured gate never passes on a session that scored nothing or stopped early; and the
output directory's reports change only when a complete session publishes its own, all or
nothing (``report/files.py``: ``publish``), so that its ``results.json`` is always that
of the last complete session that published, whether a later session failed, was refused
or was killed (a partial session writes to ``runs/<id>/`` alone: ``report/runs.py``).

Registered in ``pytest_configure``: pydantic-based modules are imported where used.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from ..core.errors import InputError, RunError
from ..core.printable import shown_path
from ..engine.warmup import WarmUp, import_model_layer
from . import options
from .errors import as_usage_error
from .recorder import carried
from .state import (
    NO_ITEMS_ID,
    STOP_PREFIX,
    TOKEN_KEY,
    SummaryBenchState,
    case_of,
    selected_items,
)

if TYPE_CHECKING:
    from _pytest.terminal import TerminalReporter

    from ..engine.finish import RunOutcome
    from ..engine.work_dir import WorkDirClaim
    from ..evaluators import MatrixItem
    from ..schemas import ScoreRecord
    from ..schemas.report import RunSelection
    from ..store import RecordRow

#: The registered name of the controller's hooks.
CONTROLLER_NAME = "summarybench-controller"
#: The controller writes records to the store every SAVE_BATCH tests or SAVE_EVERY_S
#: seconds, whichever comes first (see ``Controller.flush_records``).
SAVE_BATCH = 500
SAVE_EVERY_S = 2.0


def say(tr: TerminalReporter | None, line: str, **markup: bool) -> None:
    """Write one line of ours to the terminal: every line the plugin prints goes through
    here, redacted and with control characters made inert (errors quote providers)."""
    if tr is not None:
        from ..llm.redaction import scrub

        tr.write_line(scrub(line, one_line=True), **markup)


class Controller:
    """The controller's hooks, from session start to the terminal summary (see the
    module docstring)."""

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
        self.model_layer_imported = False
        """litellm's import was started (or found unneeded) at collection."""
        self.warm_up = WarmUp()
        """Evaluators' work on the code alone, started at collection (``engine/warmup.py``)."""
        self.selection: RunSelection | None = None
        """What this session selected of the run's matrix, once collection chose."""
        self.outcome: RunOutcome | None = None
        """The end of the run (``engine.finish``), once the session finished."""
        self.work_dir: WorkDirClaim | None = None
        """The session's own working folder, once claimed (``engine/work_dir.py``)."""

    # -- failing closed ----------------------------------------------------------------
    def stop(self, message: str) -> NoReturn:
        """Stop the session now: one ``ERROR: summarybench: ...`` line on stderr and exit
        code 4 (pytest's usage error); the output directory's reports are left as they
        were."""
        self.fatal = message = " ".join(message.split())  # one line, whatever it quotes
        raise pytest.UsageError(f"summarybench: {message}")

    def _check_output_dir(self) -> None:
        """Stop now, not after the run, when the output directory cannot be written."""
        import tempfile

        output_dir = self.state.settings.output_dir
        try:
            output_dir.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=output_dir):
                pass
        except OSError as exc:
            self.stop(f"output directory {shown_path(output_dir)} is not writable "
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

    # -- from session start to the first test ----------------------------------------------
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

                with as_usage_error():
                    check_codebase(settings)

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        """At the first benchmark test collected, the units exist: start the evaluators'
        warm-up (not for ``--collect-only`` or the dry run, which call nothing, nor for
        ``--sb-generate-only``, which evaluates nothing). Under xdist the controller
        collects nothing and no warm-up starts; ``prepare`` does the work."""
        config = item.config
        if (self.warm_up.started or self.state.is_worker or case_of(item) is None
                or config.option.collectonly or config.getoption("sb_dry_run")):
            return
        if not self.model_layer_imported:
            self.model_layer_imported = True
            import_model_layer(self.state.settings)
        if config.getoption("sb_generate_only"):
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
        """Make the model calls of the selected items and build evaluator artefacts
        (``engine.prepare``).

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
        from ..engine.prepare import prepare_run, selected_models
        from .selection import session_selection

        tr = config.pluginmanager.get_plugin("terminalreporter")

        def before_evaluation() -> None:
            # The earlier session's reports stay where they are until this one's are
            # all written (``report/files.py``: ``publish``): a session killed, hung or
            # failed leaves them in place (it used to leave no results.json at all).
            self._check_output_dir()

        try:
            self.selection = session_selection(config, self.state.session_run_id,
                                               self.state.matrix(), selected)
            self._claim_work_dir()
            with quiet():
                prepared = prepare_run(
                    self.state.context().restricted(selected_models(selected)),
                    self.state.evaluators(), selected, warm_up=self.warm_up,
                    say=lambda line, **markup: say(tr, line, **markup),
                    dry_run=config.getoption("sb_dry_run"),
                    generate_only=config.getoption("sb_generate_only"),
                    before_evaluation=before_evaluation, bind=self.state.bind)
        except InputError as exc:
            self.stop(str(exc))
        self.dry_run_done = prepared.dry_run
        self.generation_summary = prepared.lines
        if prepared.finished_early is not None:
            self.finish_early(*prepared.finished_early)

    def _claim_work_dir(self) -> None:
        """Hold this session's working folder (its vector index...) until it ends, and
        remove those of sessions that died: no other session rebuilds it meanwhile."""
        from ..engine.work_dir import claim_work_dir

        try:
            self.work_dir = claim_work_dir(self.state.context())
        except OSError:
            self.work_dir = None  # an unwritable output folder stops the session next

    # -- while the tests run -----------------------------------------------------------
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
                try:
                    self.flush_records()
                except InputError as exc:
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

    @property
    def records(self) -> list[ScoreRecord]:
        """Every record of the session, in arrival order (after the hooks saw them)."""
        if self._records is None:
            from ..schemas import ScoreRecord

            self._records = [ScoreRecord.model_validate_json(text) for text in self._arrived]
        return self._records

    # -- the end -----------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.finished_early is not None and self.fatal is None:
            # Nothing was evaluated: the previous reports still stand, no gate applies.
            message, code = self.finished_early
            self.notes.append(message)
            if exitstatus == 0:
                session.exitstatus = code
            return
        if self.fatal is not None or exitstatus == pytest.ExitCode.USAGE_ERROR:
            # Stopped with its one line (here, or a usage error of pytest's or a plugin's):
            # nothing of this session is published; the folder's reports stay as they were.
            if self.benchmark_ran or self.fatal is not None:
                self._nothing_published()
            return
        try:
            self._finish(session, exitstatus)
        except InputError as exc:
            self._end_with(session, str(exc))

    def _end_with(self, session: pytest.Session, message: str) -> None:
        """A failure at session end (bad input: the store, the output directory, a gate's
        baseline): no report, the one line in the terminal summary, exit code 4 (raising
        from ``pytest_sessionfinish`` would lose pytest's own summary)."""
        self.fatal = message = " ".join(message.split())
        if self.outcome is not None:
            self.outcome.report = None
        self.notes.append(f"ERROR: summarybench: {message}")
        if self.outcome is None or self.outcome.error is None:
            self._nothing_published()  # a failed publication says so in its own line
        session.exitstatus = InputError.pytest_exit_code

    def _nothing_published(self) -> None:
        """The line of a session that failed: the output directory's reports are as they
        were (``report/files.py``: ``publish`` is all or nothing, and runs last)."""
        try:
            where = shown_path(self.state.settings.output_dir)
        except pytest.UsageError:
            return  # no configuration, hence no output directory
        line = (f"summarybench: nothing was published: the reports in {where} are unchanged "
                "(the last complete session's)")
        if line not in self.notes:
            self.notes.append(line)

    def _finish(self, session: pytest.Session, exitstatus: int) -> None:
        from ..engine.finish import SessionRecords, finish_run, nothing_scored

        self.flush_records()
        # In node id order, whatever order xdist delivered them in: every sum is then the
        # same as in a plain run and in a report rebuilt from the store.
        summary = sorted((r for r in self.records if r.benchmark == "summary"),
                         key=lambda r: (r.nodeid, r.unit_id, r.model_id, r.evaluator))
        if not summary and not self.benchmark_ran:
            # Not a code-summary session (another benchmark, plain tests), or one whose
            # -k/-m left no benchmark item: say why nothing ran.
            why = self._nothing_selected()
            if why:
                self.notes.append(why)
            return
        if not summary and self.dry_run_done:
            return  # a dry run calls and scores nothing by design
        from ..schemas.report import RunSelection

        ended = SessionRecords(
            records=summary, evaluators=self.state.evaluators(), scoring=self.state.scoring,
            skipped_families=self._skipped_families(summary),
            selection=self.selection or RunSelection(
                id=self.state.session_run_id, complete=False,
                reasons=["the selection is not known"]),
            started_at=self.started_at, stopped=_stopped_early(session, exitstatus))
        if not summary:
            outcome = nothing_scored(ended, self.state.settings.gate)
        else:
            outcome = finish_run(self.state.context(), ended, self._ranking_hook,
                                 notes=self.notes)
        self.notes[:] = [*self.notes, *(n for n in outcome.notes if n not in self.notes)]
        outcome.notes = self.notes
        self.outcome = outcome
        if outcome.error is not None:
            self._end_with(session, outcome.error)
            return
        if outcome.gate_failures and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _ranking_hook(self, report: Any) -> list[str]:
        """The gate messages of every ``pytest_summarybench_ranking`` implementation."""
        results = self.state.config.hook.pytest_summarybench_ranking(
            rankings=report.rankings, report=report, config=self.state.config)
        return [msg for msgs in results if msgs for msg in msgs]

    def _skipped_families(self, summary: list[ScoreRecord]) -> dict[str, str]:
        """Why each family that recorded nothing did not run: the evaluators' reasons, and
        for a family whose every item ``-k``/``-m`` left out, that it was deselected."""
        skipped = dict(self.state.skipped_families)
        evaluators = self.state.evaluators()
        ran = {evaluators[r.evaluator].family for r in summary if r.evaluator in evaluators}
        left_out = self.selection.deselected_by_family if self.selection else {}
        for family, n in sorted(left_out.items()):
            if n and family not in ran and family not in skipped:
                skipped[family] = (f"deselected: -k/-m left out its {n:,} item"
                                   f"{'s' if n != 1 else ''} in this session")
        return skipped

    def _nothing_selected(self) -> str:
        """Why no benchmark item was selected when some were collected ("" otherwise)."""
        from .selection import nothing_selected

        left_out = self.state.deselected_items()
        if not left_out:
            return ""
        return nothing_selected(self.state.config, left_out, self.state.skipped_families)

    def _skipped_file_lines(self) -> list[str]:
        """The files extraction skipped for this run, from the store: listed whether this
        session extracted the codebase or found it extracted by an earlier one."""
        from ..engine.pipeline import skipped_file_lines, skipped_files

        try:
            skipped = skipped_files(self.state.store, self.state.context().run_id)
        except (InputError, RunError, pytest.UsageError):
            return []  # the store or the codebase failed: said where it failed
        return skipped_file_lines(skipped)

    def pytest_terminal_summary(self, terminalreporter: TerminalReporter) -> None:
        records = sorted(self.records, key=lambda r: (r.nodeid, r.benchmark))
        self.state.config.hook.pytest_summarybench_terminal_summary(
            terminalreporter=terminalreporter, records=records, config=self.state.config)

    def pytest_summarybench_terminal_summary(self, terminalreporter: TerminalReporter,
                                             records: list[ScoreRecord],
                                             config: pytest.Config) -> None:
        tr = terminalreporter
        outcome = self.outcome
        report = outcome.report if outcome is not None else None
        gate_failures = outcome.gate_failures if outcome is not None else []
        if report is None:
            if self.notes or gate_failures:
                tr.write_sep("=", "summarybench")
                for line in self.notes:
                    say(tr, line, red=line.startswith("ERROR"))
                for msg in gate_failures:
                    say(tr, f"GATE FAILED: {msg}", red=True)
            return
        assert outcome is not None
        from ..engine.finish import dead_endpoint_lines
        from ..report import terminal_lines
        from ..report.terminal import headline_lines

        tr.write_sep("=", "summarybench ranking")
        for line in headline_lines(report):
            say(tr, line, red=line.startswith("UNHEALTHY"),
                yellow=line.startswith("CAUTION"))
        run = report.metadata.run
        if run is not None and not run.complete and not run.only_unhealthy:
            say(tr, f"PARTIAL RUN {run.id}: {run.describe()}", yellow=True)
        for line in self.generation_summary:
            say(tr, line)
        for line in dead_endpoint_lines(self.state.endpoints):
            say(tr, line, red=True)
        for line in terminal_lines(report):
            say(tr, line)
        for line in self._skipped_file_lines():
            say(tr, line, yellow=not line.startswith(" "))
        if report.validity is not None:
            from ..report.terminal import validity_lines

            for line in validity_lines(report.validity):
                say(tr, line, red=line.startswith("DISTRUST"))
        for line in self.notes:
            say(tr, line)
        for msg in gate_failures:
            say(tr, f"GATE FAILED: {msg}", red=True)
        results_path = outcome.results_path
        say(tr, f"results: {shown_path(results_path) if results_path else None}")
        for fmt, path in outcome.report_paths.items():
            if fmt == "explorer":
                say(tr, f"explorer: {shown_path(path)} (`summarybench view` opens it)")
            elif fmt != "json":
                say(tr, f"{fmt} report: {shown_path(path)}")
        if run is not None:
            assert results_path is not None
            kept = results_path.parent
            if run.complete:
                kept = kept / "runs" / run.id
            status = ("complete" if run.complete else "unhealthy" if run.only_unhealthy
                      else "partial")
            say(tr, f"run {run.id} ({status}) is kept in the store and in {shown_path(kept)}"
                    + ("" if run.complete else "; the output directory's own reports still "
                                               "show the latest complete run")
                    + "; `summarybench runs` lists the runs")

    @pytest.hookimpl(tryfirst=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.warm_up.stop.set()  # a session that ended early: its store closes next
        self.warm_up.join()
        # Reported and written: let the run's records, units and summaries go before
        # pytest's last garbage collections walk every object still alive.
        self._arrived, self._records, self._unsaved = [], None, []
        if self.work_dir is not None:
            self.work_dir.release()  # every test has run, in every worker
            self.work_dir = None
        if self.state.store_opened:
            try:
                self.state.store.end_session(self.state.token)
            except InputError:
                pass  # stale rows of one session; reported when the store is next opened
        self.state.release()


def _stopped_early(session: pytest.Session, exitstatus: int) -> str:
    """Why the session did not run every selected test ("" when it did): ``-x`` or
    ``--maxfail``, an interruption, an xdist worker that stopped."""
    reason = session.shouldfail or session.shouldstop
    if reason:
        return str(reason)
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        return "interrupted"
    return ""


class XdistControllerHooks:
    """Controller hooks that exist only with pytest-xdist."""

    def __init__(self, state: SummaryBenchState) -> None:
        self.state = state

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[TOKEN_KEY] = self.state.token

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        controller = self.state.config.pluginmanager.get_plugin(CONTROLLER_NAME)
        if controller is None or controller.prepared or not ids:
            return
        store = self.state.store
        try:
            chosen = store.selection.of(self.state.token)
        except InputError as exc:
            controller.stop(str(exc))
        if chosen:
            controller.prepare([it for it in self.state.matrix() if it.test_id in chosen])
