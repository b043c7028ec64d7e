"""Distractor selection (spec section 6.1), shared by both contrastive evaluators.

For each sampled unit the controller picks, once per run, ``distractors`` other units of the
same language and type, in the spec's tiers: up to 3 from the same file (hardest), then
similar signatures (up to 6 in all), then code whose embedding is semantically similar but
not a near-copy (cosine in (0.5, 0.95)), then random padding. When a language and type have
fewer candidates than asked for, the set is smaller (the spec never crosses language or
type); the number of options is in every record's details. A unit that is the only one of
its language and type has no candidate at all, and is no contrastive item
(``matchable_unit_ids``): a "choice" among one option would score every summary correct.

Seeded by the run seed and the target's id, so a set does not change when the sample or the
model list does. Per target the work is vectorised over the target's (language, type)
group: signature similarity is a sparse product, semantic similarity one matrix-vector
product, then one sort: O(n log n) in the number of units, with no Python loop over pairs.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from .base import EvaluationError, MatrixItem, unit_items

if TYPE_CHECKING:
    from ..context import RunContext
    from ..embeddings import Embedder
    from ..embeddings.base import Matrix
    from ..schemas import CodeUnit, GeneratedSummary

Difficulty = Literal["easy", "medium", "hard"]
SIMILAR_SIGNATURE = 0.7
SEMANTIC_BAND = (0.5, 0.95)
#: Difficulty from the mean cosine of the three distractors nearest the target's code.
HARD_AT, MEDIUM_AT = 0.75, 0.6

_DDL = """
CREATE TABLE IF NOT EXISTS distractor_sets (
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (run_id, key, unit_id)
)"""


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


def signature_features(unit: CodeUnit) -> tuple[int, frozenset[str]]:
    """(parameter count, typed-slot set) of a unit's signature.

    Types are compared as a multiset (each occurrence numbered) plus the return type; an
    undeclared type is ``?``, so in untyped code two signatures agree on arity alone.
    """
    meta = unit.metadata
    if meta.parameters is not None:
        types = [_norm_type(p.type) for p in meta.parameters]
    else:
        types = ["?" for _ in _split_params(meta.signature or "")]
    seen: dict[str, int] = {}
    slots = set()
    for t in types:
        seen[t] = seen.get(t, 0) + 1
        slots.add(f"{t}#{seen[t]}")
    if meta.return_type:
        slots.add(f"->{_norm_type(meta.return_type)}")
    return len(types), frozenset(slots)


def _norm_type(t: str | None) -> str:
    return re.sub(r"\s+", "", t).lower() if t else "?"


def signature_similarity(a: CodeUnit, b: CodeUnit) -> float:
    """Spec 6.1: mean of parameter-count similarity and type overlap (Jaccard)."""
    (na, sa), (nb, sb) = signature_features(a), signature_features(b)
    count_sim = 1 - abs(na - nb) / max(na, nb, 1)
    type_sim = len(sa & sb) / len(sa | sb) if sa | sb else 1.0
    return (count_sim + type_sim) / 2


# -- the candidate pool -----------------------------------------------------------------
class CandidatePool:
    """Every unit grouped by (language, type), with code vectors and signature features
    laid out for vectorised scoring."""

    def __init__(self, units: list[CodeUnit], vectors: Matrix) -> None:
        import numpy as np
        from scipy import sparse

        self.units = units
        order: dict[tuple[str, str], list[int]] = {}
        for i, u in enumerate(units):
            order.setdefault((u.language, u.type), []).append(i)
        feats = [signature_features(u) for u in units]
        vocab: dict[str, int] = {}
        for _, slots in feats:
            for slot in sorted(slots):
                vocab.setdefault(slot, len(vocab))
        self._groups: dict[tuple[str, str], _Group] = {}
        for key, rows in order.items():
            rows.sort(key=lambda i: units[i].id)
            cols: list[int] = []
            indptr = [0]
            for i in rows:
                cols.extend(sorted(vocab[s] for s in feats[i][1]))
                indptr.append(len(cols))
            self._groups[key] = _Group(
                ids=[units[i].id for i in rows],
                paths=np.array([units[i].path for i in rows], dtype=object),
                has_sig=np.array([bool(units[i].metadata.signature) for i in rows]),
                counts=np.array([feats[i][0] for i in rows], dtype=np.float64),
                sizes=np.array([len(feats[i][1]) for i in rows], dtype=np.float64),
                slots=sparse.csr_matrix((np.ones(len(cols)), cols, indptr),
                                        shape=(len(rows), max(len(vocab), 1))),
                vectors=vectors[rows])
        self._vocab = vocab
        self._index = {u.id: i for i, u in enumerate(units)}
        self._feats = feats
        self._vectors = vectors

    def select(self, target: CodeUnit, count: int, ctx: RunContext) -> DistractorSet:
        """Spec 6.1 ``selectDistractors`` for one target."""
        import numpy as np

        group = self._groups[(target.language, target.type)]
        rng = ctx.rng("distractors", target.id)
        t = self._index[target.id]
        me = group.ids.index(target.id)
        free = np.ones(len(group.ids), dtype=bool)
        free[me] = False
        chosen: list[int] = []
        tiers: list[int] = []

        def take(pool: np.ndarray, n: int, tier: int) -> None:
            picks = sorted(int(i) for i in np.flatnonzero(pool & free))
            for i in rng.sample(picks, min(n, len(picks))) if n > 0 else []:
                chosen.append(i)
                tiers.append(tier)
                free[i] = False

        take(group.paths == target.path, 3, 1)
        if target.metadata.signature:
            take(self._signature_scores(group, t) > SIMILAR_SIGNATURE,
                 min(3, 6 - len(chosen)), 2)
        sims = group.vectors @ self._vectors[t]
        # Descending similarity; ties go to the smaller id (rows are sorted by id).
        by_sim = np.argsort(-sims, kind="stable")
        lo, hi = SEMANTIC_BAND
        eligible = free & (sims > lo) & (sims < hi)
        for i in by_sim[eligible[by_sim]][: max(0, count - len(chosen))]:
            chosen.append(int(i))
            tiers.append(3)
            free[i] = False
        take(free, count - len(chosen), 4)
        chosen, tiers = chosen[:count], tiers[:count]
        similarities = [float(sims[i]) for i in chosen]
        return DistractorSet(target_id=target.id, distractor_ids=[group.ids[i] for i in chosen],
                             tiers=tiers, difficulty=difficulty(similarities),
                             similarities=similarities)

    def _signature_scores(self, group: _Group, t: int) -> Matrix:
        import numpy as np

        count, slots = self._feats[t]
        cols = sorted(self._vocab[s] for s in slots)
        target_vec = np.zeros(group.slots.shape[1])
        target_vec[cols] = 1.0
        inter = group.slots @ target_vec
        union = group.sizes + len(slots) - inter
        type_sim = np.where(union > 0, inter / np.maximum(union, 1), 1.0)
        count_sim = 1 - np.abs(group.counts - count) / np.maximum(
            np.maximum(group.counts, count), 1)
        scores = (count_sim + type_sim) / 2
        return np.where(group.has_sig, scores, -1.0)


@dataclass
class _Group:
    ids: list[str]
    paths: Any
    has_sig: Any
    counts: Any
    sizes: Any
    slots: Any
    vectors: Any


def difficulty(similarities: list[float]) -> Difficulty:
    """``hard`` when the three distractors nearest the target average a cosine of at least
    0.75, ``medium`` from 0.6, else ``easy`` (spec 6.1 leaves the rule open)."""
    top = sorted(similarities, reverse=True)[:3]
    if not top:
        return "easy"
    mean = sum(top) / len(top)
    return "hard" if mean >= HARD_AT else "medium" if mean >= MEDIUM_AT else "easy"


def matchable_unit_ids(ctx: RunContext) -> set[str]:
    """Sampled units with at least one candidate distractor (same language and type)."""
    kinds: dict[tuple[str, str], int] = {}
    for u in ctx.all_units:
        kinds[(u.language, u.type)] = kinds.get((u.language, u.type), 0) + 1
    return {u.id for u in ctx.units if kinds[(u.language, u.type)] > 1}


# -- persistence --------------------------------------------------------------------------
def code_text(unit: CodeUnit) -> str:
    """What is embedded for a unit's code: its content as models saw it."""
    return unit.content


