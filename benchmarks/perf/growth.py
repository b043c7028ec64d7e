"""Growth with the codebase: time and peak memory of the pipeline's stages at 100, 1,000
and 10,000 units of the Python standard library, with fitted growth exponents.

Usage::

    python benchmarks/perf/growth.py [--sizes 100 1000 10000] [--stdlib DIR]

The codebase is the standard library shipped with this interpreter (code no one here
wrote). For each size the script copies the first source files (sorted paths, tests and
site-packages left out) whose units add up to about that many into a fresh directory, and
then, in a fresh child process per size so that memory figures do not mix, times:

- extraction: ``extract_units`` over those files (tree-sitter, every unit type), in one
  process (``workers=1``), so that the process clock holds all of its work;
- sampling: a stratified sample of half the units (mean of 20 seeds);
- distractor selection: the selection (docs/methods.md#distractor-tiers)
  (``CandidatePool.select_many``, nine distractors) for every unit against all of them, with seeded
  stand-in vectors for code embeddings (embedding throughput has its own benchmark): each unit near
  its file's centre, so the semantic tier has members, as with real embeddings;
- indexing: one model's summaries into a chroma HNSW index (the retrieval evaluator's
  ``prepare``), with the same stand-in vectors;
- aggregation: ``build_report`` (family scores, ranking, bootstrap intervals, pairwise
  tests) over contrastive and retrieval records for five models on every unit.

Each stage prints wall and CPU seconds and the process's peak resident memory after it
(``ru_maxrss``; it includes the interpreter and the libraries). The growth exponent is the
least-squares slope of log(CPU time) over log(units) across the sizes; issue 12 asks for
at most about 1.2, and a peak under 2 GB at 10,000 units.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

STAGES = ("extraction", "sampling", "distractors", "indexing", "aggregation")
MODELS = ("builtin/docstring", "builtin/identifiers", "builtin/lead", "builtin/shuffled",
          "builtin/signature")
EXPONENT_BAR = 1.2
MEMORY_BAR_MB = 2048.0
_SKIP_PARTS = {"test", "tests", "idle_test", "site-packages", "__pycache__", "lib2to3",
               "ensurepip", "turtledemo"}


# -- choosing files (parent process) -------------------------------------------------------
def stdlib_files(stdlib: Path) -> list[Path]:
    """The library's Python sources in sorted order, tests and bundled packages left out."""
    out = []
    for path in sorted(stdlib.rglob("*.py")):
        rel = path.relative_to(stdlib)
        if _SKIP_PARTS & set(rel.parts) or rel.name.startswith("test_"):
            continue
        out.append(path)
    return out


