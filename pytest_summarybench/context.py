"""What an evaluator sees of a run: settings, store, units, models, summaries and the
models' roles.

Built once per process (the controller, and each xdist worker) from the store, which is
the only channel between them; nothing here is held in globals. A context never changes
once made: a narrower view (``restricted``, ``with_units``) or a fresher one
(``refreshed``, after the controller wrote summaries) is a new context. What it reads from
the store is read on first use and kept, so a context is cheap to make and to pass on.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import NamedTuple, Protocol

from .core.progress import Progress
from .llm.endpoints import Endpoints
from .roles.assign import Roles
from .schemas import CodeUnit, GeneratedSummary, ModelConfig
from .settings import Settings
from .store import Store


class Named(Protocol):
    """What names a unit in a file a user writes (a queries file): its path and name."""

    @property
    def id(self) -> str: ...

    @property
    def path(self) -> str: ...

    @property
    def name(self) -> str: ...


class UnitName(NamedTuple):
    """A unit's id, path and name, read without the unit."""

    id: str
    path: str
    name: str


class StoredUnits:
    """The run's units as the store holds them, read when first needed and shared by a
    context and the contexts made from it: a run's units never change once it is
    extracted. The sampled units are read as a list; any other unit one by one, when
    asked for (a distractor, a unit a task shows), so that no process holds every unit
    of a large codebase unless a caller asks for ``all``."""

    def __init__(self, store: Store, run_id: str) -> None:
        self._store = store
        self._run_id = run_id
        self._known: dict[str, CodeUnit] = {}
        self._lock = threading.Lock()

    @cached_property
    def all(self) -> list[CodeUnit]:
        """Every unit of the run, in order (reads them all: for whole-codebase work)."""
        units = self._store.load_units(self._run_id)
        with self._lock:
            self._known.update((u.id, u) for u in units)
        return units

    @cached_property
    def ids(self) -> frozenset[str]:
        """Every unit id of the run, read from the store without the units themselves."""
        return frozenset(self._store.unit_ids(self._run_id))

    @cached_property
    def names(self) -> list[UnitName]:
        """Every unit's id, path and name, in order, read without the units."""
        return [UnitName(*row) for row in self._store.unit_names(self._run_id)]

    @cached_property
    def groups(self) -> dict[tuple[str, str], int]:
        """How many units each (language, type) has, counted by the store."""
        return self._store.unit_groups(self._run_id)

    def get(self, unit_id: str) -> CodeUnit:
        """One unit of the run (``KeyError`` when the run has none of that id)."""
        found = self._known.get(unit_id)
        if found is None:
            self.fetch([unit_id])
            found = self._known[unit_id]
        return found

    def fetch(self, unit_ids: Iterable[str]) -> None:
        """Read the units ``unit_ids`` that are not read yet, in one query."""
        wanted = [u for u in unit_ids if u not in self._known]
        if wanted:
            units = self._store.load_units_by_id(self._run_id, wanted)
            with self._lock:
                self._known.update((u.id, u) for u in units)

    @cached_property
    def sampled(self) -> list[CodeUnit]:
        units = self._store.load_units(self._run_id, sampled_only=True)
        with self._lock:
            self._known.update((u.id, u) for u in units)
        return units


#: ``summary_error`` of a unit and model no generation was asked for (no item read it).
NEVER_GENERATED = "no summary was generated for this unit and model"


