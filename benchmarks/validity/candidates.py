"""Desaturating the contrastive task: variants of it scored on one query set, each ordering
of the five built-ins compared with real-query retrieval (docs/validity.md, "Desaturated
candidates"). Run on CoSQA's dev queries to choose; the chosen one alone is then judged on
the held-out sets.

With 9 distractors every real summarizer scores 0.96-0.998 on CoSQA, so the middle of the
ordering is decided by noise. Each variant makes the task harder in one way:

- ``pool``: the summary ranks its own code among every unit of the set (reciprocal rank,
  not accuracy among 9);
- ``near-K``: the K units whose code is nearest the target's (code embeddings) as
  distractors;
- ``lexical-K``: ``contrastive/lexical``'s selection with K distractors;
- ``spec``: the tiers of docs/methods.md#distractor-tiers (``contrastive/embedding``), the
  baseline;
- ``+masked``: every candidate's identifiers replaced by one placeholder (comments and
  string literals, docstrings among them, kept), so copied names match nothing;
- ``+split``: every candidate's identifiers written as their words (``parseUrl`` ->
  ``parse url``);
- ``acc`` / ``rr``: hit@1 among the set, or reciprocal rank.

Usage (from the repository root)::

    python benchmarks/validity/candidates.py cosqa DATA/cosqa-dev.json \\
        DATA/cosqa-retrieval-dev-500.json --cache /tmp/sb-validity.sqlite
    python benchmarks/validity/candidates.py ncs DATA/287_android_questions.json \\
        --only pool+masked:rr --cache /tmp/sb-validity.sqlite
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import check  # noqa: E402
import offline  # noqa: E402
from datasets import load  # noqa: E402

from pytest_summarybench.evaluators.contrastive.embedding import TIE_TOLERANCE  # noqa: E402
from pytest_summarybench.evaluators.contrastive.lexical import select_lexical  # noqa: E402
from pytest_summarybench.generate.builtin import _KEYWORDS  # noqa: E402
from pytest_summarybench.generate.builtin_base import split_words  # noqa: E402
from pytest_summarybench.schemas import CodeUnit  # noqa: E402
from pytest_summarybench.stats.ir import Ranking  # noqa: E402
from pytest_summarybench.validity.external import ceiling, kendall_tau, ordering  # noqa: E402

CANDIDATES = ("spec:acc", "lexical-9:acc", "pool:rr", "pool+masked:rr", "pool+split:rr",
              "near-9:acc", "near-29:acc", "near-29:rr", "near-99:rr", "lexical-29:acc",
              "lexical-99:acc", "lexical-29:rr", "spec+masked:acc", "near-29+masked:rr",
              "lexical-29+masked:rr")

# Comments and string literals (kept as they are), else an identifier.
_TOKENS = re.compile(r'(?P<keep>/\*[\s\S]*?\*/|"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\''
                     r'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|(?:#|//)[^\n]*)'
                     r"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)")


def rewrite(unit: CodeUnit, how: str) -> str:
    """The unit's code with each non-keyword identifier masked or split into words."""
    def one(match: re.Match[str]) -> str:
        ident = match.group("ident")
        if ident is None or ident.lower() in _KEYWORDS:
            return match.group(0)
        return "x" if how == "masked" else " ".join(split_words(ident)) or ident
    return _TOKENS.sub(one, unit.content)


def candidate_sets(kind: str, units: list[CodeUnit], code: np.ndarray, embedder: Any,
                   seed: int) -> list[list[int]] | None:
    """Each unit's distractor rows (None: every other unit of the set)."""
    row = {u.id: i for i, u in enumerate(units)}
    if kind == "pool":
        return None
    name, _, count = kind.partition("-")
    if name == "spec":
        sets = offline.distractor_sets("embedding", units, embedder, seed)
        return [[row[d] for d in sets[u.id]] for u in units]
    if name == "lexical":
        chosen = select_lexical(units, units, int(count),
                                lambda uid: offline.seeded(seed, "lexical-distractors", uid))
        return [[row[d] for d in chosen[u.id].distractor_ids] for u in units]
    if name == "near":
        sims = code @ code.T
        np.fill_diagonal(sims, -np.inf)
        return [list(np.argsort(-sims[i], kind="stable")[:int(count)])
                for i in range(len(units))]
    raise SystemExit(f"unknown candidate {kind!r}")


