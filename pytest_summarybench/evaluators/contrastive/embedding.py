"""``contrastive/embedding`` (docs/methods.md#contrastive-embedding): does the summary's embedding
sit closer to its own code than to the distractors' code?

``prepare`` (controller) embeds every unit's code and every summary into the store's
embedding cache and selects the distractor sets; ``evaluate`` (any worker) only reads them.

Metrics: ``correct`` (1.0 when the target ranks first), ``predicted_rank`` (1 = first) and
``confidence_gap`` (the spec's difference between the two best similarities). Ties follow
the rule of ``stats/ir.py``: a target tied with k others for first scores ``correct``
1/(k+1) and the expected rank; cosines within 1e-6 count as tied (float32 noise).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ..base import Component
from .base import ContrastiveEvaluator
from .distractors import code_text

if TYPE_CHECKING:
    from ...context import RunContext
    from ...schemas import ScoreRecord
    from ..base import MatrixItem

TIE_TOLERANCE = 1e-6


class ContrastiveEmbedding(ContrastiveEvaluator):
    """Rank the target's code among distractors by cosine to the summary."""

    name: ClassVar[str] = "contrastive/embedding"
    family: ClassVar[str] = "contrastive"
    method: ClassVar[str] = "embedding"
    """Its name in ``evaluation.contrastive.methods`` and in each record's details."""
    components: ClassVar[tuple[Component, ...]] = (
        Component("correct", "embedding", "embedding contrastive accuracy"),)

    def requested(self, ctx: RunContext) -> bool:
        return self.method in ctx.settings.evaluation.contrastive.methods

    def skip_reason(self, ctx: RunContext) -> str | None:
        if not self.requested(ctx):
            return (f"evaluation.contrastive.methods does not include '{self.method}' "
                    f"(it is {ctx.settings.evaluation.contrastive.methods})")
        return None

    def prepare(self, ctx: RunContext) -> None:
        super().prepare(ctx)
        self.embed_summaries(ctx)

    def embed_summaries(self, ctx: RunContext) -> None:
        """Every summary into the embedding cache (workers only read it)."""
        self.embedder(ctx).embed(sorted({s.summary for u in ctx.units for m in ctx.models
                                         if (s := ctx.summary(u.id, m.id)) is not None}),
                                 what="summaries")

    def evaluate(self, item: MatrixItem, ctx: RunContext) -> list[ScoreRecord]:
        from ...schemas import ScoreRecord
        from ...stats.ir import target_ranking

        summary = self.summary(item, ctx)
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
            details={"method": self.method, "embeddingModel": embedder.name,
                     "summaryId": summary.id, "options": len(candidates),
                     "targetSimilarity": round(sims[0], 6),
                     "margin": round(sims[0] - max(sims[1:], default=0.0), 6),
                     # What the explorer shows: the summary's cosine to each option (the
                     # target first, then ``distractorIds``) and the option it is nearest
                     # (the target when tied for first).
                     "summarySimilarities": [round(s, 4) for s in sims],
                     "picked": candidates[_nearest(sims)].id,
                     **dset.details()})]


def _nearest(sims: list[float]) -> int:
    """The position of the highest similarity; the target (position 0) when it is tied
    for first within ``TIE_TOLERANCE``."""
    best = max(range(len(sims)), key=lambda i: (sims[i], -i))
    return 0 if sims[0] >= sims[best] - TIE_TOLERANCE else best