@dataclass(frozen=True, eq=False)
class RunContext:
    """The run's shared, read-only state (see the module docstring)."""

    settings: Settings
    store: Store
    run_id: str
    chosen_models: tuple[ModelConfig, ...] | None = field(default=None, kw_only=True)
    """The models under test this context is about (None: every configured one)."""
    chosen_units: tuple[CodeUnit, ...] | None = field(default=None, kw_only=True)
    """The units this context summarizes and scores (None: the sampled ones)."""
    stored_units: StoredUnits = field(default=None, kw_only=True, repr=False)  # type: ignore[assignment]
    session: str = field(default="", kw_only=True)
    """The pytest session's token: where the controller recorded the model calls that
    failed for good (``llm/scheduler.py``), for the tests to read."""
    fresh: Mapping[tuple[str, str], GeneratedSummary] | None = field(default=None,
                                                                     kw_only=True, repr=False)
    """Summaries written by this session after the context was made (the controller's
    plan sees them as they arrive); looked up before the store's."""
    """The run's units read from the store, shared with the contexts made from this one."""
    progress: Progress = field(default_factory=Progress, kw_only=True, repr=False,
                               compare=False)
    """Where long phases (embedding, model calls) report; stderr by default."""
    endpoints: Endpoints = field(default_factory=Endpoints, kw_only=True, repr=False,
                                 compare=False)
    """The session's rate limiters, circuit breakers and Routers (``llm/endpoints.py``):
    every model call of the session goes through them, also a hook's evaluator's
    (``complete(..., endpoints=ctx.endpoints)``). Shared by the contexts made from this
    one; the plugin gives each session's context its own."""

    def __post_init__(self) -> None:
        if self.stored_units is None:
            # the frozen dataclass's own way to set a field it defaults itself
            object.__setattr__(self, "stored_units", StoredUnits(self.store, self.run_id))

    # -- new contexts ---------------------------------------------------------------------
    def restricted(self, model_ids: Iterable[str]) -> RunContext:
        """This context for only these models under test (e.g. those ``-k`` selected)."""
        wanted = set(model_ids)
        return dataclasses.replace(self, chosen_models=tuple(
            m for m in self.settings.test_models() if m.id in wanted))

    def with_units(self, units: Iterable[CodeUnit]) -> RunContext:
        """This context (its models) for other units than the sampled ones, e.g. the units
        a downstream task shows that the sample left out."""
        return dataclasses.replace(self, chosen_units=tuple(units))

    def refreshed(self) -> RunContext:
        """The same context reading summaries afresh (after the controller wrote some)."""
        return dataclasses.replace(self)

    # -- units ------------------------------------------------------------------------
    @property
    def all_units(self) -> list[CodeUnit]:
        """Every extracted unit of the codebase (distractor and index candidates)."""
        return self.stored_units.all

    @property
    def unit_ids(self) -> frozenset[str]:
        """The ids of every extracted unit (a set built once per run, not per question)."""
        return self.stored_units.ids

    @property
    def unit_names(self) -> list[UnitName]:
        """Every extracted unit's id, path and name (not the units)."""
        return self.stored_units.names

    @property
    def unit_groups(self) -> dict[tuple[str, str], int]:
        """How many units of the codebase each (language, type) has."""
        return self.stored_units.groups

    @cached_property
    def units(self) -> list[CodeUnit]:
        """The units under evaluation (the sampled ones unless ``with_units`` chose), in a
        stable order."""
        if self.chosen_units is not None:
            return list(self.chosen_units)
        return self.stored_units.sampled

    def unit(self, unit_id: str) -> CodeUnit:
        return self.stored_units.get(unit_id)

    @staticmethod
    def unit_label(unit: CodeUnit) -> str:
        """A readable, -k friendly label: ``language-path-name``."""
        name = unit.name if unit.type != "file" else "file"
        return f"{unit.language}-{unit.path}-{name}".replace(" ", "_")

    # -- models, roles and summaries ----------------------------------------------------
    @cached_property
    def models(self) -> list[ModelConfig]:
        """Models under test (all configured ones unless ``restricted`` narrowed them)."""
        if self.chosen_models is not None:
            return list(self.chosen_models)
        return self.settings.test_models()

    @cached_property
    def judges(self) -> list[ModelConfig]:
        return self.settings.judge_models()

    @cached_property
    def roles(self) -> Roles:
        """Which model plays which role (the judge plan, the helper, the task model),
        each worked out when first asked for."""
        return Roles(settings=self.settings, models=tuple(self.models),
                     judges=tuple(self.judges))

    @cached_property
    def _summaries(self) -> dict[tuple[str, str], GeneratedSummary | str]:
        return self.store.run_summaries(self.run_id)

    def summary(self, unit_id: str, model_id: str) -> GeneratedSummary | None:
        """The summary the run uses for this unit and model, None if generation failed."""
        if self.fresh is not None:
            written = self.fresh.get((unit_id, model_id))
            if written is not None:
                return written
        found = self._summaries.get((unit_id, model_id))
        return found if isinstance(found, GeneratedSummary) else None

    def summary_error(self, unit_id: str, model_id: str) -> str | None:
        """Why the run has no summary of this unit by this model (None when it has one):
        the generation's error, or ``NEVER_GENERATED`` when none was asked for."""
        found = self._summaries.get((unit_id, model_id))
        if found is None:
            return NEVER_GENERATED
        return found if isinstance(found, str) else None

    # -- determinism and files --------------------------------------------------------
    @property
    def seed(self) -> int:
        return self.settings.evaluation.seed

    def rng(self, *keys: str) -> random.Random:
        """A generator seeded by the run seed and ``keys``: the same in every process."""
        digest = hashlib.sha256("\x1f".join((str(self.seed), *keys)).encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    @property
    def work_dir(self) -> Path:
        """This session's directory for artefacts that are not rows (a vector index, say),
        made on first use: ``work/<run id>/<session id>`` of the output directory. Two
        sessions of one configuration on one output folder never share one, half built
        (its xdist workers share their session's); the controller removes it when the
        session ends (``engine/work_dir.py``)."""
        path = session_work_dir(self.settings, self.run_id, self.session)
        path.mkdir(parents=True, exist_ok=True)
        return path


def session_work_dir(settings: Settings, run_id: str, session: str) -> Path:
    """Where ``RunContext.work_dir`` is for ``session`` (its token): its first 12 hex
    digits, as the session's run id; ``local`` for a context made outside a session."""
    return settings.output_dir / "work" / run_id / (session[:12] or "local")
