"""External validity of the offline families: do they order summarizers as real,
human-labelled developer queries do?

For each query set and each condition (docstrings present, and stripped from the units'
code and metadata before anything is summarized or embedded), every summarizer (the five
built-ins, and any model whose summaries a run stored) is scored

- by real-query retrieval: MRR of the labelled queries over an index of the summaries of
  every unit of the set (MiniLM, exact cosine, ties as ``stats/ir.py`` counts them), with
  the code itself as a reference row;
- by each contrastive method (``evaluators/contrastive``): accuracy at picking the unit's
  code out of its distractors (the project's tiered selection, ``distractors.py``).

It prints each ordering, Kendall's tau of each method's ordering against the real-query
one, and the paired bootstrap interval of each adjacent difference (queries paired for
retrieval, units for contrastive), and the ceiling: how often real queries agree with
themselves (two disjoint halves of the queries; bootstrap resamples against all of them)
and each method with them under the same resampling (``validity.external.ceiling``,
``--resamples``). ``--json`` writes the figures;
``--record`` merges them into ``pytest_summarybench/validity/external.json``.

Usage (from the repository root; the data files are not shipped, see docs/validity.md)::

    python benchmarks/validity/check.py cosqa DATA/cosqa-retrieval-test-500.json \\
        --cache /tmp/sb-validity.sqlite
    python benchmarks/validity/check.py ncs DATA/287_android_questions.json \\
        --cache /tmp/sb-validity.sqlite

Nothing reads the network: MiniLM's weights come with the package, the data from the
paths given, embeddings are cached in ``--cache`` (re-runs take seconds).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from random import Random
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import offline  # noqa: E402
from datasets import QuerySet, load  # noqa: E402

from pytest_summarybench.generate.builtin import BUILTIN_NAMES, summarize_builtin  # noqa: E402
from pytest_summarybench.schemas import CodeUnit  # noqa: E402
from pytest_summarybench.stats.ir import Ranking  # noqa: E402
from pytest_summarybench.validity.external import (  # noqa: E402
    adjacent_steps,
    ceiling,
    kendall_tau,
    ordering,
)
from pytest_summarybench.validity.quote import EXTERNAL_PATH  # noqa: E402

BUILTINS = [f"builtin/{n}" for n in BUILTIN_NAMES]


def builtin_summaries(units: list[CodeUnit], seed: int) -> dict[str, dict[str, str]]:
    """Every built-in's summary of every unit, by model and unit id."""
    out = {}
    for name in BUILTIN_NAMES:
        done = summarize_builtin(name, units, lambda _u: [], Random(seed))
        out[f"builtin/{name}"] = {uid: r.text for uid, r in done.items()}
    return out


def stored_summaries(store: Path, units: list[CodeUnit]) -> dict[str, dict[str, str]]:
    """Summaries a run stored for these units (matched by their code), by model."""
    import sqlite3

    by_content = {u.content: u.id for u in units}
    conn = sqlite3.connect(store)
    ids = {uid: by_content[json.loads(text)["content"]]
           for uid, text in conn.execute("SELECT id, json FROM units")
           if json.loads(text)["content"] in by_content}
    out: dict[str, dict[str, str]] = {}
    for uid, model, text in conn.execute("SELECT unit_id, model_id, json FROM summaries"):
        if uid in ids and not model.startswith(("builtin/", "validate/")):
            out.setdefault(model, {})[ids[uid]] = json.loads(text)["summary"]
    return {m: s for m, s in out.items() if len(s) == len(units)}


def retrieval_rr(queries: list[tuple[str, frozenset[str]]], ids: list[str],
                 docs: dict[str, str], embedder: Any) -> np.ndarray:
    """Reciprocal rank of each query over an index of ``docs`` (exact cosine)."""
    qv = embedder.embed([q for q, _ in queries], what="queries")
    dv = embedder.embed([docs[i] for i in ids], what="documents")
    sims = qv @ dv.T
    rr = []
    for row, (_, relevant) in zip(sims, queries, strict=True):
        # float32 noise: the same text must tie with itself (summaries shared by units).
        scores = dict(zip(ids, np.round(row.astype(np.float64), 6).tolist(), strict=True))
        rr.append(Ranking.from_scores(scores, relevant).reciprocal_rank())
    return np.array(rr)


