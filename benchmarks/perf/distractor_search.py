"""The default distractor search (``candidates``) against the exact one, on one codebase:
how hard the sets are, how much of the exact semantic tier is recovered, what the scores
and the ranking become, and what each costs (issue 32).

Usage::

    python benchmarks/perf/distractor_search.py [--codebase DIR] [--work DIR]
        [--candidates 50] [--sample 100]

Runs the default offline run (five built-in models, contrastive and retrieval) once per
method, each on a fresh output folder of its own (so the timings are each method's cold
cost), with ``evaluation.contrastive.distractorSearch`` set through a configuration file.
The sample is the same in both (it depends on the seed and the units only). Then it reads
the distractor sets each run stored and the two results.json files and prints:

- per method: wall and CPU time, the vectors of the evaluation model in the store's
  cache (code, summaries and queries: the run started on an empty folder), and what went
  through the model (texts, windows, word pieces: ``model_counts.py``, counts that do not
  depend on the machine's load);
- mean cosine (evaluation model) of the semantic-tier distractors to their target, and of
  all distractors, and the difficulty labels;
- the share of the exact method's semantic-tier distractors that the candidates method
  also chose, and the share of all its distractors;
- per model: the contrastive score of each method and the difference; the ranking and the
  significance groups of each.

Default codebase: the bundled sample (``fixtures/sample_codebase``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))

import model_counts  # noqa: E402  (this folder's plugin: what went through the model)


def run(method: str, codebase: Path, work: Path, per_target: int, sample: int,
        fresh: bool, cache_from: Path | None = None) -> dict[str, Any]:
    out = work / f"out-{method}"
    if fresh:
        shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    if cache_from is not None and fresh:
        # The other run's store, for its embedding cache: this run then embeds nothing
        # that run embedded (its own run id keeps its units and sets apart).
        copy = sqlite3.connect(out / "store.sqlite")
        with sqlite3.connect(cache_from / "store.sqlite") as source:
            source.backup(copy)
        copy.execute("DELETE FROM distractor_sets")
        copy.commit()
        copy.close()
    config = work / f"{method}.yaml"
    config.write_text(json.dumps({"evaluation": {"contrastive": {
        "distractorSearch": method, "candidatesPerTarget": per_target}}}))
    counts = work / f"{method}.counts.json"
    counts.unlink(missing_ok=True)
    env = {**os.environ, "SB_MODEL_COUNTS": str(counts),
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(Path(__file__).parent)])}
    cmd = [sys.executable, "-m", "pytest", "-p", "summarybench", "-p", "model_counts",
           "benchmarks/summary", "-q", "-p", "no:cacheprovider", "--sb-config", str(config),
           "--sb-codebase", str(codebase), "--sb-output", str(out), "--sb-sample-size",
           str(sample)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    started = time.time()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    wall = time.time() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{method} run failed ({proc.returncode}):\n{proc.stdout[-3000:]}"
                         f"\n{proc.stderr[-3000:]}")
    return {"out": out, "wall_s": wall, "load": load, "counts": model_counts.read(counts),
            "cpu_s": after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime}


def stored_sets(out: Path) -> dict[str, dict[str, Any]]:
    """The distractor sets the run stored, by target id (one run, one key per store)."""
    conn = sqlite3.connect(out / "store.sqlite")
    try:
        rows = conn.execute("SELECT key, unit_id, json FROM distractor_sets").fetchall()
        code = conn.execute("SELECT count(*) FROM embedding_cache WHERE model NOT LIKE "
                            "'%static%'").fetchone()[0]
    finally:
        conn.close()
    keys = {k for k, _, _ in rows}
    if len(keys) != 1:
        raise SystemExit(f"{out}: expected the sets of one search, found keys {sorted(keys)}")
    return {"sets": {uid: json.loads(text) for _, uid, text in rows}, "vectors": code}


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def describe(sets: dict[str, dict[str, Any]]) -> dict[str, Any]:
    tier3 = [s for d in sets.values() for s, t in zip(d["similarities"], d["tiers"],
                                                       strict=True) if t == 3]
    every = [s for d in sets.values() for s in d["similarities"]]
    labels: dict[str, int] = {}
    for d in sets.values():
        labels[d["difficulty"]] = labels.get(d["difficulty"], 0) + 1
    return {"tier3": len(tier3), "tier3_mean": mean(tier3), "all_mean": mean(every),
            "labels": dict(sorted(labels.items()))}


def recovered(exact: dict[str, dict[str, Any]],
              other: dict[str, dict[str, Any]]) -> tuple[float, float]:
    """Share of the exact tier 3 also chosen (in any tier) and of all exact distractors."""
    hit3 = n3 = hit = n = 0
    for uid, d in exact.items():
        chosen = set(other.get(uid, {}).get("distractor_ids", []))
        for did, tier in zip(d["distractor_ids"], d["tiers"], strict=True):
            n += 1
            hit += did in chosen
            if tier == 3:
                n3 += 1
                hit3 += did in chosen
    return (hit3 / n3 if n3 else float("nan")), (hit / n if n else float("nan"))


def ranking(out: Path) -> dict[str, dict[str, Any]]:
    data = json.loads((out / "results.json").read_text())
    return {r["modelId"]: r for r in data["rankings"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--codebase", type=Path, default=ROOT / "fixtures" / "sample_codebase")
    parser.add_argument("--work", type=Path, default=Path("/tmp/sb-distractor-search"))
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--reuse", action="store_true",
                        help="keep the output folders (re-read the runs, no fresh timing)")
    parser.add_argument("--shared-cache", action="store_true",
                        help="keep the exact run's folder if there is one, and start the "
                             "candidates run from a copy of its store: the embeddings are "
                             "computed once (the comparison holds; the timings are warm); "
                             "an exact run that finished is not run again")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    codebase = args.codebase.resolve()
    exact_out = args.work / "out-exact"
    if args.shared_cache and (exact_out / "results.json").is_file():
        # The exact run is done: compare again without running it (its timing and
        # counts are those of the run that made it).
        runs = {"exact": {"out": exact_out, "wall_s": float("nan"), "load": float("nan"),
                          "cpu_s": float("nan"),
                          "counts": model_counts.read(args.work / "exact.counts.json")}}
    else:
        runs = {"exact": run("exact", codebase, args.work, args.candidates, args.sample,
                             fresh=not (args.reuse or args.shared_cache))}
    runs["candidates"] = run("candidates", codebase, args.work, args.candidates, args.sample,
                             fresh=not args.reuse,
                             cache_from=runs["exact"]["out"] if args.shared_cache else None)
    stored = {m: stored_sets(r["out"]) for m, r in runs.items()}
    sets = {m: s["sets"] for m, s in stored.items()}
    print(f"codebase {args.codebase} sample {args.sample}, candidatesPerTarget "
          f"{args.candidates}")
    for m, r in runs.items():
        d = describe(sets[m])
        print(f"{m:<10} wall {r['wall_s']:7.1f} s  CPU {r['cpu_s']:7.1f} s  load "
              f"{r['load']:.1f}  cached vectors {stored[m]['vectors']:,}  tier-3 distractors "
              f"{d['tier3']}  mean cosine tier 3 {d['tier3_mean']:.4f}  all "
              f"{d['all_mean']:.4f}  difficulty {d['labels']}")
        print(f"{'':<10} {model_counts.line(r['counts'])}")
    d_exact, d_cand = describe(sets["exact"]), describe(sets["candidates"])
    share3, share = recovered(sets["exact"], sets["candidates"])
    print(f"tier-3 mean cosine: candidates - exact = "
          f"{d_cand['tier3_mean'] - d_exact['tier3_mean']:+.4f} (bar: within 0.02)")
    print(f"recovered: {share3:.1%} of the exact tier 3, {share:.1%} of all exact "
          f"distractors")
    ranks = {m: ranking(r["out"]) for m, r in runs.items()}
    print(f"{'model':<22} {'exact':>8} {'cand.':>8} {'diff':>8}  rank/group exact -> cand.")
    for model, row in sorted(ranks["exact"].items(), key=lambda kv: kv[1]["rank"]):
        other = ranks["candidates"].get(model, {})
        a = row["scores"].get("contrastive", float("nan"))
        b = other.get("scores", {}).get("contrastive", float("nan"))
        print(f"{model:<22} {a:8.4f} {b:8.4f} {b - a:+8.4f}  "
              f"{row['rank']}{row['significanceGroup']} -> "
              f"{other.get('rank')}{other.get('significanceGroup')}")


if __name__ == "__main__":
    main()
