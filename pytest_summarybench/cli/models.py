"""``summarybench add-model``, ``add-judge``, ``set-model``, ``remove-model`` and
``remove-judge``: the models lists of summarybench.yaml, edited without opening it.

An entry goes at the end of its list with the file's comments where they were (a comment
above the next key stays above it; removing the last entry keeps it too), and the commands
warn at once about what would otherwise surface mid-run: a judge of a tested model's
family, a hosted model name that litellm does not list. A built-in name that does not
exist (``builtin/docstrin``) is refused where it is added.
"""

from __future__ import annotations

import argparse
import copy
import os
import re
import sys
from typing import Any

from ..core.vocabulary import PROVIDERS
from ..roles.task import task_warnings
from ._common import (
    EXIT_OK,
    UNSET,
    CliError,
    add_config_argument,
    config_file,
    edited_document,
    endpoint_arg,
    load_checked,
    section,
    text_arg,
)
from .checks import family_warnings, name_warnings, say, warn

FAMILY_HELP = ("the model's family for the rule that no judge judges its own family "
               "(openai, anthropic, google, meta, mistral, ... or a name of your own); "
               "default: read from the model name, else the provider. Written as family: "
               "in its entry")
KEY_HELP = ("the environment variable that holds the model's key (default: the "
            "provider's, such as OPENAI_API_KEY; a model at a local --api-endpoint needs "
            "none unless this names one). The key itself is never written in the file")
ROLES = {"test": "models under test", "judge": "judges"}


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
        p.add_argument("model", metavar="PROVIDER/MODEL", type=text_arg)
        p.add_argument("--api-endpoint", metavar="URL", type=endpoint_arg,
                       help="base URL of an OpenAI-compatible endpoint (http:// or https://)")
        p.add_argument("--api-key-env", metavar="VAR", type=text_arg, help=KEY_HELP)
        p.add_argument("--temperature", type=float, help="sampling temperature")
        p.add_argument("--id", type=text_arg,
                       help="a distinct id when one model is listed twice")
        p.add_argument("--family", metavar="NAME", type=text_arg, help=FAMILY_HELP)
        add_config_argument(p)
        p.set_defaults(role=role, action="add")

    p = sub.add_parser(
        "set-model", help="change a model's or judge's entry in summarybench.yaml",
        description="Change the entry of a configured model under test or judge (by its id, "
                    f"as `add-model` printed it). A value of '{UNSET}' removes the key "
                    "(--family none: read the family from the model name again).",
        epilog="example: summarybench set-model openai/fake-judge --family gamma")
    p.add_argument("model", metavar="ID", type=text_arg)
    p.add_argument("--family", metavar="NAME", type=text_arg, help=FAMILY_HELP)
    p.add_argument("--api-endpoint", metavar="URL", type=endpoint_arg,
                   help="base URL of an OpenAI-compatible endpoint (http:// or https://)")
    p.add_argument("--api-key-env", metavar="VAR", type=text_arg, help=KEY_HELP)
    p.add_argument("--temperature", type=float, help="sampling temperature")
    add_config_argument(p)
    p.set_defaults(role=None, action="set")

    for command, role in (("remove-model", "test"), ("remove-judge", "judge")):
        p = sub.add_parser(
            command, help=f"remove one of the {ROLES[role]} from summarybench.yaml",
            description=f"Remove an entry of models.{role} (by its id) from "
                        "summarybench.yaml; comments stay where they were.",
            epilog=f"example: summarybench {command} openai/gpt-4o")
        p.add_argument("model", metavar="ID", type=text_arg)
        add_config_argument(p)
        p.set_defaults(role=role, action="remove")


def run(args: argparse.Namespace) -> int:
    if args.action == "set":
        return _set(args)
    if args.action == "remove":
        return _remove(args)
    return _add(args)


def _family(value: str | None) -> str | None:
    if value is None:
        return None
    family = value.strip().lower()
    if not family or any(c.isspace() for c in family):
        raise CliError(f"--family {value!r}: expected one word, e.g. openai, anthropic, meta "
                       "or a name of your own")
    return family


def _key_env(value: str | None) -> str | None:
    if value is None or value == UNSET:
        return value
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        raise CliError(f"--api-key-env {value!r}: expected the name of an environment "
                       "variable (e.g. MY_GATEWAY_KEY), not a key")
    return value


