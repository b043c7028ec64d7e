"""``summarybench config``: change sampling, which evaluator families run, the downstream
task model and tasks, and the contrastive methods."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.family import parse_families
from ..evaluators.registry import BUILTIN_FAMILIES
from ._common import (
    EXIT_FAILURE,
    EXIT_OK,
    UNSET,
    CliError,
    add_config_argument,
    cli_families,
    config_file,
    edited_document,
    endpoint_arg,
    load_checked,
    section,
    text_arg,
)
from .checks import config_warnings, say, warn

#: The built-in families, for the help (``--eval`` also takes those the file configures).
_NAMES = [f.name for f in BUILTIN_FAMILIES]



def flow(items: list[str]) -> Any:
    """A list written in flow style (``[a, b]``), as the template writes its lists."""
    from ruamel.yaml.comments import CommentedSeq

    seq = CommentedSeq(items)
    seq.fa.set_flow_style()
    return seq


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "config", help="change sampling, the families, the task model or contrastive methods",
        description="Edit evaluation settings in summarybench.yaml (comments are kept): "
                    "sampling, the families that run, the downstream task model and tasks, "
                    "the contrastive methods; then warn about the models it lists: a judge "
                    "or the task model that shares a family with a model under test "
                    "(docs/evaluators.md#judge-families), a hosted model name that litellm "
                    "does not list. Without a flag, only check the whole file: exit 0 when "
                    "it is valid with nothing to warn about, 1 when it warned, 2 when it "
                    "does not validate.",
        epilog="example: summarybench config --sample-size 1000 "
               f"--eval {','.join(_NAMES)}")
    p.add_argument("--sample-size", type=int, metavar="N", help="units to sample")
    p.add_argument("--sampling", choices=("random", "stratified", "all"))
    p.add_argument("--seed", type=int)
    p.add_argument("--eval", metavar="FAMILIES",
                   help="comma-separated families to enable (the others are disabled): "
                        f"{', '.join(_NAMES)}, those the file configures, or all")
    p.add_argument("--task-model", metavar="PROVIDER/MODEL", type=text_arg,
                   help="the model that performs the downstream tasks "
                        "(evaluation.downstream.completionModel): PROVIDER/MODEL, or the id "
                        f"of a configured model or judge; '{UNSET}' removes it")
    p.add_argument("--task-endpoint", metavar="URL", type=endpoint_arg,
                   help="base URL of the task model's OpenAI-compatible endpoint "
                        f"(evaluation.downstream.apiEndpoint); '{UNSET}' removes it")
    p.add_argument("--task-family", metavar="NAME", type=text_arg,
                   help="the task model's family for the family rule (evaluation.downstream."
                        "family), when the one read from its name or provider is shared "
                        f"with a model under test; '{UNSET}' removes it")
    p.add_argument("--tasks", metavar="TASKS",
                   help="comma-separated downstream tasks (evaluation.downstream.tasks: "
                        "completion, function selection, bug localisation)")
    p.add_argument("--contrastive-methods", metavar="METHODS",
                   help="comma-separated contrastive methods (evaluation.contrastive."
                        "methods; llm asks the helper, a judge of another family)")
    add_config_argument(p)


def choices(family: str, key: str) -> tuple[str, ...]:
    """The names a list setting of ``evaluation.<family>`` takes, read from the ``Literal``
    items of the family's declared settings section, so that this command never disagrees
    with it."""
    from typing import get_args

    section = next(f for f in BUILTIN_FAMILIES if f.name == family).section()
    field = section.model_fields[key].annotation
    return tuple(get_args(get_args(field)[0]))


def _listed(value: str, flag: str, allowed: tuple[str, ...]) -> list[str]:
    """A comma-separated list of ``allowed`` names, or a CliError naming them."""
    chosen = list(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))
    unknown = [v for v in chosen if v not in allowed]
    if not chosen or unknown:
        raise CliError(f"{flag} {value!r}: expected a comma-separated list of "
                       f"{', '.join(allowed)}"
                       + (f" ({', '.join(unknown)} is not one)" if unknown else ""))
    return chosen


def run(args: argparse.Namespace) -> int:
    edits = (args.sample_size, args.sampling, args.seed, args.eval, args.task_model,
             args.task_endpoint, args.task_family, args.tasks, args.contrastive_methods)
    if all(e is None for e in edits):
        return check_file(args)
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
    with edited_document(path) as doc:
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
        downstream = section(doc, "evaluation", "downstream")
        for key, value in (("completionModel", args.task_model),
                           ("apiEndpoint", args.task_endpoint),
                           ("family", args.task_family)):
            if value is None:
                continue
            label = "task model family" if key == "family" else key
            if value == UNSET:
                downstream.pop(key, None)
                changes.append(f"{label} removed")
            else:
                downstream[key] = value
                changes.append(f"{label}={value}")
        if args.tasks is not None:
            downstream["tasks"] = flow(_listed(args.tasks, "--tasks",
                                               choices("downstream", "tasks")))
            changes.append(f"tasks={','.join(downstream['tasks'])}")
        if args.contrastive_methods is not None:
            methods = _listed(args.contrastive_methods, "--contrastive-methods",
                              choices("contrastive", "methods"))
            section(doc, "evaluation", "contrastive")["methods"] = flow(methods)
            changes.append(f"contrastive methods={','.join(methods)}")
    say(f"updated {path}: {', '.join(changes)}")
    # The whole file is checked, not only what changed: it may have been edited by hand.
    settings = load_checked(path)
    for text in config_warnings(settings):
        warn(args.command, text)
    return EXIT_OK


def check_file(args: argparse.Namespace) -> int:
    """``summarybench config`` without a change: check the whole file (it does not validate:
    exit 2 with every error) and print its warnings; exit 1 when it warned."""
    path = config_file(args)
    settings = load_checked(path)
    found = config_warnings(settings)
    for text in found:
        warn(args.command, text)
    if found:
        say(f"checked {path}: valid, {len(found)} warning{'s' if len(found) != 1 else ''} "
              "above")
        return EXIT_FAILURE
    say(f"checked {path}: valid, nothing to warn about (`summarybench doctor` asks the "
          "models themselves)")
    return EXIT_OK
