"""``summarybench config``: change sampling, which evaluator families run, the downstream
task model and tasks, and the contrastive methods."""

from __future__ import annotations

import argparse
from typing import Any

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
from .checks import family_warnings, name_warnings, say, warn

#: The built-in families, for the help (``--eval`` also takes those the file configures).
_NAMES = [f.name for f in BUILTIN_FAMILIES]

#: What a flag takes to remove its key.
UNSET = "none"


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
                    "that shares a family with a model under test "
                    "(docs/evaluators.md#judge-families), a hosted model name that litellm "
                    "does not list.",
        epilog="example: summarybench config --sample-size 1000 "
               f"--eval {','.join(_NAMES)}")
    p.add_argument("--sample-size", type=int, metavar="N", help="units to sample")
    p.add_argument("--sampling", choices=("random", "stratified", "all"))
    p.add_argument("--seed", type=int)
    p.add_argument("--eval", metavar="FAMILIES",
                   help="comma-separated families to enable (the others are disabled): "
                        f"{', '.join(_NAMES)}, those the file configures, or all")
    p.add_argument("--task-model", metavar="PROVIDER/MODEL",
                   help="the model that performs the downstream tasks "
                        "(evaluation.downstream.completionModel): PROVIDER/MODEL, or the id "
                        f"of a configured model or judge; '{UNSET}' removes it")
    p.add_argument("--task-endpoint", metavar="URL",
                   help="base URL of the task model's OpenAI-compatible endpoint "
                        f"(evaluation.downstream.apiEndpoint); '{UNSET}' removes it")
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
             args.task_endpoint, args.tasks, args.contrastive_methods)
    if all(e is None for e in edits):
        raise CliError("nothing to change: pass --sample-size, --sampling, --seed, --eval, "
                       "--task-model, --task-endpoint, --tasks or --contrastive-methods")
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
    downstream = section(doc, "evaluation", "downstream")
    for key, value in (("completionModel", args.task_model),
                       ("apiEndpoint", args.task_endpoint)):
        if value is None:
            continue
        if value == UNSET:
            downstream.pop(key, None)
            changes.append(f"{key} removed")
        else:
            downstream[key] = value
            changes.append(f"{key}={value}")
    if args.tasks is not None:
        downstream["tasks"] = flow(_listed(args.tasks, "--tasks",
                                           choices("downstream", "tasks")))
        changes.append(f"tasks={','.join(downstream['tasks'])}")
    if args.contrastive_methods is not None:
        methods = _listed(args.contrastive_methods, "--contrastive-methods",
                          choices("contrastive", "methods"))
        section(doc, "evaluation", "contrastive")["methods"] = flow(methods)
        changes.append(f"contrastive methods={','.join(methods)}")
    save_document(path, doc)
    say(f"updated {path}: {', '.join(changes)}")
    # The whole file is checked, not only what changed: it may have been edited by hand.
    settings = load_checked(path)
    listed = [*settings.models.test, *settings.models.judge]
    for text in [*name_warnings(m.to_model_config() for m in listed),
                 *family_warnings(settings), *_task_warnings(settings)]:
        warn(args.command, text)
    return EXIT_OK


def _task_warnings(settings: Any) -> list[str]:
    """A task model that shares a family with every model under test performs no task."""
    from ..roles.task import TaskModelError, same_family_as_all, task_model

    try:
        worker = task_model(settings)
    except TaskModelError as exc:
        return [str(exc)]
    conflict = None if worker is None else same_family_as_all(worker, settings.test_models())
    return [] if conflict is None else [f"{conflict}; downstream will be skipped"]
