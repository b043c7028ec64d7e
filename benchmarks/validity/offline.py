"""The contrastive methods scored outside a run, with the evaluators' own selection code:
the tiered sets of docs/methods.md#distractor-tiers (``distractors.CandidatePool``) for
``embedding``, identifier-sharing sets (``lexical.select_lexical``) for ``lexical``; both rank the
target's code among its distractors by cosine to the summary and score hit@1 with ``stats/ir.py``'s
tie rule, as ``ContrastiveEmbedding.evaluate`` does.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

import numpy as np

from pytest_summarybench.evaluators.contrastive.distractors import CandidatePool, code_text
from pytest_summarybench.evaluators.contrastive.embedding import TIE_TOLERANCE
from pytest_summarybench.evaluators.contrastive.lexical import select_lexical
from pytest_summarybench.schemas import CodeUnit
from pytest_summarybench.stats.ir import target_ranking

METHODS = ("embedding", "lexical")
#: The default ``evaluation.contrastive.distractors``.
DISTRACTORS = 9


def seeded(seed: int, *keys: str) -> random.Random:
    """``RunContext.rng``: a generator seeded by the seed and ``keys``."""
    digest = hashlib.sha256("\x1f".join((str(seed), *keys)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class _Seeded:
    """What ``CandidatePool.select_many`` reads of a run context."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def rng(self, *keys: str) -> random.Random:
        return seeded(self.seed, *keys)


def distractor_sets(method: str, units: list[CodeUnit], embedder: Any,
                    seed: int) -> dict[str, list[str]]:
    """Each unit's distractor ids as ``contrastive/<method>`` selects them."""
    if method == "embedding":
        vectors = embedder.embed([code_text(u) for u in units], what="code")
        sets = CandidatePool(units, vectors).select_many(units, DISTRACTORS,
                                                         _Seeded(seed))  # type: ignore[arg-type]
    elif method == "lexical":
        sets = select_lexical(units, units, DISTRACTORS,
                              lambda uid: seeded(seed, "lexical-distractors", uid))
    else:
        raise SystemExit(f"unknown contrastive method {method!r}: choose from {METHODS}")
    return {uid: s.distractor_ids for uid, s in sets.items()}


def accuracy(units: list[CodeUnit], summaries: dict[str, str],
             sets: dict[str, list[str]], embedder: Any) -> np.ndarray:
    """Per unit: 1 when its code is the nearest of its set to its summary (ties shared)."""
    row = {u.id: i for i, u in enumerate(units)}
    code = embedder.embed([code_text(u) for u in units], what="code")
    summary = embedder.embed([summaries[u.id] for u in units], what="summaries")
    out = []
    for i, u in enumerate(units):
        sims = [float(code[row[c]] @ summary[i]) for c in [u.id, *sets[u.id]]]
        out.append(target_ranking(sims[0], sims[1:], tolerance=TIE_TOLERANCE).hit_at(1))
    return np.array(out)
