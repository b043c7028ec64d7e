"""What the subcommands share: finding and editing summarybench.yaml, one-line errors, and
running the engine (pytest with the plugin)."""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any

from ..core.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, InputError, RunError
from ..core.printable import shown_path

__all__ = ["CONFIG_FILE", "EXIT_FAILURE", "EXIT_OK", "EXIT_USAGE", "CliError", "CliFailure"]

CONFIG_FILE = "summarybench.yaml"
#: What ``set-model`` and ``config`` take to remove a key from the file.
UNSET = "none"
#: Lone surrogates: the bytes of an argument that were not UTF-8 (``os.fsdecode``'s
#: surrogateescape), which no YAML file can hold.
_NOT_UTF8 = re.compile("[\ud800-\udfff]")


class CliError(InputError):
    """A command's own one-line error (a bad option value, a missing file): bad usage,
    exit code 2. ``main`` prints it, as every ``SummarybenchError``, without a traceback."""


class CliFailure(RunError):
    """A command that ran and could not do what was asked (a run without an explorer):
    one line, exit code 1."""


def text_arg(value: str) -> str:
    """An argparse ``type`` for a name, an id, a family or a path written into the file:
    ``value``, or an error (argparse names the option) when it holds bytes that are not
    UTF-8, shown escaped. Before, ``add-model $'openai/\\xff-m'`` wrote an escape the
    file could not read back and blamed a line of the user's valid YAML."""
    bad = _NOT_UTF8.findall(value)
    if bad:
        raw = "".join(shown_path(char)[2:-1] for char in bad[:8])
        raise argparse.ArgumentTypeError(
            f"{shown_path(value)} holds bytes that are not UTF-8 ({raw}"
            f"{'...' if len(bad) > 8 else ''}): a configuration file holds UTF-8 text only")
    return value


def endpoint_arg(value: str) -> str:
    """An argparse ``type`` for an endpoint URL: ``text_arg``, then ``http://`` or
    ``https://`` with a host and no space or control character (``UNSET`` passes)."""
    from ..schemas.config import endpoint_problem

    value = text_arg(value)
    problem = None if value == UNSET else endpoint_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(
            f"{shown_path(value)} is not a usable endpoint URL: {problem}")
    return value


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="PATH", default=CONFIG_FILE,
                        help=f"the benchmark's configuration (default: ./{CONFIG_FILE})")


def config_file(args: argparse.Namespace) -> Path:
    """The existing configuration file, or a CliError saying how to create one."""
    path = Path(args.config)
    if not path.is_file():
        raise CliError(f"no configuration at {path}: run `summarybench init --name NAME "
                       f"--codebase PATH` first (or pass --config PATH)")
    return path


