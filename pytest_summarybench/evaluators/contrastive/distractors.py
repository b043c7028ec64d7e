"""Distractor selection (docs/methods.md#distractor-tiers), shared by both contrastive evaluators
(``base.ContrastiveEvaluator``).

For each sampled unit the controller picks, once per run, ``distractors`` other units of the
same language and type, in the spec's tiers: up to 3 from the same file (hardest), then
similar signatures (up to 6 in all), then code whose embedding is semantically similar but
not a near-copy (cosine in (0.5, 0.95)), then random padding. When a language and type have
fewer candidates than asked for, the set is smaller (the spec never crosses language or
type); the number of options is in every record's details. A unit that is the only one of
its language and type has no candidate at all, and is no contrastive item
(``matchable_unit_ids``): a "choice" among one option would score every summary correct.

The semantic tier is found in one of two ways (``evaluation.contrastive.distractorSearch``):
``exact``, this module, with every unit's code embedded by the evaluation model; or
``candidates`` (the default, ``candidates.py``), with the model's vectors of each target's
shortlist only. Both draw the other tiers the same way, with this module's ``_Group``.

Seeded by the run seed and the target's id, so a set does not change when the sample or the
model list does. Same-file units come from a map by path, similar signatures from
classes of equal signature features (similar classes found once per class), padding by
rejection sampling; the semantic tier from exact cosines (blocks of a matrix product, top-k
by ``argpartition``) in groups of up to ``EXACT_LIMIT`` units, and from a nearest-neighbour
index (HNSW, faiss, built once per group with one thread so that it is the same on every
run; its candidates re-scored exactly) in larger ones, so no target's work grows with its
group beyond that size. Selecting every unit of a 10,000-unit codebase grows about
linearly (docs/performance.md, "Growth").

Why faiss and not chromadb here: chromadb's HNSW (used for retrieval, where a collection is
queried, not compared across runs) returned other neighbours for the same vectors on
rebuilds (222 of 5,000 top-15 lists differed after exact re-scoring); distractor sets must
be reproducible from the seed.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from random import Random
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:

    from ...context import RunContext
    from ...embeddings.base import Matrix
    from ...schemas import CodeUnit

Difficulty = Literal["easy", "medium", "hard"]
SIMILAR_SIGNATURE = 0.7
SEMANTIC_BAND = (0.5, 0.95)
#: Difficulty from the mean cosine of the three distractors nearest the target's code.
HARD_AT, MEDIUM_AT = 0.75, 0.6

@dataclass(frozen=True)
class _Band:
    """A target's candidates with cosine in ``SEMANTIC_BAND``, best first."""

    ranked: list[int]
    complete: bool
    """No further candidate in the band could be needed."""


@dataclass(frozen=True)
class DistractorSet:
    """The spec's ``DistractorSet``, with the tier each distractor came from."""

    target_id: str
    distractor_ids: list[str]
    tiers: list[int]
    """1 same file, 2 similar signature, 3 semantic, 4 random; parallel to the ids."""
    difficulty: Difficulty
    similarities: list[float] = field(default_factory=list)
    """Cosine of each distractor's code to the target's, parallel to the ids."""

    def details(self) -> dict[str, Any]:
        return {"distractorIds": self.distractor_ids, "tiers": self.tiers,
                "difficulty": self.difficulty,
                "distractorSimilarities": [round(s, 4) for s in self.similarities]}


# -- signature similarity ---------------------------------------------------------------
def _split_params(signature: str) -> list[str]:
    """Top-level comma-separated items between the first ``(`` and its match."""
    start = signature.find("(")
    if start < 0:
        return []
    depth, current, items = 0, "", []
    for ch in signature[start + 1:]:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        items.append(current.strip())
    return items


Features = tuple[int, frozenset[str]]
"""(parameter count, typed-slot set) of a signature."""


def signature_features(unit: CodeUnit) -> Features:
    """(parameter count, typed-slot set) of a unit's signature.

    Types are compared as a multiset (each occurrence numbered) plus the return type; an
    undeclared type is ``?``, so in untyped code two signatures agree on arity alone.
    """
    meta = unit.metadata
    return features_of(None if meta.parameters is None else [p.type for p in meta.parameters],
                       meta.signature, meta.return_type)


