"""``summarybench init``: write a commented summarybench.yaml and create the store."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..core.printable import shown_path
from ..report.files import write_text_atomic
from ._common import (
    CONFIG_FILE,
    EXIT_OK,
    CliError,
    config_present,
    load_checked,
    output_path,
    text_arg,
)
from .checks import say

TEMPLATE = """\
# summarybench configuration (every key: docs/configuration.md#summarybenchyaml). Edit
# freely; comments are kept by `summarybench add-model`, `add-judge` and `config`.
name: {name}

codebase:
  # The code to benchmark; paths below are relative to this file.
  root: {root}
  # Glob patterns relative to root; empty means every file of a known language.
  include: []
  exclude:
    - "**/node_modules/**"
    - "**/vendor/**"
    - "**/.venv/**"
    - "**/dist/**"
    - "**/build/**"

extraction:
  types: [function, class, method, file]
  minLines: 3
  maxLines: 500
  skipGenerated: true
  skipTests: true
  # Remove each unit's own docstring from the code models see (they could copy it).
  stripDocstrings: true

models:
  # Models under test (`summarybench add-model PROVIDER/MODEL`). With none, the offline
  # builtin/* baselines run.
  test: []
  # Judges (`summarybench add-judge PROVIDER/MODEL`); never of a tested model's family.
  judge: []

evaluation:
  sampleSize: 100
  sampling: stratified  # random | stratified (by language and code type) | all
  seed: 0
  parallel: 4           # concurrent calls per model
  judge:
    enabled: true
    pairwise: true
  contrastive:
    enabled: true
    distractors: 9
    methods: [embedding]
  retrieval:
    enabled: true
    queriesPerUnit: 5
    kValues: [1, 3, 5, 10]
  downstream:
    enabled: true
    tasks: [completion, bug_localisation, function_selection]

# How evaluator families combine into the overall score (docs/methods.md#weights).
weights:
  judge: 0.30
  contrastive: 0.25
  retrieval: 0.25
  downstream: 0.20

output:
  directory: ./summarybench-results
  formats: [markdown, json, html]
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "init", help="write a commented summarybench.yaml and create the store",
        description="Create summarybench.yaml for a codebase and an empty store.",
        epilog='example: summarybench init --name "My Benchmark" --codebase ./src')
    p.add_argument("--name", required=True, type=text_arg, help="the benchmark's name")
    p.add_argument("--codebase", required=True, metavar="PATH", type=text_arg,
                   help="the code to benchmark")
    p.add_argument("--config", metavar="PATH", default=CONFIG_FILE,
                   help=f"file to write (default: ./{CONFIG_FILE})")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")


def run(args: argparse.Namespace) -> int:
    config = Path(args.config)
    codebase = Path(args.codebase)
    if not codebase.is_dir():
        raise CliError(f"codebase {shown_path(args.codebase)} is not a readable directory: "
                       "pass the folder that holds the code")
    if config_present(config) and not args.force:
        raise CliError(f"{shown_path(config)} already exists: edit it, or pass --force to "
                       "overwrite it")
    output_path(args.config, instead="move it away, or pass another --config")
    root = Path(_relative(codebase.resolve(), config.resolve().parent))
    write_text_atomic(config, TEMPLATE.format(name=json.dumps(args.name),
                                              root=json.dumps(root.as_posix())))
    settings = load_checked(config)
    from ..store import Store

    store = Store(settings.store_path)
    store.execute("SELECT 1")
    store.close()
    say(f"wrote {config} and created the store {settings.store_path}")
    print("next: summarybench add-model PROVIDER/MODEL, then summarybench doctor (one cheap "
          "question to each model), then summarybench generate")
    return EXIT_OK


def _relative(path: Path, base: Path) -> str:
    import os

    try:
        return os.path.relpath(path, base)
    except ValueError:  # another drive on Windows
        return str(path)