def scores(summary: np.ndarray, candidates: np.ndarray, sets: list[list[int]] | None,
           measure: str) -> np.ndarray:
    """Per unit: hit@1 or reciprocal rank of its own code among its set (ties shared)."""
    sims = summary @ candidates.T
    out = []
    for i, row in enumerate(sims):
        target = row[i]
        others = np.delete(row, i) if sets is None else row[sets[i]]
        better = int((others > target + TIE_TOLERANCE).sum())
        tied = int((others >= target - TIE_TOLERANCE).sum()) - better
        ranking = Ranking.for_target(better, tied)
        out.append(ranking.hit_at(1) if measure == "acc" else ranking.reciprocal_rank())
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", choices=["cosqa", "ncs"])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--exclude", type=Path, nargs="*", default=[])
    parser.add_argument("--cache", type=Path, default=Path("sb-validity.sqlite"))
    parser.add_argument("--only", default=",".join(CANDIDATES),
                        help="candidates to score (default: all)")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from pytest_summarybench.embeddings import get_embedder
    from pytest_summarybench.store import Store

    qset = load(args.dataset, args.files, None, args.exclude)
    embedder = get_embedder("builtin/minilm", Store(args.cache))
    wanted = args.only.split(",")
    print(f"{args.dataset} {' '.join(f.name for f in args.files)}: {len(qset.present)} units, "
          f"{len(qset.queries)} queries")
    print(f"{'candidate':<22} {'condition':<9} {'tau':>6} {'split-half':>10} "
          f"{'bootstrap':>9}  ordering")
    for cond, units in (("present", qset.present), ("stripped", qset.stripped)):
        ids = [u.id for u in units]
        summaries = check.builtin_summaries(units, args.seed)
        real = {m: check.retrieval_rr(qset.queries, ids, texts, embedder)
                for m, texts in summaries.items()}
        vectors = {m: embedder.embed([texts[i] for i in ids], what="summaries")
                   for m, texts in summaries.items()}
        code = {"": embedder.embed([u.content for u in units], what="code")}
        for how in ("masked", "split"):
            if any(f"+{how}" in c for c in wanted):
                code[how] = embedder.embed([rewrite(u, how) for u in units], what="code")
        real_means = {m: float(v.mean()) for m, v in real.items()}
        print(f"{'real queries (MRR)':<22} {cond:<9} {'':>6} {'':>10} {'':>9}  "
              + " > ".join(f"{m.removeprefix('builtin/')} {real_means[m]:.3f}"
                           for m in ordering(real_means)))
        for candidate in wanted:
            spec, _, measure = candidate.partition(":")
            kind, _, how = spec.partition("+")
            sets = candidate_sets(kind, units, code[""], embedder, args.seed)
            per_unit = {m: scores(v, code[how], sets, measure) for m, v in vectors.items()}
            means = {m: float(v.mean()) for m, v in per_unit.items()}
            tau = kendall_tau(real_means, means)
            spread = ceiling(real, {"c": per_unit}, resamples=args.resamples, seed=args.seed)
            shares = [spread[k]["c"].as_dict().get("share_at_least_target", float("nan"))
                      for k in ("split_half", "bootstrap")]
            print(f"{candidate:<22} {cond:<9} "
                  f"{'undef' if tau is None else f'{tau:+.2f}':>6} {shares[0]:>10.3f} "
                  f"{shares[1]:>9.3f}  "
                  + " > ".join(f"{m.removeprefix('builtin/')} {means[m]:.3f}"
                               for m in ordering(means)), flush=True)


if __name__ == "__main__":
    main()
