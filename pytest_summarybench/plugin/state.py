"""Session wiring: the state every process holds.

``SummaryBenchState`` lives in the controller and in each xdist worker: it loads settings,
reaches the run through the store, parametrizes the matrix and binds items to evaluators
(``BoundItem``, what a benchmark test calls). The controller's own hooks are in
``controller.py``.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import pytest

from ..core.dependency_warnings import MARKS as DEPENDENCY_MARKS
from ..core.errors import InputError
from ..core.family import Family, FamilyError, family_of
from ..core.input_files import InputFileError
from ..core.vocabulary import VALIDATE
from ..evaluators import EvaluationError, Evaluator, MatrixItem
from . import options
from .errors import STOPS_SESSION, as_usage_error, stops_session, usage_error

# pydantic-based modules (schemas, settings, store, context) are imported where used, so
# that registering this module in pytest_configure stays cheap (``pytest --help``).
if TYPE_CHECKING:

    from ..aggregate import Scoring
    from ..context import RunContext
    from ..core.progress import Progress
    from ..llm.endpoints import Endpoints
    from ..schemas import ScoreRecord
    from ..settings import Settings
    from ..store import Store

#: The session token the controller hands its xdist workers (``workerinput``).
TOKEN_KEY = "summarybench_token"
#: How a collection error that must stop the whole session begins: whichever process
#: collects (the controller, or an xdist worker whose report the controller receives), the
#: controller turns it into one ``ERROR:`` line and exit code 4 (``Controller.stop``).
STOP_PREFIX = "summarybench cannot run: "
#: The id of the one test collected when the matrix is empty (skipped, with the reasons).
NO_ITEMS_ID = "no-items"
#: Where an xdist worker that selected no benchmark item lists those it deselected.
_DESELECTED = "deselected"


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
        # (recorded reason, the test's one line): failed outside the except blocks, so that
        # pytest does not print the cause again ("During handling of ...").
        failed: tuple[str, str] | None = None
        try:
            records = evaluator.evaluate(self.item, ctx)
        except EvaluationError as exc:
            failed = (str(exc),
                      f"{self.item.evaluator} could not score {self.item.test_id}: {exc}")
        except Exception as exc:
            from pydantic import ValidationError

            if isinstance(exc, InputError):
                # A store that fails, say: every other test would fail the same way. Stop
                # with the one line.
                pytest.exit(f"summarybench: {exc}", returncode=exc.pytest_exit_code)
            if not (isinstance(exc, ValidationError) and exc.title == "ScoreRecord"):
                self._fail(f"{type(exc).__name__}: {exc}")
                raise
            # e.g. a NaN metric: an invalid score is never a score
            problems = "; ".join(e["msg"].removeprefix("Value error, ")
                                 for e in exc.errors())
            reason = f"{self.item.evaluator} produced an invalid score record: {problems}"
            failed = (reason, f"{reason} ({self.item.test_id})")
        if failed is not None:
            self._fail(failed[0])
            pytest.fail(failed[1], pytrace=False)
        for rec in records:
            self._emit(rec)
        return records

    def _emit(self, rec: ScoreRecord) -> None:
        if self._record is None:
            raise RuntimeError(f"sb_case {self.item.test_id} has no test to record on: it "
                               "is evaluated by the test it parametrizes")
        self._record(rec)

    def _fail(self, reason: str) -> None:
        from ..schemas import ScoreRecord

        self._emit(ScoreRecord.failed(unit_id=self.item.unit_id, model_id=self.item.model_id,
                                      evaluator=self.item.evaluator, reason=reason))


class SummaryBenchState:
    """Per-process state: settings, store, context, evaluators; registered as a plugin."""

    def __init__(self, config: pytest.Config, families: tuple[Family, ...]) -> None:
        self.config = config
        self.families = families
        """The session's evaluator families: the built-in ones, then the plugins'."""
        self.is_worker = hasattr(config, "workerinput")
        self.token: str = (config.workerinput[TOKEN_KEY]  # type: ignore[attr-defined]
                           if self.is_worker and TOKEN_KEY in config.workerinput  # type: ignore[attr-defined]
                           else uuid.uuid4().hex)
        self.session_run_id = self.token[:12]
        """The id this session's run is kept under (``runs/<id>/``, ``summarybench runs``)."""
        self._settings: Settings | None = None
        self._store: Store | None = None
        self._ctx: RunContext | None = None
        self._evaluators: dict[str, Evaluator] | None = None
        self.skipped_families: dict[str, str] = {}
        self.scoring: Scoring | None = None
        """Set with the evaluators: how their metrics become scores."""
        self._bound = False
        self._progress: Progress | None = None
        self._endpoints: Endpoints | None = None
        self._deselected: list[MatrixItem] = []
        self._matrix: list[MatrixItem] | None = None
        self.ladder: Literal["asked", "default"] | None = None
        """Whether the validity ladder is in this run: ``asked`` (``--sb-validate``),
        ``default`` (no evaluator can call a model, and no ``--sb-no-validate``) or None;
        set with the settings."""

    # -- lazily built run state ------------------------------------------------------
    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from ..settings import load_settings

            path = options.config_path(self.config)
            with as_usage_error():
                self._settings = load_settings(
                    path, options.overrides(self.config, self.families),
                    families=self.families, base_dir=self.config.rootpath)
            from ..validity.wiring import costs_no_calls, with_ladder

            if options.validating(self.config):
                self.ladder = "asked"
            elif not options.not_validating(self.config) and costs_no_calls(self._settings):
                self.ladder = "default"
            if self.ladder is not None:
                self._settings = with_ladder(self._settings)
        return self._settings

    @property
    def store(self) -> Store:
        if self._store is None:
            from ..store import Store

            # The controller checks the file when it first opens it: a damaged store stops
            # the session before anything reads half of it.
            self._store = Store(self.settings.store_path, check=not self.is_worker,
                                timeout_s=self.settings.output.store_wait_s,
                                notice=self.progress().write_line)
        return self._store

    @property
    def store_opened(self) -> bool:
        """Whether this process opened the store (``store``) and has not closed it."""
        return self._store is not None

    def context(self) -> RunContext:
        if self._ctx is None:
            from ..engine.pipeline import ensure_units

            with as_usage_error():
                ctx = ensure_units(self.settings, self.store, self.progress())
            self._ctx = dataclasses.replace(ctx, session=self.token, endpoints=self.endpoints)
        return self._ctx

    @property
    def endpoints(self) -> Endpoints:
        """This session's rate limiters, circuit breakers and Routers (``llm/endpoints.py``):
        every context of the session, and so every call it makes, uses them; another
        session in the same process (an in-process pytester run) has its own."""
        if self._endpoints is None:
            from ..llm.endpoints import Endpoints

            self._endpoints = Endpoints()
        return self._endpoints

    def evaluators(self) -> dict[str, Evaluator]:
        """Active evaluators by name: those of the enabled families plus hook-provided ones
        (of an enabled family, or of a family declared nowhere), minus those whose
        ``skip_reason`` says they cannot run."""
        if self._evaluators is None:
            ctx = self.context()
            enabled = set(self.settings.enabled_families())
            declared = {f.name for f in self.families}
            candidates: list[Evaluator] = [
                self._load(family, name) for family in self.families
                if family.name in enabled for name in family.evaluators]
            hooked: list[Evaluator] = []
            for extra in self.config.hook.pytest_summarybench_evaluators(config=self.config):
                hooked.extend(extra)
            for ev in hooked:
                if family_of(ev.name) != ev.family:
                    raise pytest.UsageError(
                        f"pytest_summarybench_evaluators: the evaluator {ev.name!r} is of the "
                        f"family {ev.family!r}: name it {ev.family}/METHOD")
            candidates.extend(ev for ev in hooked
                              if ev.family in enabled or ev.family not in declared)
            self.scoring = self._scoring(hooked)
            active: dict[str, Evaluator] = {}
            reasons: dict[str, dict[str, list[str]]] = {}
            for ev in candidates:
                try:
                    reason = ev.skip_reason(ctx)
                except Exception as exc:
                    _raise_if_fatal(ev.name, exc)
                    from ..llm.redaction import failure

                    reason = failure(exc)  # a broken evaluator must not stop the others
                if reason is None:
                    active[ev.name] = ev
                else:
                    reasons.setdefault(ev.family, {}).setdefault(reason, []).append(ev.name)
            families_with_items = {ev.family for ev in active.values()}
            # An evaluator asked for that cannot run says so even when its family runs
            # (a bug_localisation listed in tasks without a task file vanished).
            from ..evaluators.base import requested_of

            for ev in candidates:
                if ev.name not in active and ev.family in families_with_items \
                        and requested_of(ev, ctx):
                    self.skipped_families[ev.name] = next(
                        r for r, names in reasons[ev.family].items() if ev.name in names)
            for family in self.families:
                if family.name not in enabled:
                    self.skipped_families[family.name] = "disabled in the configuration"
                elif family.name not in families_with_items:
                    # One line per distinct reason, naming the evaluators it stops.
                    self.skipped_families[family.name] = "; ".join(
                        f"{', '.join(names)}: {reason}"
                        for reason, names in reasons.get(family.name, {}).items()
                    ) or "no evaluator of this family is installed"
            self._evaluators = active
        return self._evaluators

    @staticmethod
    def _class(family: Family, name: str) -> Any:
        """The class of ``family``'s evaluator ``name``, or a usage error naming them."""
        try:
            cls = family.evaluator_class(name)
        except (ImportError, AttributeError, FamilyError) as exc:
            raise pytest.UsageError(f"the evaluator {name!r} of the family {family.name!r} "
                                    f"cannot be loaded: {exc}") from None
        if getattr(cls, "name", None) != name or getattr(cls, "family", None) != family.name:
            raise pytest.UsageError(
                f"the family {family.name!r} declares the evaluator {name!r}, but its class "
                f"{getattr(cls, '__name__', cls)!r} is {getattr(cls, 'name', None)!r} of the "
                f"family {getattr(cls, 'family', None)!r}")
        return cls

    def _load(self, family: Family, name: str) -> Evaluator:
        return self._class(family, name)()  # type: ignore[no-any-return]

    def _scoring(self, hooked: list[Evaluator]) -> Scoring:
        """The run's scoring: the components of every declared family's evaluators (run
        or not) and those of the hooks' evaluators, under the configured weights (a bad
        declaration stops the run)."""
        from ..aggregate.scoring import scoring_from_config

        classes: list[Any] = [self._class(family, name) for family in self.families
                              for name in family.evaluators]
        with as_usage_error():
            return scoring_from_config([*classes, *hooked], self.settings.benchmark_config(),
                                       self.families)

    def matrix(self) -> list[MatrixItem]:
        """The run's matrix, sorted by test id: built once per session (collection, the
        controller's selection and the xdist hooks all read it)."""
        if self._matrix is None:
            self._matrix = self._build_matrix()
        return list(self._matrix)

    def _build_matrix(self) -> list[MatrixItem]:
        ctx = self.context()
        items: list[MatrixItem] = []
        active = self.evaluators()
        for name, ev in list(active.items()):
            try:
                found = ev.items(ctx)
                stray = next((it for it in found
                              if it.evaluator != name or it.family != ev.family), None)
                if stray is not None:
                    raise EvaluationError(
                        f"its item {stray.test_id} is of {stray.evaluator!r}, family "
                        f"{stray.family!r}: items carry their evaluator's name and family")
                items.extend(found)
            except Exception as exc:
                _raise_if_fatal(name, exc)
                # A broken evaluator of a hook: skip it, say why.
                del active[name]
                key = ev.family if all(e.family != ev.family for e in active.values()) \
                    else name
                from ..llm.redaction import failure

                self.skipped_families[key] = f"{name}: {failure(exc)}"
        if self.ladder == "default" and self.config.getoption("sb_generate_only"):
            # The default ladder is scored, never generated for a later run: a session
            # that only writes summaries leaves it out (its settings keep the ladder
            # models, so the run id stays that of the full run).
            items = [it for it in items if not it.ladder]
        elif self.ladder is not None:
            from ..evaluators.base import makes_calls
            from ..validity.wiring import documented_ids, keep_item

            documented = documented_ids(ctx.units)
            # The default ladder makes no model call: an evaluator that asks for calls per
            # item (a hook's) scores it only with --sb-validate.
            free = {name: self.ladder == "asked" or not makes_calls(ev)
                    for name, ev in active.items()}
            items = [it for it in items
                     if keep_item(it, ctx, documented, calls=free.get(it.evaluator, True))]
        return sorted(items, key=lambda it: (it.test_id, it))

    def bound_context(self) -> RunContext:
        """The context tests evaluate with: in a worker, read afresh once (the controller
        produced summaries and artefacts after this process collected); in the controller,
        the one it prepared the run with (``bind``)."""
        if not self._bound:
            # A context is never changed: a fresh one replaces it.
            self.bind(self.context().refreshed())
        return self.context()

    def progress(self) -> Progress:
        """Where the run's long phases show their progress: stderr, around pytest's output
        capture (one per session, shared by extraction, embedding and model calls)."""
        if self._progress is None:
            from ..core.progress import Progress

            self._progress = Progress.for_pytest(self.config)
        return self._progress

    def bind(self, ctx: RunContext) -> None:
        """Evaluate with ``ctx`` from now on (the controller: restricted to the selected
        models and read afresh after generating and after each evaluator's ``prepare``)."""
        self._ctx = ctx
        self._bound = True

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
        except STOPS_SESSION as exc:
            stop = str(exc)
        else:
            stop = ""
        if stop:
            # Raised here it is one collection error of this module; the controller stops
            # the session on it (see STOP_PREFIX). Outside the except block, so that the
            # error is this line alone, with no chained exception.
            pytest.fail(STOP_PREFIX + " ".join(stop.split()), pytrace=False)
        if not items:
            reasons = "; ".join(f"{f}: {r}" for f, r in sorted(self.skipped_families.items()))
            metafunc.parametrize("sb_case", [pytest.param(
                None, id=NO_ITEMS_ID, marks=pytest.mark.skip(
                    reason=f"summarybench has no matrix items ({reasons})"))])
            return
        # One mark list per (family, ladder or not), shared by its items: looking a mark
        # up on pytest.mark for each of 10,000 items was a visible share of collection.
        marks: dict[tuple[str, bool], tuple[pytest.MarkDecorator, ...]] = {}
        registered = {f.name for f in self.families}
        params = []
        for it in items:
            key = (it.family, it.ladder)
            if key[0] not in registered:
                # The family of a hook's evaluator, declared nowhere: its marker is
                # registered here, before its first use (--strict-markers).
                self.config.addinivalue_line("markers", options.marker_line(key[0]))
                registered.add(key[0])
            if key not in marks:
                # the validity ladder's items: -m validate selects them
                marks[key] = (getattr(pytest.mark, key[0]),
                              *([getattr(pytest.mark, VALIDATE)] if key[1] else []),
                              *DEPENDENCY_MARKS)
            params.append(pytest.param(BoundItem(it, self), id=it.test_id, marks=marks[key]))
        metafunc.parametrize("sb_case", params)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self._deselected.extend(selected_items(items))

    def deselected_items(self) -> list[MatrixItem]:
        """The benchmark items ``-k``/``-m`` left out in this session: this process's,
        or, in an xdist controller (which collects nothing), those its workers told it."""
        if self._deselected or not self.config.pluginmanager.hasplugin("xdist"):
            return self._deselected
        from .selection import narrowing_options

        try:
            if not narrowing_options(self.config) or not self.settings.store_path.is_file():
                return []
            ids = self.store.selection.of(self.token, scope=_DESELECTED)
            return [it for it in self.matrix() if it.test_id in ids] if ids else []
        except STOPS_SESSION:
            return []  # the session already says what is wrong with them

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        selected = selected_items(session.items)
        if not selected:
            if self.is_worker and self._deselected:
                # For the controller's line on why nothing ran (``deselected_items``).
                self.store.selection.add(self.token, sorted(
                    it.test_id for it in self._deselected), scope=_DESELECTED)
            return
        if self.is_worker:
            # Tell the controller what -k/-m left, before xdist reports collection done.
            self.store.selection.add(self.token, sorted(it.test_id for it in selected))


def _raise_if_fatal(evaluator: str, exc: Exception) -> None:
    """Re-raise what must stop the run rather than skip an evaluator: a usage error, a bad
    input file (queries, tasks: docs/evaluators.md, named with the evaluator that read
    it), a store failure."""
    if not stops_session(exc):
        return
    if isinstance(exc, InputError):
        where = f"{evaluator}: " if isinstance(exc, InputFileError) else ""
        raise usage_error(exc, where=where) from None
    raise exc


def case_of(item: pytest.Item) -> BoundItem | None:
    """The matrix case a test is parametrized with, if it is a benchmark test."""
    callspec = getattr(item, "callspec", None)
    case = callspec.params.get("sb_case") if callspec is not None else None
    return case if isinstance(case, BoundItem) else None


def selected_items(items: list[pytest.Item]) -> list[MatrixItem]:
    return [case.item for case in map(case_of, items) if case is not None]
