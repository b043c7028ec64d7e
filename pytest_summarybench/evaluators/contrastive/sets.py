"""A run's distractor sets: selected once (controller) by the configured search, stored,
and read by every process. ``distractorSearch: exact`` selects with ``distractors.py``'s
pool over every unit's vector; ``candidates`` (the default) with ``candidates.py``
(docs/methods.md#semantic-candidates).

The default search stores and publishes the sets a few groups (language and type) at a
time, cheapest per target first, so that the contrastive-LLM calls of those groups start
while the next ones are searched (``Evaluator.requests_read``). A set depends on its
target, the seed and the codebase only, never on the order of the groups or on which of
them an earlier, interrupted session stored."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING

from .candidates import RANKING_WINDOWS, select_sampled
from .distractors import CandidatePool, DistractorSet, code_text

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Iterable

    from ...context import RunContext
    from ...embeddings import Embedder
    from ...schemas import CodeUnit

    Publish = Callable[[Iterable[str]], None]

#: Units the cheap stage reads (static vectors) for the work of one text through the
#: evaluation model, to weigh a group's cost when ordering them: 10,087 units in 2.4 s
#: against 243 s for all of them through the model (docs/performance.md).
CHEAP_PER_MODEL_TEXT = 100
#: Steps in which the sets are searched, stored and published (``groups_in_order``).
STEPS = 8


def sets_key(ctx: RunContext, embedder_key: str) -> str:
    """What the stored sets of a run depend on besides the run: the model, the count, the
    seed and the search (the exact method's key is the one it always had)."""
    section = ctx.settings.evaluation.contrastive
    key = f"{embedder_key}|n{section.distractors}|s{ctx.seed}"
    if section.distractor_search == "candidates":
        return f"v5|{key}|c{section.candidates_per_target}|w{RANKING_WINDOWS}"
    return f"v2|{key}"


def set_name(unit_id: str) -> str:
    """What is published once the distractor set of ``unit_id`` is stored."""
    return f"distractor set {unit_id}"


def embed_codebase(ctx: RunContext, embedder: Embedder, stop: threading.Event,
                   publish: Publish | None = None) -> None:
    """``ensure_distractor_sets`` ahead of the evaluators' ``prepare`` (their ``warm_up``),
    publishing the sets already stored at once: nothing more when they all are. The
    default search selects, stores and publishes the sets step by step
    (``groups_in_order``); the exact method embeds every unit's code into the cache, for
    ``prepare`` to select from."""
    existing = load_distractor_sets(ctx, embedder.backend.cache_key)
    if publish is not None:
        publish([set_name(uid) for uid in existing])
    if all(u.id in existing for u in ctx.units):
        return
    if ctx.settings.evaluation.contrastive.distractor_search == "candidates":
        ensure_distractor_sets(ctx, embedder, stop, publish)
        return
    embedder.fill([code_text(u) for u in ctx.all_units], what="code", stop=stop)


def ensure_distractor_sets(ctx: RunContext, embedder: Embedder,
                           stop: threading.Event | None = None,
                           publish: Publish | None = None) -> dict[str, DistractorSet]:
    """Select and store the sets of every sampled unit (controller; idempotent), and
    ``publish`` them as they are stored. With ``stop`` (the warm-up), it may return
    early, with the groups done so far stored."""
    existing = load_distractor_sets(ctx, embedder.backend.cache_key)
    missing = [u for u in ctx.units if u.id not in existing]
    if not missing:
        return existing
    section = ctx.settings.evaluation.contrastive
    count = section.distractors
    fresh: dict[str, DistractorSet] = {}
    if section.distractor_search == "candidates":
        for targets in groups_in_order(ctx, missing, section.candidates_per_target):
            found = select_sampled(ctx, embedder, targets, count,
                                   section.candidates_per_target, stop)
            if found is None:
                break
            _store(ctx, embedder, found, publish)
            fresh.update(found)
    else:
        vectors = embedder.embed([code_text(u) for u in ctx.all_units], what="code")
        pool = CandidatePool(ctx.all_units, vectors)
        fresh = pool.select_many(missing, count, ctx)
        _store(ctx, embedder, fresh, publish)
    return {**existing, **fresh}


def groups_in_order(ctx: RunContext, targets: list[CodeUnit], per_target: int
                    ) -> list[list[CodeUnit]]:
    """``targets`` in about ``STEPS`` steps of whole groups (language and type), stored and
    published one step at a time. The groups go cheapest per target first, so that the
    most sets are ready soonest (the calls that wait for them go as each step is
    stored); a step takes groups until it holds a ``STEPS``-th of the whole cost, so that
    a sample spread over many small groups is a few searches (and a few progress bars),
    not one per group. A group's cost: the texts the evaluation model embeds (each target
    with its ``per_target`` candidates, at most the whole group) and the units the cheap
    stage reads (the whole group). Equal costs keep the sample's order."""
    by_group: dict[tuple[str, str], list[CodeUnit]] = {}
    for t in targets:
        by_group.setdefault((t.language, t.type), []).append(t)

    def cost(members: list[CodeUnit]) -> float:
        size = ctx.unit_groups.get((members[0].language, members[0].type), len(members))
        return min(size, len(members) * (per_target + 1)) + size / CHEAP_PER_MODEL_TEXT

    groups = sorted(by_group.values(), key=lambda g: cost(g) / len(g))  # stable
    step_cost = sum(cost(g) for g in groups) / STEPS
    steps: list[list[CodeUnit]] = []
    held: list[CodeUnit] = []
    weight = 0.0
    for members in groups:
        held += members
        weight += cost(members)
        if weight >= step_cost:
            steps.append(held)
            held, weight = [], 0.0
    return [*steps, held] if held else steps


def _store(ctx: RunContext, embedder: Embedder, sets: dict[str, DistractorSet],
           publish: Publish | None) -> None:
    ctx.store.distractors.save(ctx.run_id, sets_key(ctx, embedder.backend.cache_key),
                               {uid: json.dumps(asdict(s)) for uid, s in sets.items()})
    if publish is not None:
        publish([set_name(uid) for uid in sets])


def load_distractor_sets(ctx: RunContext, embedder_key: str) -> dict[str, DistractorSet]:
    """The stored sets of this run (workers read these)."""
    rows = ctx.store.distractors.load(ctx.run_id, sets_key(ctx, embedder_key))
    return {uid: DistractorSet(**json.loads(text)) for uid, text in rows.items()}
