"""Session wiring: the state every process holds, and the controller's hooks.

``SummaryBenchState`` lives in the controller and in each xdist worker: it loads settings,
reaches the run through the store, parametrizes the matrix and binds items to evaluators.
``ControllerHooks`` (controller only) prepares the run once before tests start, collects
the records that arrive on test reports, aggregates and reports. ``XdistControllerHooks``
is registered only when xdist is present, so the plugin also loads with ``-p no:xdist``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import pytest

from . import options
from .evaluators import (
    BUILTIN_EVALUATORS,
    EvaluationError,
    Evaluator,
    MatrixItem,
    SummarizingEvaluator,
    load_builtin,
)
from .plugin import REPORT_ATTR

# pydantic-based modules (schemas, settings, store, context) are imported where used, so
# that registering this module in pytest_configure stays cheap (``pytest --help``).
if TYPE_CHECKING:
    from _pytest.terminal import TerminalReporter

    from .context import RunContext
    from .schemas import BenchmarkReport, ScoreRecord
    from .settings import Settings
    from .store import RecordRow, Store

TOKEN_KEY = "summarybench_token"
#: The controller writes records to the store every SAVE_BATCH tests or SAVE_EVERY_S
#: seconds, whichever comes first (see ``ControllerHooks.flush_records``).
SAVE_BATCH = 500
SAVE_EVERY_S = 2.0
_SELECTION_DDL = ("CREATE TABLE IF NOT EXISTS session_selection (token TEXT, model_id TEXT, "
                  "evaluator TEXT, PRIMARY KEY (token, model_id, evaluator))")


class BoundItem:
    """A matrix item bound to its evaluator and the run's context: what a benchmark test
    calls, as the value of its ``sb_case`` parameter.

    The matrix parametrizes ``sb_case`` directly with these (an indirect fixture cost
    pytest a fixture request per test, a visible share of a cached re-run), so they are
    made at collection: the evaluator and the context are looked up when the test runs,
    and ``plugin.pytest_runtest_setup`` attaches the recorder of the test's node.
    """

    __slots__ = ("item", "_state", "_record")

    def __init__(self, item: MatrixItem, state: SummaryBenchState,
                 record: Callable[[ScoreRecord], None] | None = None) -> None:
        self.item = item
        self._state = state
        self._record = record

    def __repr__(self) -> str:
        return f"<sb_case {self.item.test_id}>"

    def attach(self, record: Callable[[ScoreRecord], None] | None) -> None:
        """Record this item's scores with ``record`` (the running test's recorder)."""
        self._record = record

    @property
    def ctx(self) -> RunContext:
        return self._state.bound_context()

    @property
    def evaluator(self) -> Evaluator:
        return self._state.evaluators()[self.item.evaluator]

    @property
    def unit(self) -> Any:
        return self.ctx.unit(self.item.unit_id)

    def evaluate(self) -> list[ScoreRecord]:
        """Score the item and record the scores; an item that cannot be scored is recorded
        as an error with its reason, and the test fails with that reason."""
        evaluator, ctx = self.evaluator, self.ctx
        try:
            records = evaluator.evaluate(self.item, ctx)
        except EvaluationError as exc:
            self._fail(str(exc))
            pytest.fail(f"{self.item.evaluator} could not score {self.item.test_id}: {exc}",
                        pytrace=False)
        except Exception as exc:
            self._fail(f"{type(exc).__name__}: {exc}")
            raise
        for rec in records:
            self._emit(rec)
        return records

    def _emit(self, rec: ScoreRecord) -> None:
        if self._record is None:
            raise RuntimeError(f"sb_case {self.item.test_id} has no test to record on: it "
                               "is evaluated by the test it parametrizes")
        self._record(rec)

    def _fail(self, reason: str) -> None:
        from .schemas import ScoreRecord

        self._emit(ScoreRecord.failed(unit_id=self.item.unit_id, model_id=self.item.model_id,
                                      evaluator=self.item.evaluator, reason=reason))


class SummaryBenchState:
    """Per-process state: settings, store, context, evaluators; registered as a plugin."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        self.token: str = (config.workerinput[TOKEN_KEY]  # type: ignore[attr-defined]
                           if self.is_worker and TOKEN_KEY in config.workerinput  # type: ignore[attr-defined]
                           else uuid.uuid4().hex)
        self._settings: Settings | None = None
        self._store: Store | None = None
        self._ctx: RunContext | None = None
        self._evaluators: dict[str, Evaluator] | None = None
        self.skipped_families: dict[str, str] = {}
        self._refreshed = False

    # -- lazily built run state ------------------------------------------------------
    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from .settings import SettingsError, load_settings

            path = options.config_path(self.config)
            try:
                self._settings = load_settings(path, options.overrides(self.config),
                                               base_dir=self.config.rootpath)
            except SettingsError as exc:
                raise pytest.UsageError(str(exc)) from None
            if options.validating(self.config):
                from .validity.wiring import with_ladder

                self._settings = with_ladder(self._settings)
        return self._settings

    @property
    def store(self) -> Store:
        if self._store is None:
            from .store import Store

            self._store = Store(self.settings.store_path)
        return self._store

    def context(self) -> RunContext:
        if self._ctx is None:
            from .pipeline import ensure_units
            from .progress import Progress
            from .settings import SettingsError

            try:
                self._ctx = ensure_units(self.settings, self.store,
                                         Progress.for_pytest(self.config))
            except SettingsError as exc:
                raise pytest.UsageError(str(exc)) from None
        return self._ctx

    def evaluators(self) -> dict[str, Evaluator]:
        """Active evaluators by name: built-in ones of enabled families plus hook-provided
        ones, minus those whose ``skip_reason`` says they cannot run."""
        if self._evaluators is None:
            ctx = self.context()
            enabled = set(self.settings.enabled_families())
            candidates: list[Evaluator] = [load_builtin(name) for name in BUILTIN_EVALUATORS
                                           if name.split("/", 1)[0] in enabled]
            for extra in self.config.hook.pytest_summarybench_evaluators(config=self.config):
                candidates.extend(extra)
            active: dict[str, Evaluator] = {}
            reasons: dict[str, dict[str, list[str]]] = {}
            for ev in candidates:
                try:
                    reason = ev.skip_reason(ctx)
                except pytest.UsageError:
                    raise  # the evaluator's own verdict: bad input the user must fix
                except Exception as exc:  # a broken evaluator must not stop the others
                    reason = _failure(exc)
                if reason is None:
                    active[ev.name] = ev
                else:
                    reasons.setdefault(ev.family, {}).setdefault(reason, []).append(ev.name)
            families_with_items = {ev.family for ev in active.values()}
            for family in options.FAMILIES:
                if family not in enabled:
                    self.skipped_families[family] = "disabled in the configuration"
                elif family not in families_with_items:
                    # One line per distinct reason, naming the evaluators it stops.
                    self.skipped_families[family] = "; ".join(
                        f"{', '.join(names)}: {reason}"
                        for reason, names in reasons.get(family, {}).items()
                    ) or "no evaluator of this family is installed"
            self._evaluators = active
        return self._evaluators

    def matrix(self) -> list[MatrixItem]:
        ctx = self.context()
        items: list[MatrixItem] = []
        active = self.evaluators()
        for name, ev in list(active.items()):
            try:
                items.extend(ev.items(ctx))
            except pytest.UsageError:
                raise
            except Exception as exc:  # e.g. a malformed queries file: skip, say why
                del active[name]
                key = ev.family if all(e.family != ev.family for e in active.values()) \
                    else name
                self.skipped_families[key] = f"{name}: {_failure(exc)}"
        if options.validating(self.config):
            from .validity.wiring import documented_ids, keep_item

            documented = documented_ids(ctx.units)
            items = [it for it in items if keep_item(it, ctx, documented)]
        return sorted(items, key=lambda it: (it.test_id, it))

    def bound_context(self) -> RunContext:
        """The context tests evaluate with."""
        ctx = self.context()
        if not self._refreshed:
            # Summaries and artefacts were produced by the controller after this process
            # collected; read them afresh once.
            ctx.refresh()
            self._refreshed = True
        return ctx

    def mark_refreshed(self) -> None:
        """The context was just read afresh (the controller, after generating)."""
        self._refreshed = True

    def release(self) -> None:
        """Forget the run's data (units, summaries): the session is over."""
        self._ctx = None
        if self._store is not None:
            self._store.close()  # and its cached summaries

    # -- hooks (every process) ---------------------------------------------------------
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "sb_case" not in metafunc.fixturenames:
            return
        try:
            items = self.matrix()
        except pytest.UsageError as exc:
            pytest.fail(f"summarybench: {exc}", pytrace=False)
        if not items:
            reasons = "; ".join(f"{f}: {r}" for f, r in sorted(self.skipped_families.items()))
            metafunc.parametrize("sb_case", [pytest.param(
                None, id="no-items", marks=pytest.mark.skip(
                    reason=f"summarybench has no matrix items ({reasons})"))])
            return
        # One mark list per (family, ladder or not), shared by its items: looking a mark
        # up on pytest.mark for each of 10,000 items was a visible share of collection.
        marks: dict[tuple[str, bool], tuple[pytest.MarkDecorator, ...]] = {}
        params = []
        for it in items:
            key = (it.evaluator.split("/", 1)[0], it.model_id.startswith("validate/"))
            if key not in marks:
                # the validity ladder's items: -m validate selects them
                marks[key] = (getattr(pytest.mark, key[0]),
                              *([pytest.mark.validate] if key[1] else []))
            params.append(pytest.param(BoundItem(it, self), id=it.test_id, marks=marks[key]))
        metafunc.parametrize("sb_case", params)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        selected = selected_items(session.items)
        if not selected:
            return
        if self.is_worker:
            # Tell the controller what -k/-m left, before xdist reports collection done.
            self.store.ensure_table(_SELECTION_DDL)
            with self.store.transaction() as conn:
                conn.executemany(
                    "INSERT OR IGNORE INTO session_selection VALUES (?, ?, ?)",
                    sorted({(self.token, m, it.evaluator) for it in selected
                            for m in it.model_id.split("~")}))


