"""Embedding throughput through the project's layer next to bare onnxruntime, same batch,
same run.

Usage::

    python benchmarks/perf/embedding_throughput.py [--rounds N] [--batch-size B]
        [--code-rounds N] [--run-pieces P]

The batch is the default run's own text: the 510 hand-written developer queries of
``fixtures/queries/sample_codebase.jsonl`` plus the docstrings of the sample codebase's
units, each within one 256-piece window, so chunking does no extra work and both sides do
the same model work. "Raw" is what a caller of onnxruntime would write: tokenize the batch
(truncate at 256), pad, run the session B texts at a time, mean-pool, normalise; it is
measured in the order given and length-sorted (the layer sorts), and the faster of the two
is the bar. "Layer" is ``Embedder(MiniLMBackend(), store).embed(texts)`` on a cold cache:
hashing, cache look-up in SQLite, de-duplication, batching by characters, windowing, model
calls sized by word pieces, and writing every vector to the cache. Rounds alternate raw and
layer; the best round of each counts (the least disturbed by other processes), the median
is shown too, and so is throughput per CPU-second of this process (texts / process CPU
time), which other processes' load on a shared machine disturbs far less than wall time.
Last, the median over rounds of the ratio within a round (layer against length-sorted raw
measured a moment apart): when the load swings, the best rounds of two sides may come
from quiet and busy minutes, and this pairing is the steadier reading.
Raw runs on the layer's own session (same options); one more raw line runs on a session
with onnxruntime's default options (memory pattern on), to show what the layer's session
options cost or save. The same layer on a warm cache (every text already embedded, as on
a re-run) is reported as well.

Run with ``PYTHONPATH=<another checkout> python benchmarks/perf/embedding_throughput.py``
it measures that checkout's layer the same way (the before of a change).

Code (``--code-rounds``): the sample codebase's 183 units through the layer (chunked into
windows of up to 256 pieces, model calls of at most ``--run-pieces`` padded pieces) next to
raw onnxruntime running the very same windows length-sorted in calls of B windows (the
layer's former fixed count), alternated like the rest: the figure for long texts, where
the size of a model call matters most.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from pytest_summarybench.embeddings import Embedder
from pytest_summarybench.embeddings.minilm import TOKENIZER_PATH, MiniLMBackend
from pytest_summarybench.store import Store

ROOT = Path(__file__).resolve().parents[2]


def batch_texts() -> tuple[list[str], list[str]]:
    """(one-window texts, code units) of the bundled sample codebase."""
    from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
    from pytest_summarybench.settings import load_settings

    queries = [json.loads(line)["query"] for line in
               (ROOT / "fixtures" / "queries" / "sample_codebase.jsonl").read_text().splitlines()
               if line.strip()]
    from pytest_summarybench.extract import extract_units

    settings = load_settings(None, base_dir=ROOT, families=BUILTIN_FAMILIES)
    units = extract_units(settings.extraction_config()).units
    docstrings = [u.docstring for u in units if u.docstring]
    return queries + docstrings, [u.content for u in units]


def raw_embed(session: Any, tokenizer: Any, texts: list[str], batch: int) -> np.ndarray:
    out = []
    for start in range(0, len(texts), batch):
        encs = tokenizer.encode_batch(texts[start:start + batch])
        ids = np.array([e.ids for e in encs], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                    "token_type_ids": np.zeros_like(ids)})[0]
        w = mask[..., None].astype(np.float32)
        pooled = (hidden * w).sum(axis=1) / np.clip(w.sum(axis=1), 1e-9, None)
        out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
    return np.concatenate(out)


def raw_windows(session: Any, windows: list[list[int]], batch: int) -> np.ndarray:
    """Raw onnxruntime on ready token-id windows, length-sorted, ``batch`` per call."""
    order = sorted(range(len(windows)), key=lambda j: len(windows[j]))
    out = np.empty((len(windows), 384), dtype=np.float32)
    for start in range(0, len(order), batch):
        rows = order[start:start + batch]
        width = max(len(windows[j]) for j in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, j in enumerate(rows):
            ids[r, :len(windows[j])] = windows[j]
            mask[r, :len(windows[j])] = 1
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                    "token_type_ids": np.zeros_like(ids)})[0]
        w = mask[..., None].astype(np.float32)
        pooled = (hidden * w).sum(axis=1) / np.clip(w.sum(axis=1), 1e-9, None)
        out[rows] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return out


def default_session() -> Any:
    """A session with onnxruntime's default options (what a caller writes by hand)."""
    import onnxruntime as ort

    from pytest_summarybench.embeddings.minilm import _packaged_model_path

    return ort.InferenceSession(str(_packaged_model_path()), providers=["CPUExecutionProvider"])


def paired_ratio(layer: list[tuple[float, float]],
                 raw: list[tuple[float, float]]) -> tuple[float, float]:
    """Median over rounds of layer / raw measured in the same round (wall, CPU): steadier
    than best against best when the machine's load changes from minute to minute."""
    return (statistics.median(a[0] / b[0] for a, b in zip(layer, raw, strict=True)),
            statistics.median(a[1] / b[1] for a, b in zip(layer, raw, strict=True)))


