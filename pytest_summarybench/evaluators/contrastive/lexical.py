"""``contrastive/lexical``: the cosine ranking of docs/methods.md#contrastive-embedding,
against distractors chosen to share the target's identifiers.

Why: with the spec's tiers (same file, signature, embedding neighbours, random) a summary
that copies the code's identifiers picks its code out of the distractors by the copied
words alone, so a bag of identifiers ranks first (docs/validity.md, "External validity":
Kendall's tau with real-query retrieval +0.53 with docstrings on CoSQA's dev queries). When
every distractor uses most of the target's identifier words, copied words stop telling the
target apart and the summary has to say what the code does. Chosen on CoSQA's dev queries
(tau +0.80 present, +1.00 stripped); on the held-out sets it did not validate (CoSQA test
+0.40 / +0.56, NCS Android +0.80 / +0.78), so it is not the default.

Selection: for each sampled unit, the ``distractors`` units of the same language and type
whose identifier words (``generate.builtin.identifier_words``, what ``builtin/identifiers``
is made of, uncapped) have the highest Jaccard overlap with the target's;
ties go to the unit ranked first by a seeded shuffle, and units with the same content as
the target are never chosen. Computed as one sparse product per block of targets, so a
codebase of n units costs about (sampled units x n) overlaps, not n x n.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, ClassVar

from ...generate.builtin import identifier_words
from ..base import Component, EvaluationError
from .distractors import DistractorSet, difficulty
from .embedding import ContrastiveEmbedding

if TYPE_CHECKING:
    from collections.abc import Callable
    from random import Random

    from ...context import RunContext
    from ...embeddings import Embedder
    from ...schemas import CodeUnit

#: ``DistractorSet.tiers`` of a lexical distractor.
SHARED_IDENTIFIERS_TIER = 5
_BLOCK = 256


def select_lexical(targets: list[CodeUnit], units: list[CodeUnit], count: int,
                   rng: Callable[[str], Random]) -> dict[str, DistractorSet]:
    """Each target's ``count`` distractors of its language and type among ``units``, by
    identifier-word Jaccard overlap (``rng(target id)`` orders the ties). The sets'
    code similarities are left empty (``ContrastiveLexical`` fills them in)."""
    import numpy as np
    from scipy import sparse

    groups: dict[tuple[str, str], list[CodeUnit]] = {}
    for u in units:
        groups.setdefault((u.language, u.type), []).append(u)
    out: dict[str, DistractorSet] = {}
    for key, members in groups.items():
        members = sorted(members, key=lambda u: u.id)
        mine = [t for t in targets if (t.language, t.type) == key]
        if not mine:
            continue
        vocab: dict[str, int] = {}
        rows = [[vocab.setdefault(w, len(vocab)) for w in sorted(identifier_words(u))]
                for u in members]
        indptr = np.cumsum([0, *(len(r) for r in rows)])
        cols = [c for r in rows for c in r]
        pool = sparse.csr_matrix((np.ones(len(cols)), cols, indptr),
                                 shape=(len(rows), max(len(vocab), 1)))
        sizes = np.asarray(pool.sum(axis=1)).ravel()
        where = {u.id: i for i, u in enumerate(members)}
        for start in range(0, len(mine), _BLOCK):
            block = mine[start:start + _BLOCK]
            pos = [where[t.id] for t in block]
            inter = (pool[pos] @ pool.T).toarray()
            union = sizes[pos][:, None] + sizes[None, :] - inter
            jaccard = np.where(union > 0, inter / np.maximum(union, 1), 0.0)
            for row, target in zip(jaccard, block, strict=True):
                order = list(range(len(members)))
                rng(target.id).shuffle(order)
                ranked = sorted(order, key=lambda i: -row[i])
                picks = [members[i] for i in ranked
                         if members[i].content != target.content][:count]
                out[target.id] = DistractorSet(
                    target_id=target.id, distractor_ids=[p.id for p in picks],
                    tiers=[SHARED_IDENTIFIERS_TIER] * len(picks), difficulty="easy")
    return out


class ContrastiveLexical(ContrastiveEmbedding):
    """Rank the target's code by cosine to the summary among distractors that share the
    target's identifiers."""

    name: ClassVar[str] = "contrastive/lexical"
    method: ClassVar[str] = "lexical"
    components: ClassVar[tuple[Component, ...]] = (
        Component("correct", "lexical", "lexical contrastive accuracy"),)

    def prepare(self, ctx: RunContext) -> None:
        self._sets = self._ensure_sets(ctx, self.embedder(ctx))
        self.embed_summaries(ctx)

    def distractor_set(self, ctx: RunContext, unit_id: str) -> DistractorSet:
        if self._sets is None or unit_id not in self._sets:
            self._sets = self._load(ctx, self.embedder(ctx))
        found = self._sets.get(unit_id)
        if found is None:
            raise EvaluationError(f"no lexical distractor set for unit {unit_id}: the "
                                  f"controller's prepare step did not run for this run "
                                  f"({ctx.run_id})")
        from .distractors import code_text
        from .options import distinct_options

        return distinct_options(found, lambda uid: code_text(ctx.unit(uid)))

    @staticmethod
    def _key(ctx: RunContext, embedder: Embedder) -> str:
        return (f"lexical-v1|{embedder.backend.cache_key}"
                f"|n{ctx.settings.evaluation.contrastive.distractors}|s{ctx.seed}")

    def _load(self, ctx: RunContext, embedder: Embedder) -> dict[str, DistractorSet]:
        rows = ctx.store.distractors.load(ctx.run_id, self._key(ctx, embedder))
        return {uid: DistractorSet(**json.loads(text)) for uid, text in rows.items()}

    def _ensure_sets(self, ctx: RunContext, embedder: Embedder) -> dict[str, DistractorSet]:
        from .distractors import code_text

        existing = self._load(ctx, embedder)
        missing = [u for u in ctx.units if u.id not in existing]
        if not missing:
            return existing
        fresh = select_lexical(missing, ctx.all_units,
                               ctx.settings.evaluation.contrastive.distractors,
                               lambda uid: ctx.rng("lexical-distractors", uid))
        # The cosine of each distractor's code to the target's, for the details and the
        # difficulty, as the spec's sets record it.
        wanted = sorted({code_text(ctx.unit(i)) for s in fresh.values()
                         for i in (s.target_id, *s.distractor_ids)})
        vectors = dict(zip(wanted, embedder.embed(wanted, what="code"), strict=True))
        for uid, s in fresh.items():
            target = vectors[code_text(ctx.unit(uid))]
            sims = [float(vectors[code_text(ctx.unit(d))] @ target) for d in s.distractor_ids]
            fresh[uid] = DistractorSet(uid, s.distractor_ids, s.tiers, difficulty(sims), sims)
        ctx.store.distractors.save(ctx.run_id, self._key(ctx, embedder),
                                   {uid: json.dumps(asdict(s)) for uid, s in fresh.items()})
        return {**existing, **fresh}