def features_of(parameter_types: list[str | None] | None, signature: str | None,
                return_type: str | None) -> Features:
    """``signature_features`` from the metadata's fields (as the store holds them)."""
    if parameter_types is not None:
        types = [_norm_type(t) for t in parameter_types]
    else:
        types = ["?" for _ in _split_params(signature or "")]
    seen: dict[str, int] = {}
    slots = set()
    for t in types:
        seen[t] = seen.get(t, 0) + 1
        slots.add(f"{t}#{seen[t]}")
    if return_type:
        slots.add(f"->{_norm_type(return_type)}")
    return len(types), frozenset(slots)


def _norm_type(t: str | None) -> str:
    return re.sub(r"\s+", "", t).lower() if t else "?"


def signature_similarity(a: CodeUnit, b: CodeUnit) -> float:
    """The signature similarity of docs/methods.md#distractor-tiers: the mean of the
    parameter-count similarity and the type overlap (Jaccard)."""
    (na, sa), (nb, sb) = signature_features(a), signature_features(b)
    count_sim = 1 - abs(na - nb) / max(na, nb, 1)
    type_sim = len(sa & sb) / len(sa | sb) if sa | sb else 1.0
    return (count_sim + type_sim) / 2


# -- the candidate pool -----------------------------------------------------------------
#: A (language, type) group up to this size scores the semantic tier exactly (one
#: matrix-vector product and a sort per target); a larger group searches its nearest
#: neighbours in an HNSW index built once (faiss, one thread: the same graph every time),
#: then re-scores the returned candidates exactly.
EXACT_LIMIT = 2048
#: HNSW parameters of the semantic tier's index (faiss ``IndexHNSWFlat``).
HNSW_M, HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH = 16, 64, 48


class CandidatePool:
    """Every unit grouped by (language, type), laid out so that choosing one target's
    distractors costs the target's own file, its signature class and a few nearest
    neighbours, not a pass over the group.

    - tier 1: the group's positions by path;
    - tier 2: units with a signature grouped into classes of equal features (arity and
      typed slots); which classes are similar is computed once per class, vectorised
      over the group's classes, and a pick is drawn from the union of the similar
      classes without listing it;
    - tier 3: exact cosines for groups up to ``EXACT_LIMIT`` units, an HNSW index above;
    - tier 4: uniform draws from the group, rejecting units already taken.

    Picks are uniform without replacement within a tier and depend only on the run seed
    and the target's id (``select`` gives the same set whatever else is selected).
    """

    def __init__(self, units: list[CodeUnit], vectors: Matrix) -> None:
        import numpy as np

        self.units = units
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        order: dict[tuple[str, str], list[int]] = {}
        for i, u in enumerate(units):
            order.setdefault((u.language, u.type), []).append(i)
        self._groups: dict[tuple[str, str], _Group] = {}
        self._where: dict[str, tuple[_Group, int]] = {}
        for key, rows in order.items():
            rows.sort(key=lambda i: units[i].id)
            members = [units[i] for i in rows]
            group = _Group([u.id for u in members], [u.path for u in members],
                           [signature_features(u) if u.metadata.signature else None
                            for u in members], self._vectors[rows])
            self._groups[key] = group
            for pos, uid in enumerate(group.ids):
                self._where[uid] = (group, pos)

    def select(self, target: CodeUnit, count: int, ctx: RunContext) -> DistractorSet:
        """The distractor set of one target (docs/methods.md#distractor-tiers)."""
        return self.select_many([target], count, ctx)[target.id]

    def select_many(self, targets: list[CodeUnit], count: int,
                    ctx: RunContext) -> dict[str, DistractorSet]:
        """``select`` for many targets; nearest-neighbour searches are batched per group."""
        by_group: dict[int, list[int]] = {}
        groups: dict[int, _Group] = {}
        for target in targets:
            group, pos = self._where[target.id]
            groups[id(group)] = group
            by_group.setdefault(id(group), []).append(pos)
        out: dict[str, DistractorSet] = {}
        for gid, positions in by_group.items():
            group = groups[gid]
            neighbours = group.neighbours(positions, count)
            for pos in positions:
                uid = group.ids[pos]
                out[uid] = group.select(pos, count, ctx.rng("distractors", uid),
                                        neighbours[pos])
        return out


