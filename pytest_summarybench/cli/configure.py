"""``summarybench config``: change sampling and which evaluator families run."""

from __future__ import annotations

import argparse

from ..core.family import parse_families
from ..evaluators.registry import BUILTIN_FAMILIES
from ._common import (
    EXIT_OK,
    CliError,
    add_config_argument,
    cli_families,
    config_file,
    load_checked,
    load_document,
    save_document,
    section,
)
from .checks import family_warnings, name_warnings, warn

#: The built-in families, for the help (``--eval`` also takes those the file configures).
_NAMES = [f.name for f in BUILTIN_FAMILIES]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "config", help="change sample size, sampling, seed or evaluator families",
        description="Edit evaluation settings in summarybench.yaml (comments are kept), "
                    "then warn about the models it lists: a judge that shares a family "
                    "with a model under test (docs/evaluators.md#judge-families), a hosted model "
                    "name that litellm does not list.",
        epilog="example: summarybench config --sample-size 1000 "
               f"--eval {','.join(_NAMES)}")
    p.add_argument("--sample-size", type=int, metavar="N", help="units to sample")
    p.add_argument("--sampling", choices=("random", "stratified", "all"))
    p.add_argument("--seed", type=int)
    p.add_argument("--eval", metavar="FAMILIES",
                   help="comma-separated families to enable (the others are disabled): "
                        f"{', '.join(_NAMES)}, those the file configures, or all")
    add_config_argument(p)


def run(args: argparse.Namespace) -> int:
    if args.sample_size is None and args.sampling is None and args.seed is None \
            and args.eval is None:
        raise CliError("nothing to change: pass --sample-size, --sampling, --seed or --eval")
    if args.sample_size is not None and args.sample_size <= 0:
        raise CliError(f"--sample-size {args.sample_size}: expected a positive integer")
    path = config_file(args)
    # The built-in families and those the file configures (of a plugin's, maybe).
    names = [f.name for f in cli_families(path)]
    chosen: list[str] | None = None
    if args.eval is not None:
        try:
            chosen = parse_families(args.eval, names)
        except ValueError:
            raise CliError(f"--eval {args.eval!r}: expected a comma-separated list of "
                           f"{', '.join(names)} or 'all'") from None
    doc = load_document(path)
    evaluation = section(doc, "evaluation")
    changes = []
    if args.sample_size is not None:
        evaluation["sampleSize"] = args.sample_size
        changes.append(f"sampleSize={args.sample_size}")
    if args.sampling is not None:
        evaluation["sampling"] = args.sampling
        changes.append(f"sampling={args.sampling}")
    if args.seed is not None:
        evaluation["seed"] = args.seed
        changes.append(f"seed={args.seed}")
    if chosen is not None:
        for family in names:
            section(doc, "evaluation", family)["enabled"] = family in chosen
        changes.append(f"families={','.join(chosen)}")
    save_document(path, doc)
    print(f"updated {path}: {', '.join(changes)}")
    # The whole file is checked, not only what changed: it may have been edited by hand.
    settings = load_checked(path)
    listed = [*settings.models.test, *settings.models.judge]
    for text in [*name_warnings(m.to_model_config() for m in listed),
                 *family_warnings(settings)]:
        warn(args.command, text)
    return EXIT_OK
