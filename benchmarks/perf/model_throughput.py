"""Windows a second through ``builtin/minilm`` against its call sizes and onnxruntime's
session options, variants alternated in one process (issue 32, model throughput).

Usage::

    python benchmarks/perf/model_throughput.py [--rounds 3] [--windows 2] [--variants ...]

The work is the bundled sample codebase's code cut into the model's windows as the
distractor search cuts it (``--windows 2``: each unit's first 2 windows, as the shortlists
are ranked; ``--windows 8``: whole, as targets and distractors are embedded): 238 windows
of up to 256 word pieces, some 150 pieces a window on average. Each variant runs the same
windows through ``MiniLMBackend.runs`` and ``run_windows`` (the layer's own batching and
pooling) on a session built with its options; rounds alternate the variants, so a change
of the machine's load falls on every variant alike. Printed per variant: the best and
median windows a second (wall), windows per CPU-second of this process (onnxruntime's
threads included), the median within a round of its wall rate over the base's (the
steadier reading on a shared machine), and whether its vectors are bit for bit the base's.

Variants (``--variants``, names below; ``base`` is always run):

- ``base``: one call at a time of ``RUN_PIECES`` padded pieces, every graph
  optimisation, onnxruntime's default intra-op threads (one per core), sequential
  execution: the layer before its calls ran on lanes;
- ``pieces=N``: calls of at most N padded pieces;
- ``threads=N``: N intra-op threads;
- ``nospin``: intra-op threads that sleep instead of spinning between calls
  (``session.intra_op.allow_spinning`` 0);
- ``opt=basic`` / ``opt=extended``: a lower graph optimisation level;
- ``parallel``: onnxruntime's parallel execution mode;
- ``lanes=N``: N Python threads calling one session at once, each call on one intra-op
  thread (``threads=1``), each thread taking the next call: what the layer does now
  (``MiniLMBackend.lanes``, one per core).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

DEFAULT_VARIANTS = ["pieces=256", "pieces=1024", "pieces=2048", "threads=1", "nospin",
                    "opt=extended", "parallel", "lanes=2"]


def session(options: dict[str, str]) -> Any:
    """A session on the packaged weights with the layer's options, changed by ``options``."""
    import onnxruntime as ort

    from pytest_summarybench.embeddings.minilm import _packaged_model_path

    opts = ort.SessionOptions()
    opts.graph_optimization_level = {
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC}[options.get("opt", "all")]
    opts.log_severity_level = 3
    opts.enable_mem_pattern = False
    if "threads" in options:
        opts.intra_op_num_threads = int(options["threads"])
    if "nospin" in options:
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if "parallel" in options:
        opts.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    return ort.InferenceSession(str(_packaged_model_path()), sess_options=opts,
                                providers=["CPUExecutionProvider"])


class Variant:
    def __init__(self, name: str) -> None:
        from pytest_summarybench.embeddings.minilm import MiniLMBackend

        self.name = name
        options: dict[str, str] = {}
        if name != "base":
            key, _, value = name.partition("=")
            options[key] = value
        self.lanes = int(options.get("lanes", "1"))
        if self.lanes > 1:
            options["threads"] = "1"
        self.backend = MiniLMBackend(run_pieces=int(options.get("pieces", "0")) or
                                     MiniLMBackend().run_pieces)
        self.backend.load()
        self.backend._session = session(options)  # the variant's options, same weights
        self.rates: list[tuple[float, float]] = []
        self.ratios: list[float] = []
        self.identical = True

    def embed(self, windows: list[list[int]]) -> np.ndarray:
        runs = self.backend.runs(windows)
        out = np.empty((len(windows), 384), dtype=np.float32)

        def one(run: list[int]) -> None:
            out[run] = self.backend.run_windows([windows[j] for j in run])

        if self.lanes == 1:
            for run in runs:
                one(run)
        else:
            with ThreadPoolExecutor(self.lanes) as pool:
                list(pool.map(one, runs))
        return out


def main(argv: list[str] | None = None) -> int:
    from embedding_throughput import batch_texts

    from pytest_summarybench.embeddings.minilm import MiniLMBackend

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--windows", type=int, default=2,
                        help="windows of each unit embedded (2: as the shortlists are "
                             "ranked; 8: whole)")
    parser.add_argument("--variants", nargs="*", default=DEFAULT_VARIANTS)
    args = parser.parse_args(argv)

    _, code = batch_texts()
    windows, _ = MiniLMBackend(max_windows=args.windows).windows(code)
    print(f"{len(windows)} windows of {len(code)} units, "
          f"{sum(len(w) for w in windows) / len(windows):.0f} pieces a window on average; "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    variants = [Variant("base"), *(Variant(n) for n in args.variants if n != "base")]
    reference = variants[0].embed(windows)  # also warms the base session up
    for v in variants[1:]:
        v.embed(windows[:8])  # each session's first call outside the timings
    for r in range(args.rounds):
        base_rate = 0.0
        for v in variants:
            wall, cpu = time.perf_counter(), time.process_time()
            vectors = v.embed(windows)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            rate = len(windows) / wall
            v.rates.append((rate, len(windows) / max(cpu, 1e-9)))
            if v is variants[0]:
                base_rate = rate
            v.ratios.append(rate / base_rate)
            v.identical = v.identical and bool(np.array_equal(vectors, reference))
        print(f"round {r + 1}: " + ", ".join(f"{v.name} {v.rates[-1][0]:.1f}"
                                              for v in variants)
              + f" windows/s; load average {os.getloadavg()[0]:.1f}", flush=True)
    print(f"{'variant':<14} {'best w/s':>9} {'median w/s':>11} {'w/CPU-s':>8} "
          f"{'vs base':>8}  vectors")
    for v in variants:
        walls = [w for w, _ in v.rates]
        print(f"{v.name:<14} {max(walls):9.1f} {statistics.median(walls):11.1f} "
              f"{statistics.median(c for _, c in v.rates):8.1f} "
              f"{statistics.median(v.ratios):8.2f}  "
              f"{'identical' if v.identical else 'DIFFER'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