class _Group:
    """The candidates of one (language, type), sorted by id: their ids, paths and
    signature features (None: no signature), and their code's vectors when every one
    was embedded (the exact method; None otherwise)."""

    def __init__(self, ids: list[str], paths: list[str], features: list[Features | None],
                 vectors: Matrix | None) -> None:
        self.ids = ids
        self.paths = paths
        self._vectors = vectors
        self.by_path: dict[str, list[int]] = {}
        for pos, path in enumerate(paths):
            self.by_path.setdefault(path, []).append(pos)
        # Signature classes: units whose (arity, typed slots) are equal score alike.
        class_of: dict[Features, int] = {}
        self.sig_class: list[int] = []
        self.members: list[list[int]] = []
        for pos, feats in enumerate(features):
            if feats is None:
                self.sig_class.append(-1)
                continue
            cls = class_of.setdefault(feats, len(class_of))
            if cls == len(self.members):
                self.members.append([])
            self.members[cls].append(pos)
            self.sig_class.append(cls)
        self.features = list(class_of)
        self._similar: dict[int, tuple[list[int], list[int]]] = {}
        self._index: Any = None
        self._arrays: tuple[Matrix, Matrix, Any] | None = None

    @property
    def vectors(self) -> Matrix:
        """Every member's code vector (built with them: the exact method)."""
        if self._vectors is None:
            raise RuntimeError("this group was built without its members' vectors")
        return self._vectors

    # -- tier 2 --------------------------------------------------------------------------
    def similar_classes(self, cls: int) -> tuple[list[int], list[int]]:
        """The classes whose signature similarity to ``cls`` exceeds ``SIMILAR_SIGNATURE``
        (ascending), with the running total of their sizes."""
        found = self._similar.get(cls)
        if found is None:
            import numpy as np

            counts, sizes, slot_matrix = self._class_arrays()
            count, _ = self.features[cls]
            inter = np.asarray((slot_matrix @ slot_matrix[cls].T).todense()).ravel()
            union = sizes + sizes[cls] - inter
            type_sim = np.where(union > 0, inter / np.maximum(union, 1), 1.0)
            count_sim = 1 - np.abs(counts - count) / np.maximum(np.maximum(counts, count), 1)
            classes = [int(c) for c in np.flatnonzero((count_sim + type_sim) / 2
                                                       > SIMILAR_SIGNATURE)]
            totals, total = [], 0
            for c in classes:
                total += len(self.members[c])
                totals.append(total)
            found = self._similar[cls] = (classes, totals)
        return found

    def _class_arrays(self) -> tuple[Matrix, Matrix, Any]:
        """Arity, slot count and a sparse class x slot matrix of the signature classes."""
        if self._arrays is None:
            import numpy as np
            from scipy import sparse

            vocab: dict[str, int] = {}
            cols: list[int] = []
            indptr = [0]
            for _, slots in self.features:
                cols.extend(sorted(vocab.setdefault(s, len(vocab)) for s in slots))
                indptr.append(len(cols))
            self._arrays = (
                np.array([c for c, _ in self.features], dtype=np.float64),
                np.array([len(s) for _, s in self.features], dtype=np.float64),
                sparse.csr_matrix((np.ones(len(cols)), cols, indptr),
                                  shape=(len(self.features), max(len(vocab), 1))))
        return self._arrays

    # -- tier 3 --------------------------------------------------------------------------
    def neighbours(self, positions: list[int], count: int) -> dict[int, _Band]:
        """For each target position, the in-band candidates (cosine in ``SEMANTIC_BAND``)
        by descending cosine, ties to the smaller position (positions sort by id).

        The semantic tier takes at most ``count`` of them after at most 6 units taken by
        tiers 1 and 2, so the ``count + 7`` best in band always suffice: exactly computed
        in groups up to ``EXACT_LIMIT`` (blocks of a matrix product), from the index's
        nearest neighbours above (``complete`` says whether more could exist)."""
        import numpy as np

        want = count + 7
        rows = np.asarray(positions, dtype=np.int64)
        out: dict[int, _Band] = {}
        if len(self.ids) <= EXACT_LIMIT:
            for start in range(0, len(rows), 256):
                block = rows[start:start + 256]
                sims = self.vectors[block] @ self.vectors.T
                cands = np.broadcast_to(np.arange(len(self.ids)), sims.shape)
                out.update(self._rank(block, cands, sims, want, complete=True))
            return out
        found = self._search(np.ascontiguousarray(self.vectors[rows]), 2 * want + 2)
        lo = SEMANTIC_BAND[0]
        for start in range(0, len(rows), 256):
            block = rows[start:start + 256]
            # A row the index answered with nothing still ranks the target itself (masked).
            lists = [r or [p] for r, p in zip(found[start:start + 256], block.tolist(),
                                              strict=True)]
            width = max(len(r) for r in lists)
            cands = np.array([r + [r[-1]] * (width - len(r)) for r in lists], dtype=np.int64)
            sims = np.einsum("tkd,td->tk", self.vectors[cands], self.vectors[block])
            complete = (sims.min(axis=1) <= lo) | (width >= len(self.ids))
            out.update(self._rank(block, cands, sims, want, complete=complete))
        return out

    def _rank(self, rows: Any, cands: Any, sims: Any, want: int,
              complete: Any) -> dict[int, _Band]:
        import numpy as np

        lo, hi = SEMANTIC_BAND
        keep = (sims > lo) & (sims < hi) & (cands != rows[:, None])
        score = np.where(keep, sims, -np.inf)
        k = min(want, score.shape[1])
        top = np.argpartition(-score, k - 1, axis=1)[:, :k] if k < score.shape[1] else \
            np.broadcast_to(np.arange(score.shape[1]), score.shape)
        top_score = np.take_along_axis(score, top, axis=1)
        top_cand = np.take_along_axis(cands, top, axis=1)
        order = np.lexsort((top_cand, -top_score), axis=-1)
        top_score = np.take_along_axis(top_score, order, axis=1)
        top_cand = np.take_along_axis(top_cand, order, axis=1)
        flags = np.broadcast_to(np.asarray(complete), (len(rows),))
        out: dict[int, _Band] = {}
        for i, pos in enumerate(rows.tolist()):
            valid = np.isfinite(top_score[i])
            # Fewer in band than fit in the list: there are no more (for this list).
            full = bool(flags[i]) or int(valid.sum()) < k
            out[pos] = _Band(top_cand[i][valid].tolist(), full)
        return out

    def _search(self, queries: Matrix, k: int) -> list[list[int]]:
        import faiss

        if self._index is None:
            threads = faiss.omp_get_max_threads()
            faiss.omp_set_num_threads(1)  # one thread: the same graph on every run
            try:
                index = faiss.IndexHNSWFlat(self.vectors.shape[1], HNSW_M,
                                            faiss.METRIC_INNER_PRODUCT)
                index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
                index.add(self.vectors)
            finally:
                faiss.omp_set_num_threads(threads)
            self._index = index
        self._index.hnsw.efSearch = max(HNSW_EF_SEARCH, k)
        _, found = self._index.search(queries, min(k, len(self.ids)))
        return [[int(p) for p in row if p >= 0] for row in found]

    def semantic(self, pos: int, need: int, free: Callable[[int], bool],
                 band: _Band) -> list[int]:
        """Up to ``need`` free positions of the target's band, most similar first; when
        the list from the index runs out before the band does, search further."""
        import numpy as np

        if need <= 0:
            return []
        picks = [p for p in band.ranked if free(p)][:need]
        k = 4 * (need + 7)
        while len(picks) < need and not band.complete:
            target = self.vectors[pos]
            cands = np.asarray(self._search(np.ascontiguousarray(target[None, :]), k),
                               dtype=np.int64)
            sims = (self.vectors[cands[0]] @ target)[None, :]
            full = bool(sims.min() <= SEMANTIC_BAND[0]) or k >= len(self.ids)
            band = self._rank(np.array([pos]), cands, sims, k, complete=full)[pos]
            picks = [p for p in band.ranked if free(p)][:need]
            k *= 4
        return picks

    # -- one target ------------------------------------------------------------------------
    def select(self, pos: int, count: int, rng: Random, candidates: _Band) -> DistractorSet:
        chosen, tiers = self.pick(pos, count, rng, candidates)
        similarities = ([float(s) for s in self.vectors[chosen] @ self.vectors[pos]]
                        if chosen else [])
        return self.distractor_set(pos, chosen, tiers, similarities)

    def distractor_set(self, pos: int, chosen: list[int], tiers: list[int],
                       similarities: list[float]) -> DistractorSet:
        return DistractorSet(target_id=self.ids[pos], distractor_ids=[self.ids[p] for p in chosen],
                             tiers=tiers, difficulty=difficulty(similarities),
                             similarities=similarities)

    def pick(self, pos: int, count: int, rng: Random,
             candidates: _Band) -> tuple[list[int], list[int]]:
        """The positions of the target's distractors and the tier of each (spec 6.1's
        order: same file, similar signature, semantic band, random padding)."""
        taken = {pos}
        chosen: list[int] = []
        tiers: list[int] = []

        def add(picks: list[int], tier: int) -> None:
            for p in picks:
                chosen.append(p)
                tiers.append(tier)
                taken.add(p)

        add(_sample(self.by_path[self.paths[pos]], min(3, count), rng, taken), 1)
        cls = self.sig_class[pos]
        if cls >= 0:
            classes, totals = self.similar_classes(cls)
            need = min(3, 6 - len(chosen), count - len(chosen))
            add(_sample_union([self.members[c] for c in classes], totals, need, rng, taken), 2)
        add(self.semantic(pos, count - len(chosen), lambda p: p not in taken, candidates), 3)
        add(_sample_range(len(self.ids), count - len(chosen), rng, taken), 4)
        return chosen, tiers


