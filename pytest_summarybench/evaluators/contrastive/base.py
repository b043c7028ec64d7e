"""The contrastive family's base: what both contrastive evaluators share (their items,
the embedder the distractors are chosen with, and the distractor sets, selected in
``prepare`` and read anywhere)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ..base import EvaluationError, Evaluator, MatrixItem, unit_items
from .distractors import DistractorSet, code_text, matchable_unit_ids
from .options import distinct_options
from .sets import embed_codebase, ensure_distractor_sets, load_distractor_sets, set_name

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Iterable

    from ...context import RunContext
    from ...embeddings import Embedder
    from ...schemas import GeneratedSummary


class ContrastiveEvaluator(Evaluator):
    """What both contrastive evaluators share: their items, the embedder the distractors
    are chosen with, and the distractor sets (selected in ``prepare``, read anywhere)."""

    name: ClassVar[str]
    prepare_reads_summaries: ClassVar[bool] = False  # the sets are chosen from the code

    def __init__(self) -> None:
        self._embedder: Embedder | None = None
        self._sets: dict[str, DistractorSet] | None = None

    def items(self, ctx: RunContext) -> list[MatrixItem]:
        matchable = matchable_unit_ids(ctx)
        return [it for it in unit_items(self, ctx) if it.unit_id in matchable]

    def embedder(self, ctx: RunContext) -> Embedder:
        if self._embedder is None:
            from ...embeddings import get_embedder

            self._embedder = get_embedder(ctx.settings.evaluation.contrastive.embedding_model,
                                          ctx.store, ctx.progress)
        return self._embedder

    def warm_up(self, ctx: RunContext, stop: threading.Event,
                publish: Callable[[Iterable[str]], None]) -> None:
        """The distractor sets, stored and published step by step (``set_name``; with
        the exact search, every unit's code into the embedding cache for ``prepare``),
        unless this run's sets are already stored."""
        embed_codebase(ctx, self.embedder(ctx), stop, publish)

    def requests_read(self, item: MatrixItem, ctx: RunContext) -> str | None:
        """The item's unit's distractor set, as the warm-up publishes it."""
        return set_name(item.unit_id)

    def prepare(self, ctx: RunContext) -> None:
        self._sets = ensure_distractor_sets(ctx, self.embedder(ctx))

    def distractor_set(self, ctx: RunContext, unit_id: str) -> DistractorSet:
        if self._sets is None or unit_id not in self._sets:
            self._sets = load_distractor_sets(ctx, self.embedder(ctx).backend.cache_key)
        found = self._sets.get(unit_id)
        if found is None:
            raise EvaluationError(f"no distractor set for unit {unit_id}: the controller's "
                                  f"prepare step did not run for this run ({ctx.run_id})")
        return distinct_options(found, lambda uid: code_text(ctx.unit(uid)))

    @staticmethod
    def summary(item: MatrixItem, ctx: RunContext) -> GeneratedSummary:
        """The item's summary, or the EvaluationError saying why there is none."""
        found = ctx.summary(item.unit_id, item.model_id)
        if found is None:
            raise EvaluationError(ctx.summary_error(item.unit_id, item.model_id)
                                  or "no summary")
        return found
