"""Why contrastive/embedding ranks ``builtin/identifiers`` above ``builtin/docstring``: the
same distractor sets, the same embedding model, identifier summaries cut to fewer words.

Usage::

    pytest -p summarybench benchmarks/summary -q --sb-output OUT
    python benchmarks/analysis/contrastive_identifiers.py OUT/store.sqlite

Reads the run's units, summaries and stored distractor sets (the sets the evaluator used)
and scores the accuracy of docs/methods.md#contrastive-embedding (the target's code is the
nearest to the summary) for ``builtin/docstring``, ``builtin/identifiers`` as run, and
``identifiers_summary`` with at most 3 to 40 words, on every unit with a set and on the
units that have a docstring of their own (where ``builtin/docstring`` does not fall back to
the signature template). If even a three-word bag of the code's own identifiers beats the
author's docstring, the ordering is the embedding method's, not the baseline's length.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pytest_summarybench.evaluators.contrastive.distractors import code_text  # noqa: E402
from pytest_summarybench.generate import builtin  # noqa: E402
from pytest_summarybench.schemas import CodeUnit  # noqa: E402

CAPS = (3, 5, 8, 12, 20, 40)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path, help="store.sqlite of a default run")
    parser.add_argument("--embedding-model", default="builtin/minilm")
    args = parser.parse_args()

    from pytest_summarybench.embeddings import get_embedder
    from pytest_summarybench.store import Store

    conn = sqlite3.connect(args.store)
    units = {uid: CodeUnit.model_validate_json(text)
             for uid, text in conn.execute("SELECT id, json FROM units")}
    sets = {uid: json.loads(text)["distractor_ids"]
            for uid, text in conn.execute("SELECT unit_id, json FROM distractor_sets")}
    summaries: dict[tuple[str, str], str] = {}
    for uid, model, text in conn.execute("SELECT unit_id, model_id, json FROM summaries"):
        summaries[(uid, model)] = json.loads(text)["summary"]
    targets = sorted(uid for uid in sets
                     if (uid, "builtin/docstring") in summaries and sets[uid])
    documented = [uid for uid in targets if units[uid].docstring]
    embedder = get_embedder(args.embedding_model, Store(args.store))

    def accuracy(text_of: dict[str, str], among: list[str]) -> float:
        hits = []
        for uid in among:
            candidates = [uid, *sets[uid]]
            vectors = embedder.embed([text_of[uid], *(code_text(units[c]) for c in candidates)])
            sims = vectors[1:] @ vectors[0]
            hits.append(float(sims[0] > sims[1:].max()))
        return float(np.mean(hits))

    rows: list[tuple[str, dict[str, str]]] = [
        ("builtin/docstring", {u: summaries[(u, "builtin/docstring")] for u in targets}),
        ("builtin/identifiers (as run, <= 40 words)",
         {u: summaries[(u, "builtin/identifiers")] for u in targets}),
    ]
    saved = builtin.MAX_IDENTIFIER_WORDS
    try:
        for cap in CAPS:
            builtin.MAX_IDENTIFIER_WORDS = cap
            rows.append((f"identifiers, at most {cap} words",
                         {u: builtin.identifiers_summary(units[u]) for u in targets}))
    finally:
        builtin.MAX_IDENTIFIER_WORDS = saved
    print(f"contrastive/embedding accuracy ({embedder.name}, the run's distractor sets): "
          f"{len(targets)} units, {len(documented)} with a docstring of their own")
    print(f"  {'summary':<44} {'all units':>9} {'documented':>11}")
    for name, texts in rows:
        print(f"  {name:<44} {accuracy(texts, targets):9.3f} {accuracy(texts, documented):11.3f}")


if __name__ == "__main__":
    main()
