"""A run's distractor sets: selected once (controller) by the configured search, stored,
and read by every process. ``distractorSearch: exact`` selects with ``distractors.py``'s
pool over every unit's vector; ``candidates`` (the default) with ``candidates.py``
(docs/methods.md#semantic-candidates)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING

from .candidates import RANKING_WINDOWS, select_sampled
from .distractors import CandidatePool, DistractorSet, code_text

if TYPE_CHECKING:
    import threading

    from ...context import RunContext
    from ...embeddings import Embedder


def sets_key(ctx: RunContext, embedder_key: str) -> str:
    """What the stored sets of a run depend on besides the run: the model, the count, the
    seed and the search (the exact method's key is the one it always had)."""
    section = ctx.settings.evaluation.contrastive
    key = f"{embedder_key}|n{section.distractors}|s{ctx.seed}"
    if section.distractor_search == "candidates":
        return f"v5|{key}|c{section.candidates_per_target}|w{RANKING_WINDOWS}"
    return f"v2|{key}"


def embed_codebase(ctx: RunContext, embedder: Embedder, stop: threading.Event) -> None:
    """``ensure_distractor_sets`` ahead of the evaluators' ``prepare`` (their ``warm_up``):
    nothing when this run's sets are all stored. The exact method embeds every unit's
    code into the cache; the default one selects and stores the sets themselves."""
    existing = load_distractor_sets(ctx, embedder.backend.cache_key)
    if all(u.id in existing for u in ctx.units):
        return
    if ctx.settings.evaluation.contrastive.distractor_search == "candidates":
        ensure_distractor_sets(ctx, embedder, stop)
        return
    embedder.fill([code_text(u) for u in ctx.all_units], what="code", stop=stop)


def ensure_distractor_sets(ctx: RunContext, embedder: Embedder,
                           stop: threading.Event | None = None) -> dict[str, DistractorSet]:
    """Select and store the sets of every sampled unit (controller; idempotent). With
    ``stop`` (the warm-up), it may return early, storing nothing."""
    existing = load_distractor_sets(ctx, embedder.backend.cache_key)
    missing = [u for u in ctx.units if u.id not in existing]
    if not missing:
        return existing
    section = ctx.settings.evaluation.contrastive
    count = section.distractors
    if section.distractor_search == "candidates":
        found = select_sampled(ctx, embedder, missing, count, section.candidates_per_target,
                               stop)
        if found is None:
            return existing
        fresh = found
    else:
        vectors = embedder.embed([code_text(u) for u in ctx.all_units], what="code")
        pool = CandidatePool(ctx.all_units, vectors)
        fresh = pool.select_many(missing, count, ctx)
    ctx.store.distractors.save(ctx.run_id, sets_key(ctx, embedder.backend.cache_key),
                               {uid: json.dumps(asdict(s)) for uid, s in fresh.items()})
    return {**existing, **fresh}


def load_distractor_sets(ctx: RunContext, embedder_key: str) -> dict[str, DistractorSet]:
    """The stored sets of this run (workers read these)."""
    rows = ctx.store.distractors.load(ctx.run_id, sets_key(ctx, embedder_key))
    return {uid: DistractorSet(**json.loads(text)) for uid, text in rows.items()}