# -- uniform draws without replacement, skipping what is taken ---------------------------
def _sample(pool: list[int], n: int, rng: Random, taken: set[int]) -> list[int]:
    """``n`` of ``pool`` (ascending positions) not in ``taken``."""
    free = [p for p in pool if p not in taken]
    return rng.sample(free, min(n, len(free))) if n > 0 else []


def _sample_union(parts: list[list[int]], totals: list[int], n: int, rng: Random,
                  taken: set[int]) -> list[int]:
    """``n`` of the concatenation of ``parts`` (``totals``: running sizes) not in
    ``taken``: listed when small, else drawn by rejection without listing it."""
    size = totals[-1] if totals else 0
    if n <= 0 or size == 0:
        return []
    if size <= 4 * (n + len(taken)) + 64:
        return _sample(sorted(p for part in parts for p in part), n, rng, taken)

    def at(i: int) -> int:
        j = bisect_right(totals, i)
        return parts[j][i - (totals[j - 1] if j else 0)]

    return _draw(size, at, n, rng, taken)


def _sample_range(size: int, n: int, rng: Random, taken: set[int]) -> list[int]:
    """``n`` positions of ``range(size)`` not in ``taken``."""
    if n <= 0:
        return []
    if size <= 4 * (n + len(taken)) + 64:
        return _sample(list(range(size)), n, rng, taken)
    return _draw(size, lambda i: i, n, rng, taken)