def condition(qset: QuerySet, units: list[CodeUnit], summaries: dict[str, dict[str, str]],
              embedder: Any, methods: list[str], seed: int, resamples: int) -> dict[str, Any]:
    ids = [u.id for u in units]
    per_obs: dict[str, dict[str, np.ndarray]] = {"retrieval": {}}
    for model, texts in summaries.items():
        per_obs["retrieval"][model] = retrieval_rr(qset.queries, ids, texts, embedder)
    code_rr = retrieval_rr(qset.queries, ids, {u.id: u.content for u in units}, embedder)
    for method in methods:
        sets = offline.distractor_sets(method, units, embedder, seed)
        per_obs[method] = {model: offline.accuracy(units, texts, sets, embedder)
                           for model, texts in summaries.items()}
    out: dict[str, Any] = {"units": len(units), "queries": len(qset.queries),
                           "code_mrr": round(float(code_rr.mean()), 4), "families": {}}
    reference = {m: float(v.mean()) for m, v in per_obs["retrieval"].items()}
    for family, scores in per_obs.items():
        means = {m: float(v.mean()) for m, v in scores.items()}
        builtin_means = {m: means[m] for m in BUILTINS}
        out["families"][family] = {
            "means": {m: round(v, 4) for m, v in means.items()},
            "ordering": ordering(means),
            "tau_builtins": None if family == "retrieval" else
            kendall_tau({m: reference[m] for m in BUILTINS}, builtin_means),
            "tau_all": None if family == "retrieval" else kendall_tau(reference, means),
            "steps": [s.as_dict() for s in adjacent_steps(scores, seed=seed)],
        }
    if resamples:
        spreads = ceiling({m: per_obs["retrieval"][m] for m in BUILTINS},
                          {method: {m: per_obs[method][m] for m in BUILTINS}
                           for method in methods}, resamples=resamples, seed=seed)
        out["ceiling"] = {kind: {who: spread.as_dict() for who, spread in by.items()}
                          for kind, by in spreads.items()}
    return out


