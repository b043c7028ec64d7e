"""The evaluation model's work for the ``candidates`` distractor search, counted without
the model: which units the shortlists hold, and how many windows and word pieces ranking
them (on their first 1 or 2 windows) or embedding them whole would take (issue 32).

Usage::

    python benchmarks/perf/candidate_counts.py STORE [--per-target 35 50 25]

``STORE`` is the ``store.sqlite`` of a run that stored its units and sample (any default
run, even one stopped after collection; work on a copy if a run still uses it). The
shortlists come from the candidate stage's own functions (``candidates.py``: static
vectors over every unit of the sampled units' groups, the same cut), so they are the
run's; the windows are counted by tokenizing (``MiniLMBackend.pieces``, 254 pieces a
window). Only the tokenizer and the static vectors run: a 50k-unit codebase is counted in
minutes where embedding its shortlists takes hours on a loaded machine. The distractors
picked, embedded whole in every variant, are not counted: they depend on the model's
cosines.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
from pathlib import Path
from types import SimpleNamespace


def windows(pieces: int, most: int) -> int:
    return min(most, max(1, math.ceil(pieces / 254)))


def main() -> None:
    from pytest_summarybench.core.progress import Progress
    from pytest_summarybench.embeddings.minilm import shared_backend
    from pytest_summarybench.embeddings.static import StaticVectors
    from pytest_summarybench.evaluators.contrastive.candidates import _read_group, _shortlist
    from pytest_summarybench.store import Store

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--per-target", type=int, nargs="+", default=[35, 50, 25])
    args = parser.parse_args()
    store = Store(args.store)
    conn = sqlite3.connect(args.store)
    run_id = conn.execute("SELECT run_id FROM run_units LIMIT 1").fetchone()[0]
    ctx = SimpleNamespace(store=store, run_id=run_id, unit_groups=store.unit_groups(run_id))
    groups: dict[tuple[str, str], list[str]] = {}
    for uid in store.sampled_unit_ids(run_id):
        unit = json.loads(conn.execute("SELECT json FROM units WHERE id = ?",
                                       (uid,)).fetchone()[0])
        groups.setdefault((unit["language"], unit["type"]), []).append(uid)
    static = StaticVectors(shared_backend(), store)
    shortlisted: dict[int, set[str]] = {c: set() for c in args.per_target}
    targets: set[str] = set()
    with Progress.off().phase("static", 1) as phase:
        for (language, kind), members in sorted(groups.items()):
            ids, _, _, cheap = _read_group(ctx, static, language, kind, None, phase, {})
            where = {uid: pos for pos, uid in enumerate(ids)}
            rows = [where[t] for t in members]
            targets.update(members)
            for c in args.per_target:
                if len(ids) - 1 <= c:
                    continue  # the whole group, embedded whole (no ranking cut)
                for short in _shortlist(cheap, rows, c).values():
                    shortlisted[c].update(ids[p] for p in short)
            print(f"{language} {kind}: {len(ids):,} units, {len(members)} targets",
                  flush=True)
    every = sorted(targets.union(*shortlisted.values()))
    texts = store.unit_contents(every)
    pieces = dict(zip(every, (len(p) for p in shared_backend().pieces(
        [texts.get(uid) or "" for uid in every])), strict=True))
    print(f"targets {len(targets)}: {sum(windows(pieces[t], 8) for t in targets):,} "
          f"windows whole")
    for c, units in shortlisted.items():
        print(f"candidatesPerTarget {c}: {len(units):,} units shortlisted; windows whole "
              f"{sum(windows(pieces[u], 8) for u in units):,}, first 2 "
              f"{sum(windows(pieces[u], 2) for u in units):,}, first 1 {len(units):,}; "
              f"word pieces {sum(min(pieces[u], 2032) for u in units):,} / "
              f"{sum(min(pieces[u], 508) for u in units):,} / "
              f"{sum(min(pieces[u], 254) for u in units):,}")


if __name__ == "__main__":
    main()