def _draw(size: int, at: Callable[[int], int], n: int, rng: Random,
          taken: set[int]) -> list[int]:
    """Rejection sampling: at least a 3/4 of the ``size`` items are free, so each draw
    succeeds with probability above 3/4 and ``n`` picks cost about ``4n/3`` draws."""
    picks: list[int] = []
    seen = set(taken)
    while len(picks) < n:
        p = at(rng.randrange(size))
        if p not in seen:
            seen.add(p)
            picks.append(p)
    return picks


def difficulty(similarities: list[float]) -> Difficulty:
    """``hard`` when the three distractors nearest the target average a cosine of at least
    0.75, ``medium`` from 0.6, else ``easy`` (our rule; docs/methods.md#distractor-tiers)."""
    top = sorted(similarities, reverse=True)[:3]
    if not top:
        return "easy"
    mean = sum(top) / len(top)
    return "hard" if mean >= HARD_AT else "medium" if mean >= MEDIUM_AT else "easy"


def matchable_unit_ids(ctx: RunContext) -> set[str]:
    """Sampled units with at least one candidate distractor (same language and type)."""
    kinds = ctx.unit_groups
    return {u.id for u in ctx.units if kinds.get((u.language, u.type), 0) > 1}


# -- persistence --------------------------------------------------------------------------
def code_text(unit: CodeUnit) -> str:
    """What is embedded for a unit's code: its content as models saw it."""
    return unit.content
