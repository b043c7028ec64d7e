"""Distractor selection whose cost follows the sample (``distractorSearch: candidates``, the
default; docs/evaluators.md).

The tiers are those of ``distractors.py`` (same file, similar signature, semantic band,
random padding), and so are the draws: only the semantic tier's candidates are found
differently. The exact method puts every unit of the codebase through the evaluation
model to compare each target with all of them; here a cheap stage ranks each target's
group (same language and type) by static vectors distilled from the shipped model
(``embeddings/static.py``: a tokenizer pass per unit), and the evaluation model embeds the
targets and their ``candidatesPerTarget`` best candidates only. The band (cosine in
(0.5, 0.95)) and the order within it are the evaluation model's, as in the exact method;
a unit the cheap stage ranked below the cut never enters the band. So the model's work is
about ``sample x (candidatesPerTarget + distractors)`` texts, whatever the codebase's size,
and the cheap stage reads each unit of a target's group once, streamed from the store.

How close this comes to the exact method (the difficulty of the sets, the scores, the
share of the exact tier recovered) is measured by ``benchmarks/perf/distractor_search.py``
(docs/performance.md).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from ...core.errors import RunError
from ...core.heap import release_freed_memory
from .distractors import SEMANTIC_BAND, DistractorSet, Features, _Band, _Group, features_of

if TYPE_CHECKING:
    import threading

    from ...context import RunContext
    from ...core.progress import Phase
    from ...embeddings import Embedder
    from ...embeddings.base import Matrix
    from ...embeddings.static import StaticVectors
    from ...schemas import CodeUnit

#: Windows (``embeddings/minilm.py``) of each unit that rank a shortlist cut from a group
#: larger than ``candidatesPerTarget``; the targets and the distractors picked are then
#: embedded whole (the window already run is not run again: the model's window memo). A
#: group no larger keeps whole vectors throughout (the exact method's sets). Measured on
#: the 1k and 50k codebases: docs/performance.md, "Distractor search, third pass".
RANKING_WINDOWS = 1
#: Word pieces of each ranking window (None: the model's ``WINDOW``). Measured at 126
#: (128 with ``[CLS]`` and ``[SEP]``) with 50 candidates: tier-3 mean cosine 0.026 below
#: the exact method's on the 1k codebase, over the 0.02 bar (docs/performance.md).
RANKING_PIECES: int | None = None
#: Units read from the store at a time by the cheap stage, each with its whole code (of
#: which it keeps a prefix): 8 units of 250 KB are 2 MB, where the store's default
#: chunk of 1,000 held a whole group of such units (75 MB for 300).
_READ_ROWS = 8
#: Targets compared with their group per matrix product, and units per slice of the
#: group (together they bound the product's memory: 64 x 16,384 cosines).
_BLOCK = 64
_COLUMNS = 16_384
#: Units whose vectors are made float32 at a time for the product (a 16,384-unit slice
#: at once was 25 MB).
_CAST = 2_048


class _Stopped(RunError):
    """The warm-up was told to stop (never leaves this module)."""


def select_sampled(ctx: RunContext, embedder: Embedder, targets: list[CodeUnit], count: int,
                   per_target: int, stop: threading.Event | None = None
                   ) -> dict[str, DistractorSet] | None:
    """The distractor sets of ``targets`` (None: ``stop`` was set before the end).

    Three steps over all the targets' groups, each one progress phase: the cheap stage
    (every unit of those groups once), the evaluation model on the targets and their
    shortlists, then on the distractors the other tiers drew."""
    from ...embeddings.minilm import shared_backend
    from ...embeddings.static import StaticVectors

    static = StaticVectors(shared_backend(), ctx.store)
    by_group: dict[tuple[str, str], list[CodeUnit]] = {}
    for t in targets:
        by_group.setdefault((t.language, t.type), []).append(t)
    lists: list[tuple[_Group, list[int], dict[int, list[int]]]] = []
    total = sum(ctx.unit_groups.get(key, 0) for key in by_group)
    shared: dict[Any, Any] = {}  # equal paths and signature shapes: one object each
    try:
        with ctx.progress.phase("summarybench distractor candidates (static vectors)", total,
                                unit="unit") as phase:
            for (language, kind), members in sorted(by_group.items()):
                # A group no larger than a shortlist is every target's shortlist: the
                # model ranks it whole, in any order, so it needs no static vectors.
                cut = ctx.unit_groups.get((language, kind), 0) - 1 > per_target
                ids, paths, features, cheap = _read_group(
                    ctx, static if cut else None, language, kind, stop, phase, shared)
                where = {uid: pos for pos, uid in enumerate(ids)}
                rows = [where[t.id] for t in members]
                lists.append((_Group(ids, paths, features, None), rows,
                              _shortlist(cheap, rows, per_target) if cheap is not None
                              else {pos: [p for p in range(len(ids)) if p != pos]
                                    for pos in rows}))
                del cheap
                release_freed_memory()  # this group's texts and products, before the next
        model = _ModelVectors(ctx, embedder, stop)
        ranker = _ranking_vectors(ctx, embedder, stop) or model

        def whole(group: _Group) -> bool:
            """The shortlists are the whole group (every other unit)."""
            return len(group.ids) - 1 <= per_target

        for vectors, wanted in ((model, True), (ranker, False)):
            vectors.need([g.ids[p] for g, rows, short in lists if whole(g) is wanted
                          for pos in rows for p in (pos, *short[pos])])
        lo, hi = SEMANTIC_BAND
        picks: list[tuple[_Group, int, list[int], list[int]]] = []
        for group, rows, short in lists:
            ranking = model if whole(group) else ranker
            for pos in rows:
                cands = short[pos]
                sims = ranking.cosines(group.ids[pos], [group.ids[c] for c in cands])
                ranked = sorted((-s, c) for s, c in zip(sims, cands, strict=True)
                                if lo < s < hi)
                band = _Band([c for _, c in ranked], complete=True)
                chosen, tiers = group.pick(pos, count, ctx.rng("distractors", group.ids[pos]),
                                           band)
                picks.append((group, pos, chosen, tiers))
        model.need([g.ids[p] for g, pos, chosen, _ in picks for p in (pos, *chosen)])
    except _Stopped:
        return None
    finally:
        release_freed_memory()  # the groups' code, read and freed
    return {group.ids[pos]: group.distractor_set(
                pos, chosen, tiers, model.cosines(group.ids[pos], [group.ids[p] for p in chosen]))
            for group, pos, chosen, tiers in picks}


def _read_group(ctx: RunContext, static: StaticVectors | None, language: str, kind: str,
                stop: threading.Event | None, phase: Phase, shared: dict[Any, Any]
                ) -> tuple[list[str], list[str], list[Features | None], Matrix | None]:
    """The group's ids, paths and signature features, and each unit's static vector
    (float16; None without ``static``), from one pass over the store. Units come sorted
    by id, a hash, so the first ones are a fair sample to weigh the word pieces on
    (``StaticVectors.fit``)."""
    import numpy as np

    from ...embeddings.static import DF_SAMPLE, DIM

    ids: list[str] = []
    paths: list[str] = []
    features: list[Features | None] = []
    # Filled in place as the units come (the store counted the group): no list of
    # parts and then a copy of them all, which held the group's vectors twice (76 MB at
    # the peak for a group of 50,000 units instead of 38).
    counted = ctx.unit_groups.get((language, kind), 0) if static is not None else 0
    cheap = np.empty((counted, DIM), dtype=np.float16)
    done = 0
    held: list[Any] = []  # word pieces (int32), tokenized once for weights and vectors
    fitted = False

    def add(vectors: Matrix) -> None:
        nonlocal cheap, done
        if done + len(vectors) > len(cheap):  # more units than counted: grow
            grown = np.empty((done + len(vectors), DIM), dtype=np.float16)
            grown[:done] = cheap[:done]
            cheap = grown
        cheap[done:done + len(vectors)] = vectors
        done += len(vectors)

    for chunk in ctx.store.group_units(ctx.run_id, language, kind, size=_READ_ROWS):
        if stop is not None and stop.is_set():
            raise _Stopped
        for uid, path, params, signature, returns, _ in chunk:
            ids.append(uid)
            # One object per distinct path (a file's units are in several groups) and per
            # distinct signature shape (a few dozen in a group): a new frozenset per unit
            # held some 16 MB for a group of 50,000 units, kept until every group is read.
            paths.append(shared.setdefault(path, path))
            shape = None if not signature else features_of(
                None if params is None else [p.get("type") for p in json.loads(params)],
                signature, returns)
            features.append(shared.setdefault(shape, shape))
        if static is None:
            phase.advance(len(chunk))
            continue
        # Held until the word pieces are weighed: each unit's pieces (at most 2,032, as
        # int32: 8 KB), not its code, tokenized once (it was three times: to clip the
        # code, to weigh the pieces and to embed; the tokenizer was 80% of this stage).
        held.extend(np.asarray(ids, dtype=np.int32) for ids in
                    static.backend.pieces([row[5] or "" for row in chunk]))
        if not fitted and len(held) < DF_SAMPLE:
            continue
        if not fitted:
            static.fit_pieces(held[:DF_SAMPLE])
            fitted = True
        add(static.embed_pieces(held))
        phase.advance(len(held))
        held = []
    if static is None:
        return ids, paths, features, None
    if not fitted:
        static.fit_pieces(held)
    if held:
        add(static.embed_pieces(held))
        phase.advance(len(held))
    return ids, paths, features, cast("Matrix", cheap[:done])  # float16, as before


def _shortlist(cheap: Matrix, rows: list[int], per_target: int) -> dict[int, list[int]]:
    """Each target's ``per_target`` nearest units by the cosine of the centred static
    vectors (itself excluded), nearest first (equal cosines by position). Centred: the
    group's mean vector taken off each, as averaged word vectors share one large common
    direction that long units lie nearest (plain cosines made them everybody's
    neighbours: docs/methods.md#semantic-candidates). The float16 vectors are compared a slice
    of ``_COLUMNS`` units at a time, keeping each target's best so far, so that no float32
    copy of the whole group is made."""
    import numpy as np

    n = cheap.shape[0]
    k = min(per_target, n - 1)
    if k <= 0:
        return {pos: [] for pos in rows}
    center = _mean(cheap)
    out: dict[int, list[int]] = {}
    for start in range(0, len(rows), _BLOCK):
        block = rows[start:start + _BLOCK]
        queries = _centered(cheap[block], center)
        best_sim = np.full((len(block), 0), -np.inf, dtype=np.float32)
        best_pos = np.zeros((len(block), 0), dtype=np.int64)
        for first in range(0, n, _COLUMNS):
            width = min(_COLUMNS, n - first)
            # float32 copies of a few columns at a time, not of the whole slice
            sims = np.empty((len(block), width), dtype=np.float32)
            for a in range(0, width, _CAST):
                b = min(a + _CAST, width)
                np.matmul(queries, _centered(cheap[first + a:first + b], center).T,
                          out=sims[:, a:b])
            cols = np.arange(first, first + width)
            mine = np.flatnonzero((np.asarray(block) >= first)
                                  & (np.asarray(block) < first + width))
            sims[mine, np.asarray(block)[mine] - first] = -np.inf  # not itself
            merged_sim = np.concatenate([best_sim, sims], axis=1)
            merged_pos = np.concatenate([best_pos, np.broadcast_to(cols, sims.shape)],
                                        axis=1)
            if merged_sim.shape[1] > k:
                keep = np.argpartition(-merged_sim, k - 1, axis=1)[:, :k]
                merged_sim = np.take_along_axis(merged_sim, keep, axis=1)
                merged_pos = np.take_along_axis(merged_pos, keep, axis=1)
            best_sim, best_pos = merged_sim, merged_pos
        for i, pos in enumerate(block):
            order = np.lexsort((best_pos[i], -best_sim[i]))
            out[pos] = [int(p) for p in best_pos[i][order] if p != pos]
    return out


def _mean(cheap: Matrix) -> Matrix:
    """The mean of the group's static vectors (float32, ``_CAST`` rows at a time)."""
    import numpy as np

    total = np.zeros(cheap.shape[1], dtype=np.float64)
    for a in range(0, cheap.shape[0], _CAST):
        total += cheap[a:a + _CAST].astype(np.float32).sum(axis=0)
    return (total / max(cheap.shape[0], 1)).astype(np.float32)


def _centered(rows: Matrix, center: Matrix) -> Matrix:
    """``rows`` (float16) as float32, less the group's mean, at unit length."""
    import numpy as np

    out = rows.astype(np.float32)
    out -= center
    norms = np.sqrt(np.einsum("ij,ij->i", out, out))  # no squared copy of the rows
    out /= np.clip(norms, 1e-12, None)[:, None]
    return out


def _ranking_vectors(ctx: RunContext, embedder: Embedder,
                     stop: threading.Event | None) -> _ModelVectors | None:
    """The vectors that rank the shortlists of groups larger than ``candidatesPerTarget``:
    the evaluation model's over the first ``RANKING_WINDOWS`` windows of each unit (a
    model that embeds in windows, builtin/minilm); None (the full vectors) for others."""
    from ...embeddings import Embedder

    backend = embedder.backend
    limited = getattr(backend, "with_windows", None)
    if limited is None or (getattr(backend, "max_windows", 0) <= RANKING_WINDOWS
                           and RANKING_PIECES is None):
        return None
    first = (limited(RANKING_WINDOWS) if RANKING_PIECES is None
             else limited(RANKING_WINDOWS, RANKING_PIECES))
    return _ModelVectors(ctx, Embedder(first, ctx.store, embedder.progress), stop,
                         what=f"candidates' first {first.max_pieces} word pieces")


class _ModelVectors:
    """The evaluation model's vectors of units, by id, embedded when first needed
    (through the embedder's cache: a re-run embeds nothing). The units' code is read
    from the store a few units at a time (``Embedder.embed_read``), never all at once."""

    def __init__(self, ctx: RunContext, embedder: Embedder,
                 stop: threading.Event | None, what: str = "code") -> None:
        self._ctx = ctx
        self._embedder = embedder
        self._stop = stop
        self._what = what
        self._vectors: dict[str, Matrix] = {}

    def need(self, ids: list[str]) -> None:
        import numpy as np

        wanted = sorted({uid for uid in ids if uid not in self._vectors})
        if not wanted:
            return
        found = self._embedder.embed_read(wanted, self._ctx.store.unit_contents,
                                          what=self._what, stop=self._stop)
        if found is None:
            raise _Stopped
        for uid, v in found.items():
            self._vectors[uid] = np.asarray(v, dtype=np.float32)

    def cosines(self, target: str, others: list[str]) -> list[float]:
        """Cosine of each of ``others`` to ``target`` (the vectors are unit length)."""
        import numpy as np

        if not others:
            return []
        return [float(x) for x in np.stack([self._vectors[o] for o in others])
                @ self._vectors[target]]
