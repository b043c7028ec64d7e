"""What an evaluator sees of a run: settings, store, units, models and summaries.

Built once per process (the controller, and each xdist worker) from the store, which is
the only channel between them; nothing here is held in globals.
"""

from __future__ import annotations

import hashlib
import random
from functools import cached_property
from pathlib import Path

from .progress import Progress
from .schemas import CodeUnit, GeneratedSummary, ModelConfig
from .settings import Settings
from .store import Store


class RunContext:
    """The run's shared, read-mostly state."""

    def __init__(self, settings: Settings, store: Store, run_id: str,
                 progress: Progress | None = None) -> None:
        self.settings = settings
        self.store = store
        self.run_id = run_id
        self.progress = progress or Progress()
        """Where long phases (embedding, model calls) report; stderr by default."""

    # -- units ------------------------------------------------------------------------
    @cached_property
    def all_units(self) -> list[CodeUnit]:
        """Every extracted unit of the codebase (distractor and index candidates)."""
        return self.store.load_units(self.run_id)

    @cached_property
    def _by_id(self) -> dict[str, CodeUnit]:
        return {u.id: u for u in self.all_units}

    @cached_property
    def units(self) -> list[CodeUnit]:
        """The sampled units under evaluation, in a stable order."""
        return [self._by_id[i] for i in self.store.sampled_unit_ids(self.run_id)]

    def unit(self, unit_id: str) -> CodeUnit:
        return self._by_id[unit_id]

    @staticmethod
    def unit_label(unit: CodeUnit) -> str:
        """A readable, -k friendly label: ``language-path-name``."""
        name = unit.name if unit.type != "file" else "file"
        return f"{unit.language}-{unit.path}-{name}".replace(" ", "_")

    # -- models and summaries ---------------------------------------------------------
    @cached_property
    def models(self) -> list[ModelConfig]:
        """Models under test (all configured ones unless ``restrict_models`` narrowed them)."""
        return self.settings.test_models()

    def restrict_models(self, model_ids: set[str]) -> None:
        """Limit generation and preparation to these models (e.g. those ``-k`` selected)."""
        self.__dict__["models"] = [m for m in self.settings.test_models() if m.id in model_ids]

    @cached_property
    def judges(self) -> list[ModelConfig]:
        return self.settings.judge_models()

    @cached_property
    def _summaries(self) -> dict[tuple[str, str], GeneratedSummary | str]:
        return self.store.run_summaries(self.run_id)

    def summary(self, unit_id: str, model_id: str) -> GeneratedSummary | None:
        """The summary the run uses for this unit and model, None if generation failed."""
        found = self._summaries.get((unit_id, model_id))
        return found if isinstance(found, GeneratedSummary) else None

    def summary_error(self, unit_id: str, model_id: str) -> str | None:
        found = self._summaries.get((unit_id, model_id))
        if found is None:
            return "no summary was generated for this unit and model"
        return found if isinstance(found, str) else None

    def refresh(self) -> None:
        """Forget cached store reads (after the controller generated summaries)."""
        for name in ("all_units", "_by_id", "units", "_summaries"):
            self.__dict__.pop(name, None)

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
        """Per-run directory for artefacts that are not rows (a vector index, say)."""
        path = self.settings.output_dir / "work" / self.run_id
        path.mkdir(parents=True, exist_ok=True)
        return path
