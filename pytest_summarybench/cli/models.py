"""``summarybench add-model`` and ``add-judge``: add a model to summarybench.yaml."""

from __future__ import annotations

import argparse
import os
import sys

from ..vocabulary import PROVIDERS
from ._common import (
    EXIT_OK,
    CliError,
    add_config_argument,
    config_file,
    load_document,
    save_document,
    section,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    for command, role, what, example in (
            ("add-model", "test", "a model under test", "anthropic/claude-3-5-sonnet-20241022"),
            ("add-judge", "judge", "a judge model", "openai/gpt-4o")):
        p = sub.add_parser(
            command, help=f"add {what} to summarybench.yaml",
            description=f"Add {what} (models.{role}) to summarybench.yaml.",
            epilog=f"example: summarybench {command} {example}")
        p.add_argument("model", metavar="PROVIDER/MODEL")
        p.add_argument("--api-endpoint", metavar="URL",
                       help="base URL of an OpenAI-compatible endpoint")
        p.add_argument("--temperature", type=float, help="sampling temperature")
        p.add_argument("--id", help="a distinct id when one model is listed twice")
        add_config_argument(p)
        p.set_defaults(role=role)


def run(args: argparse.Namespace) -> int:
    provider, sep, name = args.model.partition("/")
    if not sep or not name:
        raise CliError(f"model {args.model!r} is not PROVIDER/MODEL (e.g. openai/gpt-4o)")
    if provider not in PROVIDERS:
        raise CliError(f"unknown provider {provider!r} in {args.model!r}: use one of "
                       f"{', '.join(PROVIDERS)}")
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
    entries.append(entry)
    save_document(path, doc)
    print(f"added {wanted_id} to models.{args.role} in {path}")
    from ..llm import required_env_var
    from ..schemas import ModelConfig

    var = required_env_var(ModelConfig(provider=provider, model_name=name,
                                       api_endpoint=args.api_endpoint))
    if var and not os.environ.get(var):
        print(f"note: {wanted_id} will need the environment variable {var}", file=sys.stderr)
    return EXIT_OK