def _failure(exc: BaseException) -> str:
    """One line naming the exception, without key material."""
    from .llm.providers import redact

    first = (str(exc).strip().splitlines() or [""])[0]
    return redact(f"{type(exc).__name__}: {first}")


def case_of(item: pytest.Item) -> BoundItem | None:
    """The matrix case a test is parametrized with, if it is a benchmark test."""
    callspec = getattr(item, "callspec", None)
    case = callspec.params.get("sb_case") if callspec is not None else None
    return case if isinstance(case, BoundItem) else None


def selected_items(items: list[pytest.Item]) -> list[MatrixItem]:
    return [case.item for case in map(case_of, items) if case is not None]


class ControllerHooks:
    """Controller-only: prepare once, collect records, aggregate, report."""

    def __init__(self, state: SummaryBenchState) -> None:
        self.state = state
        # Every record that arrived, as the JSON the store keeps, until the session end
        # reads them (``records``): 10,000 live records slowed every full garbage
        # collection of the run, and they are written as JSON anyway.
        self._arrived: list[str] = []
        self._records: list[ScoreRecord] | None = None
        self.prepared = False
        self.started_at = datetime.now(timezone.utc)
        self.report: BenchmarkReport | None = None
        self.gate_failures: list[str] = []
        self.generation_summary: list[str] = []
        self._unsaved: list[tuple[str, list[RecordRow]]] = []
        self._saved_at = time.monotonic()

    @property
    def records(self) -> list[ScoreRecord]:
        """Every record of the session, in arrival order (after the hooks saw them)."""
        if self._records is None:
            from .schemas import ScoreRecord

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
                from .pipeline import check_codebase
                from .settings import SettingsError

                try:
                    check_codebase(settings)
                except SettingsError as exc:
                    raise pytest.UsageError(str(exc)) from None
        if config.getoption("sb_dry_run"):
            from .generate import estimate_generation, format_estimate

            ctx = self.state.context()
            tr = config.pluginmanager.get_plugin("terminalreporter")
            lines = format_estimate(estimate_generation(ctx))
            for line in lines:
                if tr is not None:
                    tr.write_line(line)
            pytest.exit("summarybench dry run: no model was called", returncode=0)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.state.is_worker:
            selected = selected_items(session.items)
            if selected:
                self.prepare({(m, it.evaluator) for it in selected
                              for m in it.model_id.split("~")})

    def prepare(self, selection: set[tuple[str, str]]) -> None:
        """Generate summaries and build evaluator artefacts for the selected items.

        Nothing is generated for ``--collect-only`` (listing tests must not spend money);
        ``--sb-generate-only`` stops the session once summaries exist.
        """
        config = self.state.config
        if self.prepared or config.option.collectonly:
            return
        self.prepared = True
        from .generate import run_generation

        ctx = self.state.context()
        models = {m for m, _ in selection}
        ctx.restrict_models(models)
        settings = self.state.settings
        result = run_generation(ctx, parallel=settings.evaluation.parallel,
                                max_cost_usd=settings.evaluation.max_cost_usd,
                                progress=True)
        self.generation_summary = result.lines()
        if config.getoption("sb_generate_only"):
            tr = config.pluginmanager.get_plugin("terminalreporter")
            for line in self.generation_summary:
                if tr is not None:
                    tr.write_line(line)
            pytest.exit("summarybench: summaries generated (--sb-generate-only)",
                        returncode=1 if result.errors else 0)
        if result.generated or result.errors:
            # New summaries or errors were linked: read them. A fully cached re-run links
            # nothing, and reading 10,000 units again was a visible share of its time.
            ctx.refresh()
            ctx.restrict_models(models)
        self.state.mark_refreshed()
        active = self.state.evaluators()
        tr = config.pluginmanager.get_plugin("terminalreporter")
        for name in sorted({ev for _, ev in selection}):
            if name in active:
                try:
                    active[name].prepare(ctx)
                except Exception as exc:
                    # Its items will fail with their own reasons; the other evaluators
                    # and the report go on.
                    line = f"summarybench: {name} could not prepare: {_failure(exc)}"
                    self.generation_summary.append(line)
                    if tr is not None:
                        tr.write_line(line, red=True)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        raw = getattr(report, REPORT_ATTR, None)
        if not raw:
            return
        from .schemas import ScoreRecord
        from .store import record_row

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
                self.flush_records()

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
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.flush_records()
        # In node id order, whatever order xdist delivered them in: every sum is then the
        # same as in a plain run and in a report rebuilt from the store.
        summary = sorted((r for r in self.records if r.benchmark == "summary"),
                         key=lambda r: (r.nodeid, r.unit_id, r.model_id, r.evaluator))
        if not summary:
            return
        from .report import apply_gate, build_run_report, save_gate_outcome, write_reports

        ctx = self.state.context()
        details: dict[str, dict[str, Any]] = {}
        for name, ev in sorted(self.state.evaluators().items()):
            if isinstance(ev, SummarizingEvaluator):
                # The validity ladder is analysed on its own (report.validity).
                mine = [r for r in summary if r.evaluator == name
                        and not r.model_id.startswith("validate/")]
                if mine:
                    details[name] = ev.summarize(mine, ctx)
        report = build_run_report(ctx, summary, self.state.skipped_families,
                                  started_at=self.started_at,
                                  finished_at=datetime.now(timezone.utc),
                                  evaluator_details=details, save=True)
        settings = self.state.settings
        # The configured gate first: it attaches the baseline comparison that ranking
        # hooks may want to read.
        self.gate_failures = apply_gate(report, settings, self.state.store)
        results = self.state.config.hook.pytest_summarybench_ranking(
            rankings=report.rankings, report=report, config=self.state.config)
        self.gate_failures += [msg for msgs in results if msgs for msg in msgs]
        report.gate_failures = list(self.gate_failures)
        save_gate_outcome(self.state.store, report)
        if self.gate_failures and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        self.report = report
        self.report_paths = write_reports(report, settings.output_dir,
                                          ["json", *settings.output.formats])
        self.results_path = self.report_paths["json"]

    def pytest_terminal_summary(self, terminalreporter: TerminalReporter) -> None:
        records = sorted(self.records, key=lambda r: (r.nodeid, r.benchmark))
        self.state.config.hook.pytest_summarybench_terminal_summary(
            terminalreporter=terminalreporter, records=records, config=self.state.config)

    @pytest.hookimpl(tryfirst=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        # Reported and written: let the run's records, units and summaries go before
        # pytest's last garbage collections walk every object still alive.
        self._arrived, self._records, self._unsaved = [], None, []
        self.state.release()

    def pytest_summarybench_terminal_summary(self, terminalreporter: TerminalReporter,
                                             records: list[ScoreRecord],
                                             config: pytest.Config) -> None:
        if self.report is None:
            return
        from .report import terminal_lines

        terminalreporter.write_sep("=", "summarybench ranking")
        for line in self.generation_summary:
            terminalreporter.write_line(line)
        for line in terminal_lines(self.report):
            terminalreporter.write_line(line)
        if self.report.validity is not None:
            from .report.terminal import validity_lines

            for line in validity_lines(self.report.validity):
                terminalreporter.write_line(line, red=line.startswith("DISTRUST"))
        for msg in self.gate_failures:
            terminalreporter.write_line(f"GATE FAILED: {msg}", red=True)
        terminalreporter.write_line(f"results: {self.results_path}")
        for fmt, path in self.report_paths.items():
            if fmt != "json":
                terminalreporter.write_line(f"{fmt} report: {path}")


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
        store = self.state.store
        store.ensure_table(_SELECTION_DDL)
        rows = store.execute("SELECT model_id, evaluator FROM session_selection WHERE token = ?",
                             (self.state.token,))
        if rows:
            controller.prepare({(m, e) for m, e in rows})
