"""The controller at the session's end: the report built from the session's records, the
CI gate applied, the reports written, and the terminal summary. A session that stopped or
scored nothing writes no report (and a configured gate does not pass it).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..core.vocabulary import LADDER_PREFIX
from .controller import Controller, say
from .state import failure

if TYPE_CHECKING:
    from _pytest.terminal import TerminalReporter

    from ..schemas import BenchmarkReport, ScoreRecord
    from ..schemas.report import RunSelection
    from .state import SummaryBenchState


class ControllerHooks(Controller):
    """The controller's hooks, start to end: ``Controller``'s, and the report."""

    def __init__(self, state: SummaryBenchState) -> None:
        super().__init__(state)
        self.report: BenchmarkReport | None = None
        self.gate_failures: list[str] = []
        self.report_paths: dict[str, Path] = {}
        self.results_path: Path | None = None

    def _end_with(self, session: pytest.Session, message: str) -> None:
        """A failure at session end: no report, the one line in the terminal summary, exit
        code 4 (raising from ``pytest_sessionfinish`` would lose pytest's own summary)."""
        self.fatal = message = " ".join(message.split())
        self.report = None
        self.retire_reports()
        self.notes.append(f"ERROR: summarybench: {message}")
        session.exitstatus = pytest.ExitCode.USAGE_ERROR

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
            # nothing of this session may be written as if it had run.
            if self.benchmark_ran or self.fatal is not None:
                self.retire_reports()
            return
        from ..store import StoreError

        try:
            self._finish(session, exitstatus)
        except StoreError as exc:
            self._end_with(session, str(exc))

    def _finish(self, session: pytest.Session, exitstatus: int) -> None:
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
        from ..report import apply_gate, build_run_report, save_gate_outcome
        from ..report.gate import gate_configured

        settings = self.state.settings
        stopped = _stopped_early(session, exitstatus)
        if not summary and self.dry_run_done:
            return  # a dry run calls and scores nothing by design
        if not summary:
            # Nothing to report: the previous reports must not pass for this session's.
            self.retire_reports()
            why = stopped or ("every selected item was skipped or failed before scoring; "
                              "-rs shows the skip reasons")
            self.notes.append(f"summarybench: no unit was scored ({why}); no results.json "
                              f"written")
            if gate_configured(settings.gate):
                self._gate_failed(session, [
                    f"no unit was scored in this session ({why}); a gate passes only on a "
                    "session that scored"])
            return
        ctx = self.state.context()
        details: dict[str, dict[str, Any]] = {}
        for name, ev in sorted(self.state.evaluators().items()):
            summarize = getattr(ev, "summarize", None)
            if callable(summarize):
                # The validity ladder is analysed on its own (report.validity).
                mine = [r for r in summary if r.evaluator == name
                        and not r.model_id.startswith(LADDER_PREFIX)]
                if mine:
                    try:
                        details[name] = summarize(mine, ctx)
                    except Exception as exc:  # noqa: BLE001 - one evaluator's section only
                        # A broken summary of one evaluator must not cost the report.
                        details[name] = {"error": f"summarize failed: {failure(exc)}"}
                        self.notes.append(f"summarybench: {name} could not summarize its "
                                          f"records ({failure(exc)}); its report section "
                                          "says so instead")
        report = build_run_report(ctx, summary, self._skipped_families(summary),
                                  started_at=self.started_at,
                                  finished_at=datetime.now(timezone.utc),
                                  evaluator_details=details, scoring=self.state.scoring,
                                  save=True)
        # The configured gate first: it attaches the baseline comparison that ranking
        # hooks may want to read. A baseline that was this directory's results.json is
        # read where retire_reports moved it.
        failures = apply_gate(report, settings, self.state.store,
                              moved=self.retire_reports())
        if stopped and gate_configured(settings.gate):
            failures.append(f"the session stopped early ({stopped}); a gate judges only a "
                            "session that ran to the end")
        results = self.state.config.hook.pytest_summarybench_ranking(
            rankings=report.rankings, report=report, config=self.state.config)
        failures += [msg for msgs in results if msgs for msg in msgs]
        report.gate_failures = list(failures)
        save_gate_outcome(self.state.store, report)
        self._gate_failed(session, failures)
        # Scored means a model under test scored: the ladder's built-in summaries score
        # whatever the models' endpoints do (only a ladder-only session is judged by them).
        models = [r for r in summary if not r.model_id.startswith(LADDER_PREFIX)]
        report.metadata.run = self._run_selection(
            stopped, scored=any(r.error is None for r in models or summary))
        from ..report import save_session_run, write_session_reports
        from ..report.json_report import report_json

        save_session_run(self.state.store, report, report_json(report))
        try:
            self.report_paths = write_session_reports(report, settings.output_dir,
                                                      ["json", *settings.output.formats])
        except OSError as exc:
            self._end_with(session, f"cannot write the reports to {settings.output_dir} "
                                    f"({exc.strerror or exc}): free space there or make it "
                                    "writable, or pass --sb-output DIR; the scores are in "
                                    f"the store ({settings.store_path}), `summarybench "
                                    f"report --run {report.metadata.run.id}` writes them")
            return
        self.report = report
        self.results_path = self.report_paths["json"]
        if not report.metadata.run.complete and self._retired:
            # Started as a complete run, stopped early: the reports moved aside at the
            # start are still the latest complete run's.
            from ..report.files import restore_reports

            try:
                restore_reports(self._retired)
            except OSError as exc:
                self.notes.append(f"summarybench: the previous reports could not be put back "
                                  f"from {settings.output_dir} ({exc.strerror or exc})")

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

    def _run_selection(self, stopped: str, *, scored: bool) -> RunSelection:
        """This session's run: the selection ``prepare`` saw; partial if it stopped early
        or scored nothing (every item ended in an error: a dead endpoint, say), so that
        it never replaces the output directory's reports of a complete run that did."""
        from ..schemas.report import RunSelection

        run = self.selection or RunSelection(id=self.state.session_run_id, complete=False,
                                             reasons=["the selection is not known"])
        more = ([f"stopped early: {stopped}"] if stopped else []) + (
            [] if scored else ["nothing scored: every item ended in an error"])
        if more:
            run = run.model_copy(update={"complete": False, "reasons": [*run.reasons, *more]})
        return run

    def _nothing_selected(self) -> str:
        """Why no benchmark item was selected when some were collected ("" otherwise)."""
        from .selection import nothing_selected

        left_out = self.state.deselected_items()
        if not left_out:
            return ""
        return nothing_selected(self.state.config, left_out, self.state.skipped_families)

    def _gate_failed(self, session: pytest.Session, failures: list[str]) -> None:
        self.gate_failures = failures
        if failures and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: TerminalReporter) -> None:
        records = sorted(self.records, key=lambda r: (r.nodeid, r.benchmark))
        self.state.config.hook.pytest_summarybench_terminal_summary(
            terminalreporter=terminalreporter, records=records, config=self.state.config)

    def pytest_summarybench_terminal_summary(self, terminalreporter: TerminalReporter,
                                             records: list[ScoreRecord],
                                             config: pytest.Config) -> None:
        if self.report is None:
            if self.notes or self.gate_failures:
                terminalreporter.write_sep("=", "summarybench")
                for line in self.notes:
                    say(terminalreporter, line, red=line.startswith("ERROR"))
                for msg in self.gate_failures:
                    say(terminalreporter, f"GATE FAILED: {msg}", red=True)
            return
        from ..report import terminal_lines

        tr = terminalreporter
        tr.write_sep("=", "summarybench ranking")
        run = self.report.metadata.run
        if run is not None and not run.complete:
            say(tr, f"PARTIAL RUN {run.id}: {run.describe()}",
                yellow=True)
        for line in self.generation_summary:
            say(tr, line)
        for line in _dead_endpoint_lines():
            say(tr, line, red=True)
        for line in terminal_lines(self.report):
            say(tr, line)
        if self.report.validity is not None:
            from ..report.terminal import validity_lines

            for line in validity_lines(self.report.validity):
                say(tr, line, red=line.startswith("DISTRUST"))
        for line in self.notes:
            say(tr, line)
        for msg in self.gate_failures:
            say(tr, f"GATE FAILED: {msg}", red=True)
        say(tr, f"results: {self.results_path}")
        for fmt, path in self.report_paths.items():
            if fmt != "json":
                say(tr, f"{fmt} report: {path}")
        if run is not None:
            assert self.results_path is not None
            kept = self.results_path.parent
            if run.complete:
                kept = kept / "runs" / run.id
            say(tr, f"run {run.id} ({'complete' if run.complete else 'partial'}) is kept in "
                    f"the store and in {kept}"
                    + ("" if run.complete else "; the output directory's own reports still "
                                               "show the latest complete run")
                    + "; `summarybench runs` lists the runs")


def _stopped_early(session: pytest.Session, exitstatus: int) -> str:
    """Why the session did not run every selected test ("" when it did): ``-x`` or
    ``--maxfail``, an interruption, an xdist worker that stopped."""
    reason = session.shouldfail or session.shouldstop
    if reason:
        return str(reason)
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        return "interrupted"
    return ""


def _dead_endpoint_lines() -> list[str]:
    """One line per endpoint still refused at the end (its breaker open: the calls made
    in this process, which are all of a session's, the controller making them): which
    model, where, and why; the items it failed are counted per model and evaluator."""
    from ..llm.breaker import open_breakers

    lines = []
    for (provider, name, where), cause in sorted(open_breakers().items(),
                                                 key=lambda kv: str(kv[0])):
        at = f" ({where})" if where and str(where) not in cause else ""
        lines.append(f"dead endpoint: {provider}/{name}{at}: {cause}")
    return lines