def entry_id(entry: Any) -> str:
    return str(entry.get("id") or f"{entry.get('provider')}/{entry.get('model')}")


def check_builtin(provider: str, name: str, role: str) -> None:
    """Refuse a built-in name that does not exist, and a built-in judge, where they are
    added (they failed only in ``generate``, or were skipped at run time)."""
    if provider != "builtin":
        return
    from ..generate.builtin import BUILTIN_NAMES

    if role == "judge":
        raise CliError(f"builtin/{name}: built-in summarizers cannot judge; add a model "
                       "served by a provider (e.g. summarybench add-judge openai/gpt-4o)")
    if name not in BUILTIN_NAMES:
        import difflib

        close = difflib.get_close_matches(name, BUILTIN_NAMES, n=1, cutoff=0.6)
        hint = f"did you mean builtin/{close[0]}? " if close else ""
        raise CliError(f"builtin/{name} is not a built-in summarizer: {hint}the built-in "
                       f"ones are {', '.join('builtin/' + n for n in BUILTIN_NAMES)}")


def _add(args: argparse.Namespace) -> int:
    provider, sep, name = args.model.partition("/")
    if not sep or not name:
        raise CliError(f"model {args.model!r} is not PROVIDER/MODEL (e.g. openai/gpt-4o)")
    if provider not in PROVIDERS:
        raise CliError(f"unknown provider {provider!r} in {args.model!r}: use one of "
                       f"{', '.join(PROVIDERS)}")
    check_builtin(provider, name, args.role)
    family = _family(args.family)
    key_env = _key_env(args.api_key_env)
    path = config_file(args)
    with edited_document(path) as doc:
        models = section(doc, "models")
        if models.get(args.role) is None:
            models[args.role] = []
        entries = models[args.role]
        wanted_id = args.id or f"{provider}/{name}"
        for entry in entries:
            if entry_id(entry) == wanted_id:
                raise CliError(f"{wanted_id} is already in models.{args.role} of {path}; "
                               f"change its entry with `summarybench set-model {wanted_id} "
                               "--family NAME` (or --api-endpoint URL, --api-key-env VAR)")
        from ruamel.yaml.comments import CommentedMap

        entry = CommentedMap(provider=provider, model=name)
        if args.id:
            entry["id"] = args.id
        if args.api_endpoint:
            entry["apiEndpoint"] = args.api_endpoint
        if key_env and key_env != UNSET:
            entry["apiKeyEnv"] = key_env
        if args.temperature is not None:
            entry["temperature"] = args.temperature
        if family:
            entry["family"] = family
        append_entry(entries, entry)
    say(f"added {wanted_id} to models.{args.role} in {path}")
    _after_change(args.command, path, wanted_id, args.role)
    return EXIT_OK


def _after_change(command: str, path: Any, model_id: str, role: str) -> None:
    """The warnings about the entry as it now is, and the key it will need."""
    settings = load_checked(path)
    listed = settings.judge_models() if role == "judge" else settings.test_models()
    changed = next((m for m in listed if m.id == model_id), None)
    if changed is None:
        return  # removed since by another command: nothing to warn about
    for text in [*name_warnings([changed]), *family_warnings(settings, changed),
                 *task_warnings(settings)]:
        warn(command, text)
    from ..llm import required_env_var

    var = required_env_var(changed)
    if var and not os.environ.get(var):
        say(f"note: {model_id} will need the environment variable {var}", error=True)


def _find(doc: Any, model_id: str, path: Any, roles: tuple[str, ...]) -> list[tuple[str, int]]:
    """(role, index) of every entry with ``model_id`` in the ``roles`` lists, or a
    CliError naming the ids there are."""
    models = doc.get("models") or {}
    found = [(role, i) for role in roles for i, e in enumerate(models.get(role) or [])
             if entry_id(e) == model_id]
    if found:
        return found
    listed = [entry_id(e) for role in roles for e in models.get(role) or []]
    where = " or ".join(f"models.{r}" for r in roles)
    raise CliError(f"{model_id} is not in {where} of {path}; "
                   + (f"its entries are {', '.join(listed)}" if listed else "it lists none")
                   + " (ids as `add-model` printed them: PROVIDER/MODEL, or the --id given)")


