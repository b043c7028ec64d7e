"""``summarybench add-model`` and ``add-judge``: add a model to summarybench.yaml.

The entry goes at the end of its list with the file's comments where they were (a comment
above the next key stays above it), and the command warns at once about what would
otherwise surface mid-run: a judge of a tested model's family, a hosted model name that
litellm does not list.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
from typing import Any

from ..core.vocabulary import PROVIDERS
from ._common import (
    EXIT_OK,
    CliError,
    add_config_argument,
    config_file,
    load_checked,
    load_document,
    save_document,
    section,
)
from .checks import family_warnings, name_warnings, warn

FAMILY_HELP = ("the model's family for the rule that no judge judges its own family "
               "(openai, anthropic, google, meta, mistral, ... or a name of your own); "
               "default: read from the model name, else the provider. Written as family: "
               "in its entry")


def add_parser(sub: argparse._SubParsersAction) -> None:
    for command, role, what, example in (
            ("add-model", "test", "a model under test", "anthropic/claude-sonnet-4-5"),
            ("add-judge", "judge", "a judge model", "openai/gpt-4o")):
        p = sub.add_parser(
            command, help=f"add {what} to summarybench.yaml",
            description=f"Add {what} (models.{role}) to summarybench.yaml. A judge never "
                        "judges a model of its own family (see docs/evaluators.md#judge-families); "
                        "the command warns when one would, and when litellm does not "
                        "list a hosted model's name.",
            epilog=f"example: summarybench {command} {example}")
        p.add_argument("model", metavar="PROVIDER/MODEL")
        p.add_argument("--api-endpoint", metavar="URL",
                       help="base URL of an OpenAI-compatible endpoint")
        p.add_argument("--temperature", type=float, help="sampling temperature")
        p.add_argument("--id", help="a distinct id when one model is listed twice")
        p.add_argument("--family", metavar="NAME", help=FAMILY_HELP)
        add_config_argument(p)
        p.set_defaults(role=role)


def run(args: argparse.Namespace) -> int:
    provider, sep, name = args.model.partition("/")
    if not sep or not name:
        raise CliError(f"model {args.model!r} is not PROVIDER/MODEL (e.g. openai/gpt-4o)")
    if provider not in PROVIDERS:
        raise CliError(f"unknown provider {provider!r} in {args.model!r}: use one of "
                       f"{', '.join(PROVIDERS)}")
    family = None
    if args.family is not None:
        family = args.family.strip().lower()
        if not family or any(c.isspace() for c in family):
            raise CliError(f"--family {args.family!r}: expected one word, e.g. openai, "
                           f"anthropic, meta or a name of your own")
    path = config_file(args)
    doc = load_document(path)
    models = section(doc, "models")
    if models.get(args.role) is None:
        models[args.role] = []
    entries = models[args.role]
    wanted_id = args.id or f"{provider}/{name}"
    for entry in entries:
        existing = entry.get("id") or f"{entry.get('provider')}/{entry.get('model')}"
        if existing == wanted_id:
            raise CliError(f"{wanted_id} is already in models.{args.role} of {path}")
    from ruamel.yaml.comments import CommentedMap

    entry = CommentedMap(provider=provider, model=name)
    if args.id:
        entry["id"] = args.id
    if args.api_endpoint:
        entry["apiEndpoint"] = args.api_endpoint
    if args.temperature is not None:
        entry["temperature"] = args.temperature
    if family:
        entry["family"] = family
    append_entry(entries, entry)
    save_document(path, doc)
    print(f"added {wanted_id} to models.{args.role} in {path}")
    settings = load_checked(path)
    listed = settings.judge_models() if args.role == "judge" else settings.test_models()
    added = next(m for m in listed if m.id == wanted_id)
    for text in [*name_warnings([added]), *family_warnings(settings, added)]:
        warn(args.command, text)
    from ..llm import required_env_var

    var = required_env_var(added)
    if var and not os.environ.get(var):
        print(f"note: {wanted_id} will need the environment variable {var}", file=sys.stderr)
    return EXIT_OK


def append_entry(entries: Any, entry: Any) -> None:
    """Append the flat mapping ``entry`` to the block sequence ``entries``, moving the
    comments that followed the old last entry (a comment line above the next key, a blank
    line) after the new one.

    ruamel keeps such lines on the last scalar before them; a plain ``append`` would put
    the new entry below them (under the ``# Judges`` comment, as issue 21 found). An
    end-of-line comment of the old last entry stays with it.
    """
    old = _tail_slot(entries[-1]) if len(entries) else None
    entries.append(entry)
    if old is None:
        return
    slots, index = old
    token = slots[index]
    if token is None or "\n" not in token.value:
        return
    own, _, rest = token.value.partition("\n")
    new = _tail_slot(entry)
    if not rest or new is None:
        return
    moved = copy.copy(token)
    moved.value = "\n" + rest
    if own:
        token.value = own + "\n"
    else:
        slots[index] = None
    new[0][new[1]] = moved


def _tail_slot(node: Any) -> tuple[list[Any], int] | None:
    """Where ruamel keeps the comment after ``node``'s last scalar: the slot list and its
    index (2 after a mapping value, 0 after a sequence item); None for an empty node."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if not isinstance(node, (CommentedMap, CommentedSeq)) or not len(node):
        return None
    last = list(node)[-1] if isinstance(node, CommentedMap) else len(node) - 1
    value = node[last]
    if isinstance(value, (CommentedMap, CommentedSeq)) and len(value) \
            and not value.fa.flow_style():
        return _tail_slot(value)
    if isinstance(node, CommentedMap):
        return node.ca.items.setdefault(last, [None, None, None, None]), 2
    return node.ca.items.setdefault(last, [None, None]), 0
