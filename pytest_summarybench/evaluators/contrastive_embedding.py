"""``contrastive/embedding`` (spec section 6.2): does the summary's embedding sit closer to
its own code than to the distractors' code?

``prepare`` (controller) embeds every unit's code and every summary into the store's
embedding cache and selects the distractor sets; ``evaluate`` (any worker) only reads them.

Metrics: ``correct`` (1.0 when the target ranks first), ``predicted_rank`` (1 = first) and
``confidence_gap`` (the spec's difference between the two best similarities). Ties follow
the rule of ``stats/ir.py``: a target tied with k others for first scores ``correct``
1/(k+1) and the expected rank; cosines within 1e-6 count as tied (float32 noise).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from .base import EvaluationError, MatrixItem, unit_items
from .distractors import (
    DistractorSet,
    code_text,
    ensure_distractor_sets,
    load_distractor_sets,
    matchable_unit_ids,
)

if TYPE_CHECKING:
    from ..context import RunContext
    from ..embeddings import Embedder
    from ..schemas import ScoreRecord

TIE_TOLERANCE = 1e-6


class ContrastiveEmbedding:
    """Rank the target's code among distractors by cosine to the summary."""

    name: ClassVar[str] = "contrastive/embedding"
    family: ClassVar[str] = "contrastive"

    def __init__(self) -> None:
        self._embedder: Embedder | None = None
        self._sets: dict[str, DistractorSet] | None = None

    def skip_reason(self, ctx: RunContext) -> str | None:
        if "embedding" not in ctx.settings.evaluation.contrastive.methods:
            return ("evaluation.contrastive.methods does not include 'embedding' "
                    f"(it is {ctx.settings.evaluation.contrastive.methods})")
        return None

    def items(self, ctx: RunContext) -> list[MatrixItem]:
        matchable = matchable_unit_ids(ctx)
        return [it for it in unit_items(self.name, ctx) if it.unit_id in matchable]

    def embedder(self, ctx: RunContext) -> Embedder:
        if self._embedder is None:
            from ..embeddings import get_embedder

            self._embedder = get_embedder(ctx.settings.evaluation.contrastive.embedding_model,
                                          ctx.store)
        return self._embedder

    def prepare(self, ctx: RunContext) -> None:
        embedder = self.embedder(ctx)
        self._sets = ensure_distractor_sets(ctx, embedder)
        embedder.embed(sorted({s.summary for u in ctx.units for m in ctx.models
                               if (s := ctx.summary(u.id, m.id)) is not None}))

    def distractor_set(self, ctx: RunContext, unit_id: str) -> DistractorSet:
        if self._sets is None or unit_id not in self._sets:
            self._sets = load_distractor_sets(ctx, self.embedder(ctx).backend.cache_key)
        found = self._sets.get(unit_id)
        if found is None:
            raise EvaluationError(f"no distractor set for unit {unit_id}: the controller's "
                                  f"prepare step did not run for this run ({ctx.run_id})")
        return found

    def evaluate(self, item: MatrixItem, ctx: RunContext) -> list[ScoreRecord]:
        from ..schemas import ScoreRecord
        from ..stats.ir import target_ranking

        summary = ctx.summary(item.unit_id, item.model_id)
        if summary is None:
            raise EvaluationError(ctx.summary_error(item.unit_id, item.model_id)
                                  or "no summary")
        dset = self.distractor_set(ctx, item.unit_id)
        candidates = [ctx.unit(item.unit_id), *(ctx.unit(d) for d in dset.distractor_ids)]
        texts = [summary.summary, *(code_text(c) for c in candidates)]
        embedder = self.embedder(ctx)
        vectors = embedder.cached(texts)
        if vectors is None:  # prepare embedded everything; this only runs if it did not
            vectors = embedder.embed(texts)
        sims = [float(x) for x in vectors[1:] @ vectors[0]]
        ranking = target_ranking(sims[0], sims[1:], tolerance=TIE_TOLERANCE)
        ordered = sorted(sims, reverse=True)
        gap = ordered[0] - ordered[1] if len(ordered) > 1 else ordered[0]
        rank = ranking.expected_rank() or float(len(sims))
        return [ScoreRecord(
            unit_id=item.unit_id, model_id=item.model_id, evaluator=self.name,
            metrics={"correct": ranking.hit_at(1), "predicted_rank": rank,
                     "confidence_gap": gap},
            details={"method": "embedding", "embeddingModel": embedder.name,
                     "summaryId": summary.id, "options": len(candidates),
                     "targetSimilarity": round(sims[0], 6),
                     "margin": round(sims[0] - max(sims[1:], default=0.0), 6),
                     **dset.details()})]