def report(rates: dict[str, list[tuple[float, float]]], what: str) -> None:
    for label, pairs in rates.items():
        if not pairs:
            continue
        walls = [w for w, _ in pairs]
        print(f"  {label:<40} best {max(walls):9.1f} {what}/s   median "
              f"{statistics.median(walls):9.1f} {what}/s   best "
              f"{max(c for _, c in pairs):9.1f} {what}/CPU-s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch-size", type=int, default=32,
                        help="texts (or windows) per raw onnxruntime call")
    parser.add_argument("--code-rounds", type=int, default=3)
    parser.add_argument("--run-pieces", type=int, default=None,
                        help="the layer's padded pieces per model call (default: the "
                             "backend's RUN_PIECES)")
    args = parser.parse_args(argv)

    from tokenizers import Tokenizer

    texts, code = batch_texts()
    backend = (MiniLMBackend(run_pieces=args.run_pieces) if args.run_pieces
               else MiniLMBackend())
    _, session = backend.load()  # one session, loaded outside the timings, for both sides
    plain_session = default_session()
    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    by_length = sorted(texts, key=lambda t: len(tokenizer.encode(t).ids))
    assert all(len(w) <= 256 for w in backend.windows(texts)[0]), "a text needs two windows"

    rates: dict[str, list[tuple[float, float]]] = {
        "raw onnxruntime, given order": [], "raw onnxruntime, length-sorted": [],
        "raw, length-sorted, default options": [],
        "layer, cold cache": [], "layer, warm cache": []}

    def timed(table: dict[str, list[tuple[float, float]]], label: str, count: int,
              fn: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        table[label].append((count / wall, count / max(cpu, 1e-9)))
        return result

    n = len(texts)
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            reference = timed(rates, "raw onnxruntime, given order", n,
                              lambda: raw_embed(session, tokenizer, texts, args.batch_size))
            timed(rates, "raw onnxruntime, length-sorted", n,
                  lambda: raw_embed(session, tokenizer, by_length, args.batch_size))
            timed(rates, "raw, length-sorted, default options", n,
                  lambda: raw_embed(plain_session, tokenizer, by_length, args.batch_size))
            store = Store(Path(tmp) / f"cold-{r}.sqlite")
            vectors = timed(rates, "layer, cold cache", n,
                            lambda s=store: Embedder(backend, s).embed(texts))
            timed(rates, "layer, warm cache", n,
                  lambda s=store: Embedder(backend, s).embed(texts))
            store.close()
        agreement = float(np.min(np.sum(vectors * reference, axis=1)))

        windows, _ = backend.windows(code)
        code_rates: dict[str, list[tuple[float, float]]] = {
            "raw onnxruntime, same windows": [], "layer, cold cache": []}
        for r in range(args.code_rounds):
            timed(code_rates, "raw onnxruntime, same windows", len(code),
                  lambda: raw_windows(session, windows, args.batch_size))
            store = Store(Path(tmp) / f"code-{r}.sqlite")
            timed(code_rates, "layer, cold cache", len(code),
                  lambda s=store: Embedder(backend, s).embed(code))
            store.close()

    raws = rates["raw onnxruntime, given order"] + rates["raw onnxruntime, length-sorted"]
    layer = rates["layer, cold cache"]
    ratio = max(w for w, _ in layer) / max(w for w, _ in raws)
    cpu_ratio = max(c for _, c in layer) / max(c for _, c in raws)
    # Also runs against an older checkout (PYTHONPATH), whose backend had a fixed count.
    calls = (f"at most {backend.run_pieces} padded pieces" if hasattr(backend, "run_pieces")
             else f"{getattr(backend, 'run_size', '?')} windows")
    print(f"package: {Path(sys.modules[MiniLMBackend.__module__].__file__ or '').parents[2]}")
    print(f"batch: {n} texts (fixture queries and docstrings), raw batch size "
          f"{args.batch_size}, layer calls of {calls}, {args.rounds} rounds")
    report(rates, "texts")
    print(f"layer / best raw: {ratio:.1%} wall, {cpu_ratio:.1%} per CPU-second "
          f"(bar: at least 90%)")
    paired = paired_ratio(layer, rates["raw onnxruntime, length-sorted"])
    print(f"layer / length-sorted raw of the same round, median over rounds: "
          f"{paired[0]:.1%} wall, {paired[1]:.1%} per CPU-second")
    print(f"min cosine layer vs raw, same text: {agreement:.6f}")
    if args.code_rounds:
        raw_code = code_rates["raw onnxruntime, same windows"]
        layer_code = code_rates["layer, cold cache"]
        print(f"code: {len(code)} units in {len(windows)} windows, raw {args.batch_size} "
              f"windows per call, {args.code_rounds} rounds")
        report(code_rates, "units")
        wall_ratio = max(w for w, _ in layer_code) / max(w for w, _ in raw_code)
        cpu_code = max(c for _, c in layer_code) / max(c for _, c in raw_code)
        print(f"code, layer / raw: {wall_ratio:.1%} wall, {cpu_code:.1%} per CPU-second")
        paired = paired_ratio(layer_code, raw_code)
        print(f"code, layer / raw of the same round, median over rounds: {paired[0]:.1%} "
              f"wall, {paired[1]:.1%} per CPU-second")
    return 0 if max(ratio, cpu_ratio) >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