def yaml_rt() -> Any:
    """A round-trip YAML handler that keeps comments and key order."""
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def load_document(path: Path) -> Any:
    from ruamel.yaml import YAMLError

    from ..core.input_files import load_yaml

    text = path.read_text(encoding="utf-8")
    # The bounded loader first (depth, aliases, duplicate keys): ruamel's composer
    # recurses without a limit. Its InputFileError is the command's one-line error.
    load_yaml(text, str(path))
    try:
        doc = yaml_rt().load(text)
    except YAMLError as exc:
        raise CliError(f"{path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if doc is None:
        from ruamel.yaml.comments import CommentedMap

        doc = CommentedMap()
    return doc


def save_document(path: Path, doc: Any) -> None:
    """Write the edited document, then validate it; on a validation error the previous
    file is restored and the error names the key."""
    from ..settings import SettingsError

    previous = path.read_text(encoding="utf-8")
    with path.open("w", encoding="utf-8") as fh:
        yaml_rt().dump(doc, fh)
    try:
        load_checked(path)
    except SettingsError:
        path.write_text(previous, encoding="utf-8")
        raise


def load_checked(path: Path) -> Any:
    """The validated Settings of a configuration file (``cli_families``); a
    ``SettingsError`` naming the key when it does not validate."""
    from ..settings import load_settings

    return load_settings(path, families=cli_families(path))


def cli_families(path: Path) -> tuple[Any, ...]:
    """The families a configuration is checked with here: the built-in ones, and a
    stand-in for each other family the file configures (a section ``evaluation.NAME``, or
    ``scoring.NAMEWeights``), which a plugin of the pytest session may declare.

    The plugins' families are known to the session, which checks the file again against
    their declarations; here a stand-in accepts any keys. A name close to a built-in
    family's stays what it most likely is, a typo (``evaluation.retreival``), and is
    refused with its did-you-mean."""
    import difflib

    from ..core.family import Family, FamilyError
    from ..core.input_files import InputFileError, load_yaml
    from ..evaluators.registry import BUILTIN_FAMILIES
    from ..settings import EvaluationSection, PluginSection

    builtin = [f.name for f in BUILTIN_FAMILIES]
    try:
        data = load_yaml(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, InputFileError):
        return tuple(BUILTIN_FAMILIES)  # load_settings says what is wrong with the file
    if not isinstance(data, dict):
        return tuple(BUILTIN_FAMILIES)
    evaluation, scoring = data.get("evaluation"), data.get("scoring")
    named: dict[str, dict[str, float]] = {}
    if isinstance(evaluation, dict):
        for key, value in evaluation.items():
            if isinstance(value, dict):
                named.setdefault(str(key), {})
    if isinstance(scoring, dict):
        for key, value in scoring.items():
            name = str(key).removesuffix("Weights")
            if name != str(key) and isinstance(value, dict):
                named.setdefault(name, {}).update({str(k): 1.0 for k in value})
    standing: list[Family] = []
    fields = {n for f, info in EvaluationSection.model_fields.items()
              for n in (f, info.alias) if n}
    for name, weights in named.items():
        if name in builtin or name in fields or difflib.get_close_matches(name, builtin, n=1):
            continue
        try:
            standing.append(Family(name=name, title=name, weight=0.0, weights=weights,
                                   settings=PluginSection))
        except FamilyError:
            continue  # no family can have this name: the settings refuse the key
    return (*BUILTIN_FAMILIES, *standing)


def found_config(given: str | None, missing: str) -> Path | None:
    """The configuration in use: ``given``, else ./summarybench.yaml when present, else None.

    A ``given`` path that does not exist is a CliError ending with ``missing`` (what to do).
    """
    if given is None:
        return Path(CONFIG_FILE) if Path(CONFIG_FILE).is_file() else None
    path = Path(given)
    if not path.is_file():
        raise CliError(f"no configuration at {path}: {missing}")
    return path


def load_with_codebase(path: Path) -> Any:
    """The validated Settings of ``path``, whose codebase must be a readable directory."""
    settings = load_checked(path)
    if not settings.codebase_root.is_dir():
        raise CliError(f"codebase {shown_path(settings.codebase_root)} is not a readable "
                       f"directory: fix codebase.root in {shown_path(path)}")
    return settings


def pytest_extra(args: argparse.Namespace) -> list[str]:
    """The pytest arguments given after ``--`` (only that first ``--`` is dropped: a later
    one belongs to pytest)."""
    extra = list(args.pytest_args)
    return extra[1:] if extra[:1] == ["--"] else extra


def section(doc: Any, *keys: str) -> Any:
    """The nested mapping at ``keys``, created (at the end) when missing."""
    from ruamel.yaml.comments import CommentedMap

    node = doc
    for key in keys:
        if node.get(key) is None:
            node[key] = CommentedMap()
        node = node[key]
    return node


def check_keys(settings: Any, *, judges: bool = True) -> None:
    """Every model that needs a key has it in the environment (``judges=False``: only the
    models under test, for a command that calls no judge, as ``generate``)."""
    from ..llm import required_env_var

    for model in [*settings.test_models(), *(settings.judge_models() if judges else [])]:
        var = required_env_var(model)
        if var and not os.environ.get(var):
            raise CliError(f"{model.id} needs an API key: set the environment variable {var} "
                           f"(or remove the model from {CONFIG_FILE})")


def run_pytest(args: list[str], target: Path | None = None) -> int:
    """Run a benchmark through pytest with the plugin (the one engine): ``target``, by
    default the code-summary benchmark shipped in the package."""
    import pytest

    suite = target or Path(__file__).resolve().parent.parent / "suite"
    # pytest's cache plugin stays on: --lf, --ff, --nf and --sw need it. Its folder is
    # pytest's usual .pytest_cache under the rootdir, the current directory.
    code = pytest.main([str(suite), "-p", "summarybench", "--rootdir", os.getcwd(), *args])
    return int(code)
