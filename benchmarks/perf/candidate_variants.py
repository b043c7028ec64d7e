"""Settings of the ``candidates`` distractor search replayed on the store of an ``exact``
run, without a run: how hard the sets are and how much of the exact semantic tier each
setting recovers, in seconds per setting (issue 32).

Usage::

    python benchmarks/perf/candidate_variants.py EXACT_STORE --work DIR
        [--variants K=50,w=2 K=25,w=1 ...]

``EXACT_STORE`` is the ``store.sqlite`` of a finished run with ``distractorSearch: exact``
(``distractor_search.py`` leaves one in ``WORK/out-exact``): its units, its sample, its
distractor sets, and in its embedding cache the evaluation model's vector of every unit.
The script works on a copy (``DIR/replay.sqlite``; kept, so that what the model computes
for one setting serves the next), builds the run's context from it and calls the
``candidates`` search itself (``candidates.select_sampled``) once per setting. Whole
vectors come from the exact run's cache; what a setting ranks on (a unit's first windows)
is embedded once and cached in the copy. Printed per setting, against the stored exact
sets: the semantic-tier distractors and their mean cosine to the target (whole vectors,
as the sets store them), the share of the exact tier recovered, the difficulty labels,
and what a fresh run would put through the model for the search (units ranked, their
windows and word pieces; units embedded whole; counted by the tokenizer).

A setting is ``K=<candidatesPerTarget>,w=<RANKING_WINDOWS>`` with optional
``,p=<ranking pieces>`` (rank on windows of p word pieces, ``[CLS]`` and ``[SEP]``
included: ``RANKING_PIECES``). The scores a setting gives need a run:
``distractor_search.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sqlite3
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from distractor_search import describe, recovered  # noqa: E402


def parse(spec: str) -> dict[str, int]:
    out = {}
    for part in spec.split(","):
        key, _, value = part.partition("=")
        out[key.strip()] = int(value)
    return out


def context(store: Any, conn: sqlite3.Connection) -> Any:
    from pytest_summarybench.core.progress import Progress

    run_id, text = conn.execute("SELECT id, json FROM runs").fetchone()
    seed = json.loads(text)["config"]["seed"]

    def rng(*keys: str) -> random.Random:  # RunContext.rng
        digest = hashlib.sha256("\x1f".join((str(seed), *keys)).encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    return SimpleNamespace(store=store, run_id=run_id, unit_groups=store.unit_groups(run_id),
                           progress=Progress.off(), rng=rng)


def main() -> None:
    from pytest_summarybench.embeddings import Embedder
    from pytest_summarybench.embeddings.minilm import shared_backend
    from pytest_summarybench.evaluators.contrastive import candidates
    from pytest_summarybench.store import Store

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--variants", nargs="+", default=["K=50,w=2"])
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    replay = args.work / "replay.sqlite"
    if not replay.exists():
        with sqlite3.connect(args.store) as source, sqlite3.connect(replay) as copy:
            source.backup(copy)
    conn = sqlite3.connect(replay)
    exact = {uid: json.loads(text) for uid, text in
             conn.execute("SELECT unit_id, json FROM distractor_sets")}
    store = Store(replay)
    ctx = context(store, conn)
    backend = shared_backend()
    embedder = Embedder(backend, store)
    targets = [SimpleNamespace(id=u.id, language=u.language, type=u.type)
               for u in store.load_units_by_id(ctx.run_id, sorted(exact))]
    count = len(next(iter(exact.values()))["distractor_ids"])
    d_exact = describe(exact)
    print(f"{len(targets)} targets, {count} distractors each; exact: tier-3 "
          f"{d_exact['tier3']}, mean cosine {d_exact['tier3_mean']:.4f}, all "
          f"{d_exact['all_mean']:.4f}, {d_exact['labels']}", flush=True)
    pieces_of: dict[str, int] = {}
    defaults = {name: getattr(candidates, name) for name in
                ("RANKING_WINDOWS", "RANKING_PIECES")}
    for spec in args.variants:
        v = parse(spec)
        for name, value in defaults.items():
            setattr(candidates, name, value)
        candidates.RANKING_WINDOWS = v.get("w", defaults["RANKING_WINDOWS"])
        if "p" in v:
            candidates.RANKING_PIECES = v["p"] - 2  # [CLS] and [SEP]
        ranked: list[str] = []
        whole: list[str] = []
        record = candidates._ModelVectors.need

        def need(self: Any, ids: list[str], _record: Any = record,
                 _whole: list[str] = whole, _ranked: list[str] = ranked) -> None:
            (_whole if self._what == "code" else _ranked).extend(ids)
            _record(self, ids)

        candidates._ModelVectors.need = need  # type: ignore[method-assign]
        started = time.perf_counter()
        try:
            sets = candidates.select_sampled(ctx, embedder, targets, count, v["K"])
        finally:
            candidates._ModelVectors.need = record  # type: ignore[method-assign]
        assert sets is not None
        found = {uid: {"distractor_ids": s.distractor_ids, "tiers": s.tiers,
                       "similarities": s.similarities, "difficulty": s.difficulty}
                 for uid, s in sets.items()}
        d = describe(found)
        share3, share = recovered(exact, found)
        ranked_set, whole_set = set(ranked), set(whole)
        missing = sorted((ranked_set | whole_set) - pieces_of.keys())
        if missing:
            texts = store.unit_contents(missing)
            pieces_of.update(zip(missing, (len(p) for p in backend.pieces(
                [texts.get(u) or "" for u in missing])), strict=True))
        limit = v.get("p", 254 * candidates.RANKING_WINDOWS)
        rank_windows = sum(min(candidates.RANKING_WINDOWS, max(1, math.ceil(
            pieces_of[u] / 254))) for u in ranked_set) if "p" not in v else len(ranked_set)
        rank_pieces = sum(min(pieces_of[u], limit) + 2 for u in ranked_set)
        whole_windows = sum(min(8, max(1, math.ceil(pieces_of[u] / 254))) for u in whole_set)
        print(f"{spec:<14} tier-3 {d['tier3']:4d} mean {d['tier3_mean']:.4f} "
              f"({d['tier3_mean'] - d_exact['tier3_mean']:+.4f})  all {d['all_mean']:.4f} "
              f"({d['all_mean'] - d_exact['all_mean']:+.4f})  recovered {share3:.1%} / "
              f"{share:.1%}  {d['labels']}  ranked {len(ranked_set)} units, {rank_windows} "
              f"windows, {rank_pieces:,} pieces; whole {len(whole_set)} units, "
              f"{whole_windows} windows  ({time.perf_counter() - started:.0f} s)",
              flush=True)


if __name__ == "__main__":
    main()