def show(name: str, cond: str, result: dict[str, Any]) -> None:
    print(f"\n== {name}, docstrings {cond}: {result['units']} units, {result['queries']} "
          f"queries; the code itself as the document: MRR {result['code_mrr']:.3f}")
    for family, fig in result["families"].items():
        tau = fig["tau_builtins"]
        head = "real-query retrieval (MRR)" if family == "retrieval" else \
            f"{family} (accuracy)   tau vs real queries {tau:+.2f}" if tau is not None else \
            f"{family} (accuracy)   tau undefined (a constant scoring)"
        print(f"  {head}")
        print("    " + " > ".join(f"{m.removeprefix('builtin/')} {fig['means'][m]:.3f}"
                                  for m in fig["ordering"]))
        for step in fig["steps"]:
            low, high = step["interval"]
            sig = "" if low <= 0 <= high else " *"
            print(f"      {step['higher'].removeprefix('builtin/'):>12} - "
                  f"{step['lower'].removeprefix('builtin/'):<12} {step['difference']:+.3f} "
                  f"[{low:+.3f}, {high:+.3f}]{sig}")
    for kind, by in result.get("ceiling", {}).items():
        real = by["real"]
        print(f"  ceiling, {kind} ({real['resamples']} resamples): tau with real queries "
              f"median, share >= 0.8, middle 90%")
        for who, spread in by.items():
            label = "real queries themselves" if who == "real" else who
            if "median" not in spread:
                print(f"    {label:<24} undefined")
                continue
            low, high = spread["middle_90"]
            print(f"    {label:<24} {spread['median']:+.2f}  {spread['share_at_least_target']:.3f}"
                  f"  [{low:+.2f}, {high:+.2f}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", choices=["cosqa", "ncs"])
    parser.add_argument("files", nargs="+", type=Path, help="the data set's files")
    parser.add_argument("--extra-code", type=Path,
                        help="cosqa: code_idx_map.txt, more functions in the index")
    parser.add_argument("--exclude", type=Path, nargs="*", default=[],
                        help="cosqa: files whose queries are left out (the tuning files)")
    parser.add_argument("--cache", type=Path, default=Path("sb-validity.sqlite"),
                        help="store whose embedding cache is used (default: %(default)s)")
    parser.add_argument("--methods", default=",".join(offline.METHODS),
                        help="contrastive methods to compare (default: %(default)s)")
    parser.add_argument("--models-store", type=Path, help="a run's store.sqlite over these "
                        "units (docstrings present): its models' summaries join the built-ins")
    parser.add_argument("--models-store-stripped", type=Path,
                        help="the same for a run with extraction.stripDocstrings")
    parser.add_argument("--sample", type=int, default=0,
                        help="at most this many queries (seeded), 0 for all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=1000,
                        help="split-half and bootstrap resamples of the ceiling (0: none; "
                             "default: %(default)s)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--record", metavar="LABEL",
                        help="merge the tau figures into validity/external.json as LABEL")
    args = parser.parse_args()

    from pytest_summarybench.embeddings import get_embedder
    from pytest_summarybench.store import Store

    qset = load(args.dataset, args.files, args.extra_code, args.exclude)
    if args.sample and args.sample < len(qset.queries):
        keep = sorted(Random(args.seed).sample(range(len(qset.queries)), args.sample))
        qset = QuerySet(qset.name, qset.present, qset.stripped,
                        [qset.queries[i] for i in keep], qset.dropped)
    embedder = get_embedder("builtin/minilm", Store(args.cache))
    methods = [m for m in args.methods.split(",") if m]
    results: dict[str, Any] = {"dataset": args.dataset, "files": [f.name for f in args.files],
                               "dropped": qset.dropped}
    for cond, units, store in (("present", qset.present, args.models_store),
                               ("stripped", qset.stripped, args.models_store_stripped)):
        summaries = builtin_summaries(units, args.seed)
        if store is not None:
            summaries.update(stored_summaries(store, units))
        results[cond] = condition(qset, units, summaries, embedder, methods, args.seed,
                                  args.resamples)
        show(args.dataset, cond, results[cond])
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    if args.record:
        record(args.record, results, methods)


def record(label: str, results: dict[str, Any], methods: list[str]) -> None:
    """Merge this data set's tau figures into ``external.json``: per method, the figures of
    each data set recorded so far, and at the top the lowest tau over them (what the
    report quotes); validated when every one is at least 0.8."""
    figures = (json.loads(EXTERNAL_PATH.read_text(encoding="utf-8"))
               if EXTERNAL_PATH.exists() else {})
    for method in methods:
        entry = figures.setdefault(f"contrastive/{method}", {})
        per_set = entry.setdefault("datasets", {})
        taus = [results[c]["families"][method]["tau_builtins"]
                for c in ("present", "stripped")]
        per_set[label] = dict(zip(("tau_docstrings", "tau_stripped"),
                                  (None if t is None else round(t, 3) for t in taus),
                                  strict=True))
        if all("ceiling" in results[c] for c in ("present", "stripped")):
            # The method's spread beside real queries' own, at the same sample sizes.
            per_set[label]["ceiling"] = {
                cond: {kind: {"real_queries": by["real"], "method": by[method]}
                       for kind, by in results[c]["ceiling"].items()}
                for cond, c in (("docstrings", "present"), ("stripped", "stripped"))}
        entry.update({
            "dataset": ", ".join(sorted(per_set)),
            "tau_docstrings": _lowest(per_set, "tau_docstrings"),
            "tau_stripped": _lowest(per_set, "tau_stripped"),
            "doc": "docs/validity.md#external-validity"})
        entry["validated"] = all(t is not None and t >= 0.8 for t in
                                 (entry["tau_docstrings"], entry["tau_stripped"]))
    EXTERNAL_PATH.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _lowest(per_set: dict[str, dict[str, float | None]], key: str) -> float | None:
    """The lowest tau over the data sets (none when one is undefined)."""
    taus = [d[key] for d in per_set.values()]
    return None if any(t is None for t in taus) else min(t for t in taus if t is not None)


if __name__ == "__main__":
    main()