def sets_key(ctx: RunContext, embedder_key: str) -> str:
    return f"{embedder_key}|n{ctx.settings.evaluation.contrastive.distractors}|s{ctx.seed}"


def ensure_distractor_sets(ctx: RunContext, embedder: Embedder) -> dict[str, DistractorSet]:
    """Select and store the sets of every sampled unit (controller; idempotent)."""
    key = sets_key(ctx, embedder.backend.cache_key)
    ctx.store.ensure_table(_DDL)
    existing = load_distractor_sets(ctx, embedder.backend.cache_key)
    missing = [u for u in ctx.units if u.id not in existing]
    if not missing:
        return existing
    vectors = embedder.embed([code_text(u) for u in ctx.all_units])
    pool = CandidatePool(ctx.all_units, vectors)
    count = ctx.settings.evaluation.contrastive.distractors
    fresh = {u.id: pool.select(u, count, ctx) for u in missing}
    with ctx.store.transaction() as conn:
        conn.executemany("INSERT OR REPLACE INTO distractor_sets VALUES (?, ?, ?, ?)",
                         [(ctx.run_id, key, uid, json.dumps(asdict(s)))
                          for uid, s in fresh.items()])
    return {**existing, **fresh}


def load_distractor_sets(ctx: RunContext, embedder_key: str) -> dict[str, DistractorSet]:
    """The stored sets of this run (workers read these)."""
    ctx.store.ensure_table(_DDL)
    rows = ctx.store.execute("SELECT unit_id, json FROM distractor_sets WHERE run_id = ? AND "
                             "key = ?", (ctx.run_id, sets_key(ctx, embedder_key)))
    return {uid: DistractorSet(**json.loads(text)) for uid, text in rows}


class ContrastiveEvaluator:
    """What both contrastive evaluators share: their items, the embedder the distractors
    are chosen with, and the distractor sets (selected in ``prepare``, read anywhere)."""

    name: ClassVar[str]

    def __init__(self) -> None:
        self._embedder: Embedder | None = None
        self._sets: dict[str, DistractorSet] | None = None

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
        self._sets = ensure_distractor_sets(ctx, self.embedder(ctx))

    def distractor_set(self, ctx: RunContext, unit_id: str) -> DistractorSet:
        if self._sets is None or unit_id not in self._sets:
            self._sets = load_distractor_sets(ctx, self.embedder(ctx).backend.cache_key)
        found = self._sets.get(unit_id)
        if found is None:
            raise EvaluationError(f"no distractor set for unit {unit_id}: the controller's "
                                  f"prepare step did not run for this run ({ctx.run_id})")
        return found

    @staticmethod
    def summary(item: MatrixItem, ctx: RunContext) -> GeneratedSummary:
        """The item's summary, or the EvaluationError saying why there is none."""
        found = ctx.summary(item.unit_id, item.model_id)
        if found is None:
            raise EvaluationError(ctx.summary_error(item.unit_id, item.model_id)
                                  or "no summary")
        return found