def estimated_units(path: Path) -> int:
    """Functions, methods and classes of at least three lines, plus the file: close to what
    the extractor finds (the real count is printed from the extraction)."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return 0
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return 1 + sum(1 for node in ast.walk(tree) if isinstance(node, kinds)
                   and (node.end_lineno or node.lineno) - node.lineno + 1 >= 3)


def choose(files: list[Path], stdlib: Path, size: int) -> list[Path]:
    chosen: list[Path] = []
    total = 0
    for path in files:
        if total >= size:
            break
        n = estimated_units(path)
        if n:
            chosen.append(path)
            total += n
    if total < size:
        raise SystemExit(f"the standard library at {stdlib} has only about {total} units")
    return chosen


# -- the stages (child process) ---------------------------------------------------------
def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(fn: Callable[[], Any]) -> tuple[Any, dict[str, float]]:
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu,
                   "peak_mb": peak_mb()}


def child(codebase: Path, work: Path) -> dict[str, Any]:
    # Import what the stages use lazily before any clock starts: import time is not growth.
    import chromadb  # noqa: F401
    import numpy as np
    import scipy.sparse  # noqa: F401
    import scipy.stats  # noqa: F401

    from pytest_summarybench.aggregate.ranking import ReportInputs, build_report
    from pytest_summarybench.context import RunContext
    from pytest_summarybench.evaluators.contrastive.distractors import CandidatePool
    from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
    from pytest_summarybench.evaluators.retrieval.embedding import ADD_BATCH, HNSW
    from pytest_summarybench.extract import extract_units, sample_units
    from pytest_summarybench.schemas import (
        CodebaseInfo,
        GeneratedSummary,
        GenerationMetadata,
        ScoreRecord,
    )
    from pytest_summarybench.settings import load_settings
    from pytest_summarybench.store import Store

    settings = load_settings(None, {"codebase.root": str(codebase),
                                    "codebase.languages": ["python"],
                                    "output.directory": str(work / "out")}, base_dir=work,
                             families=BUILTIN_FAMILIES)
    stages: dict[str, dict[str, float]] = {}
    # One process: the stage's growth, measured with this process's clock (worker
    # processes would take their CPU time out of it).
    one_process = settings.extraction_config().model_copy(update={"workers": 1})
    result, stages["extraction"] = timed(lambda: extract_units(one_process))
    units = result.units
    n = len(units)
    # Sampling takes milliseconds: timed over 20 repetitions (each with its own seed) and
    # divided, so that clock resolution and one scheduler hiccup do not set its exponent.
    _, stages["sampling"] = timed(lambda: [
        sample_units(units, strategy="stratified", size=n // 2, seed=seed) for seed in range(20)])
    stages["sampling"]["wall_s"] /= 20
    stages["sampling"]["cpu_s"] /= 20

    # Stand-in code vectors with the structure real ones have: units of a file sit near the
    # file's centre (cosine about 0.6 to each other), so the semantic tier (0.5, 0.95) has
    # members and its neighbour search is exercised, not skipped.
    rng = np.random.default_rng(0)
    paths = sorted({u.path for u in units})
    centres = rng.standard_normal((len(paths), 384))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    where = {p: i for i, p in enumerate(paths)}
    noise = rng.standard_normal((n, 384))
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    vectors = (centres[[where[u.path] for u in units]] + 0.8 * noise).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ctx = RunContext(settings, Store(work / "store.sqlite"), "growth")

    stages_extra: dict[str, float] = {}

    def distractors() -> int:
        sets = CandidatePool(units, vectors).select_many(units, 9, ctx)
        stages_extra["semantic_tier_share"] = (
            sum(s.tiers.count(3) for s in sets.values())
            / max(1, sum(len(s.tiers) for s in sets.values())))
        return sum(len(s.distractor_ids) for s in sets.values())

    _, stages["distractors"] = timed(distractors)

    def indexing() -> int:

        client = chromadb.PersistentClient(
            path=str(work / "chroma"), settings=chromadb.Settings(anonymized_telemetry=False))
        collection = client.create_collection("growth", configuration=cast(Any, {"hnsw": HNSW}),
                                              embedding_function=None)
        for start in range(0, n, ADD_BATCH):
            part = units[start:start + ADD_BATCH]
            collection.add(ids=[u.id for u in part],
                           embeddings=vectors[start:start + ADD_BATCH].tolist(),
                           documents=[f"{u.name}: {u.docstring or ''}" for u in part],
                           metadatas=[{"path": u.path, "name": u.name} for u in part])
        return int(collection.count())

    indexed, stages["indexing"] = timed(indexing)
    assert indexed == n, (indexed, n)

    def aggregation() -> int:
        from datetime import datetime, timezone

        score = np.random.default_rng(1)
        records: list[ScoreRecord] = []
        summaries: dict[tuple[str, str], GeneratedSummary] = {}
        for m, model in enumerate(MODELS):
            for u in units:
                p = 0.3 + 0.1 * m
                records.append(ScoreRecord(unit_id=u.id, model_id=model,
                                           evaluator="contrastive/embedding",
                                           metrics={"correct": float(score.random() < p)}))
                rr = float(score.random() < p)
                records.append(ScoreRecord(unit_id=u.id, model_id=model,
                                           evaluator="retrieval/embedding",
                                           metrics={"hit@1": rr, "hit@5": rr,
                                                    "reciprocal_rank": rr}))
                summaries[(u.id, model)] = GeneratedSummary(
                    id=f"{u.id}-{m}", code_unit_id=u.id, model_id=model,
                    summary=f"{u.name} in {u.path}",
                    generation_metadata=GenerationMetadata(
                        model_name=model, prompt_version="growth", temperature=0.0,
                        max_tokens=100, generated_at="2026-01-01T00:00:00Z", latency_ms=1.0,
                        input_tokens=10, output_tokens=5, cost=0.0))
        now = datetime.now(timezone.utc)
        inputs = ReportInputs(
            run_id="growth", name="growth", config=settings.benchmark_config(),
            codebase=CodebaseInfo(name="stdlib", languages=["python"], total_code_units=n,
                                  sampled_code_units=n),
            records=records, model_ids=list(MODELS), units=units, summaries=summaries,
            started_at=now, finished_at=now)
        return len(build_report(inputs).rankings)

    ranked, stages["aggregation"] = timed(aggregation)
    assert ranked == len(MODELS)
    return {"units": n, "files": len({u.path for u in units}), "stages": stages,
            **stages_extra,
            "peak_mb": peak_mb()}


# -- driver ---------------------------------------------------------------------------------
def exponent(sizes: list[int], values: list[float]) -> float:
    """Least-squares slope of log(value) over log(size)."""
    xs = [math.log(s) for s in sizes]
    ys = [math.log(max(v, 1e-6)) for v in values]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return (sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
            / sum((x - mx) ** 2 for x in xs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--stdlib", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--child", type=Path, nargs=2, metavar=("CODEBASE", "WORK"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    files = stdlib_files(args.stdlib)
    print(f"codebase: Python {sys.version.split()[0]} standard library at {args.stdlib} "
          f"({len(files)} source files outside tests)")
    rows: list[dict[str, Any]] = []
    for size in sorted(args.sizes):
        with tempfile.TemporaryDirectory(prefix="sb-growth-") as tmp:
            code, work = Path(tmp) / "code", Path(tmp) / "work"
            for path in choose(files, args.stdlib, size):
                dest = code / path.relative_to(args.stdlib)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
            work.mkdir()
            proc = subprocess.run([sys.executable, __file__, "--child", str(code), str(work)],
                                  capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise SystemExit(f"size {size} failed:\n{proc.stderr[-3000:]}")
            row = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(f"\n== about {size} units: {row['units']} extracted from {row['files']} files")
        for stage in STAGES:
            s = row["stages"][stage]
            print(f"  {stage:<12} {s['wall_s']:8.3f}s wall {s['cpu_s']:8.3f}s CPU   "
                  f"peak RSS after it {s['peak_mb']:7.0f} MB")
        print(f"  (distractors from the semantic tier: {row['semantic_tier_share']:.0%})")
    if len(rows) < 2:
        return
    sizes = [r["units"] for r in rows]
    print(f"\n== growth exponents over {sizes} units (slope of log CPU time on log units; "
          f"bar <= {EXPONENT_BAR})")
    for stage in STAGES:
        cpu = [r["stages"][stage]["cpu_s"] for r in rows]
        wall = [r["stages"][stage]["wall_s"] for r in rows]
        k = exponent(sizes, cpu)
        upper = exponent(sizes[-2:], cpu[-2:])
        print(f"  {stage:<12} {k:5.2f} (CPU), {exponent(sizes, wall):5.2f} (wall); "
              f"last step alone {upper:5.2f} -> {'met' if k <= EXPONENT_BAR else 'NOT met'}")
    top = rows[-1]
    print(f"\npeak RSS at {top['units']} units: {top['peak_mb']:.0f} MB (bar < "
          f"{MEMORY_BAR_MB:.0f} MB) -> {'met' if top['peak_mb'] < MEMORY_BAR_MB else 'NOT met'}")


if __name__ == "__main__":
    main()