def _set(args: argparse.Namespace) -> int:
    changes = {"family": _family(args.family) if args.family != UNSET else UNSET,
               "apiEndpoint": args.api_endpoint, "apiKeyEnv": _key_env(args.api_key_env),
               "temperature": args.temperature}
    changes = {k: v for k, v in changes.items() if v is not None}
    if not changes:
        raise CliError("nothing to change: pass --family, --api-endpoint, --api-key-env or "
                       "--temperature")
    path = config_file(args)
    with edited_document(path) as doc:
        found = _find(doc, args.model, path, ("test", "judge"))
        for role, index in found:
            set_keys(doc["models"][role][index], changes, UNSET)
    said = ", ".join(f"{k} removed" if v == UNSET else f"{k}={v}" for k, v in changes.items())
    say(f"updated {args.model} in {', '.join(f'models.{r}' for r, _ in found)} of {path}: "
        f"{said}")
    for role in dict.fromkeys(r for r, _ in found):
        _after_change(args.command, path, args.model, role)
    return EXIT_OK


def _remove(args: argparse.Namespace) -> int:
    path = config_file(args)
    with edited_document(path) as doc:
        [(role, index)] = _find(doc, args.model, path, (args.role,))[:1]
        remove_entry(doc["models"], role, index)
    say(f"removed {args.model} from models.{role} in {path}")
    settings = load_checked(path)
    task = settings.evaluation.downstream.completion_model
    if task and args.model in (task, task.partition("/")[2]):
        warn(args.command, f"evaluation.downstream.completionModel still names {task}; set "
                           "another with `summarybench config --task-model PROVIDER/MODEL`")
    if role == "test" and not settings.models.test:
        print("note: no model under test is left: a run ranks the offline builtin/* "
              "baselines", file=sys.stderr)
    return EXIT_OK


def remove_entry(models: Any, role: str, index: int) -> None:
    """Remove ``models[role][index]``, keeping the comment lines that followed the last
    entry (the ``# Judges`` comment, the blank line before the next section): they move to
    the new last entry, or after an emptied list's ``[]``."""
    from ruamel.yaml.comments import CommentedSeq

    entries = models[role]
    tail = detach_tail(entries)
    del entries[index]
    if len(entries):
        attach_tail(entries, tail)
        return
    empty = CommentedSeq()
    empty.fa.set_flow_style()
    models[role] = empty
    if tail is not None:
        # Slot 1 may hold the comment above the key (it stays); 2 is after its value.
        models.ca.items.setdefault(role, [None, None, None, None])[2] = tail


def append_entry(entries: Any, entry: Any) -> None:
    """Append the flat mapping ``entry`` to the block sequence ``entries``, moving the
    comments that followed the old last entry (a comment line above the next key, a blank
    line) after the new one.

    ruamel keeps such lines on the last scalar before them; a plain ``append`` would put
    the new entry below them (under the ``# Judges`` comment, as issue 21 found). An
    end-of-line comment of the old last entry stays with it.
    """
    tail = detach_tail(entries)
    entries.append(entry)
    attach_tail(entries, tail)


def set_keys(entry: Any, changes: dict[str, Any], unset: str) -> None:
    """Set (or, for the value ``unset``, remove) keys of the mapping ``entry``, keeping the
    comment lines after it where they were: after the entry, not after its old last key."""
    tail = detach_tail(entry)
    for key, value in changes.items():
        if value == unset:
            entry.pop(key, None)
        else:
            entry[key] = value
    attach_tail(entry, tail)


def detach_tail(node: Any) -> Any:
    """The comment lines (and blank lines) after ``node``'s last scalar, removed from it;
    its end-of-line comment stays. None when there are none."""
    slot = _tail_slot(node)
    if slot is None:
        return None
    slots, index = slot
    token = slots[index]
    if token is None or "\n" not in token.value:
        return None
    own, _, rest = token.value.partition("\n")
    if not rest:
        return None
    moved = copy.copy(token)
    moved.value = "\n" + rest
    if own:
        token.value = own + "\n"
    else:
        slots[index] = None
    return moved


def attach_tail(node: Any, tail: Any) -> None:
    """Put the lines ``detach_tail`` took after ``node``'s (new) last scalar."""
    slot = _tail_slot(node)
    if tail is None or slot is None:
        return
    slots, index = slot
    if slots[index] is None:
        slots[index] = tail
    else:  # its own end-of-line comment first
        slots[index].value = slots[index].value.rstrip("\n") + tail.value


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
