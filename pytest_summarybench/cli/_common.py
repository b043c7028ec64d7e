"""What the subcommands share: finding and editing summarybench.yaml, one-line errors, and
running the engine (pytest with the plugin)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..core.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, InputError, RunError
from ..core.printable import shown_path

__all__ = ["CONFIG_FILE", "EXIT_FAILURE", "EXIT_OK", "EXIT_USAGE", "CliError", "CliFailure"]

CONFIG_FILE = "summarybench.yaml"
#: How long a command editing the configuration waits for another one editing it.
EDIT_WAIT_S = 30.0
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
    from ..llm.redaction import redact
    from ..schemas.config import endpoint_problem

    value = text_arg(value)
    problem = None if value == UNSET else endpoint_problem(value)
    if problem is not None:  # a password in the URL is masked, as everywhere it is printed
        raise argparse.ArgumentTypeError(
            redact(f"{shown_path(value)} is not a usable endpoint URL: {problem}"))
    return value


def output_path(given: str | None, *, instead: str = "choose another --output") -> Path | None:
    """The file an ``--output`` names, checked before any work: it may be absent or a
    regular file, which the command then replaces (through a temporary file and a
    rename). Anything else is a CliError naming the path and what it is: a rename over a
    FIFO, a device or a link replaced it (``--output /dev/stdout`` replaced the link
    ``/dev/stdout`` with a file). ``instead`` says what to do."""
    from ..core.regular import target_kind

    if given is None:
        return None
    kind = target_kind(given)
    if kind is not None:
        raise CliError(f"cannot write {shown_path(given)}: it is {kind}, and only a regular "
                       f"file is replaced: {instead}")
    return Path(given)


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="PATH", default=CONFIG_FILE,
                        help=f"the benchmark's configuration (default: ./{CONFIG_FILE})")


def config_present(path: Path) -> bool:
    """Whether anything is at ``path`` (a FIFO, a folder, a broken link too): reading it
    then says what is wrong with it. Before, only a regular file counted, and a
    ``summarybench.yaml`` that was a FIFO or a folder was taken for none."""
    return os.path.lexists(path)


def config_file(args: argparse.Namespace) -> Path:
    """The existing configuration file, or a CliError saying how to create one."""
    path = Path(args.config)
    if not config_present(path):
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


def load_document(path: Path, text: str) -> Any:
    """The round-trip document of ``text``, the content of ``path``."""
    from ruamel.yaml import YAMLError

    from ..core.input_files import load_yaml

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


@contextmanager
def edited_document(path: Path) -> Iterator[Any]:
    """The round-trip document of ``path``, saved (``save_document``) when the block ends
    without an error. The read, the change and the write hold the file's lock (the file
    ``.NAME.lock`` beside it): two ``add-model`` run at once each read the file before
    the other wrote it, and one model was lost. A command that waits more than
    ``EDIT_WAIT_S`` for the lock stops with one line."""
    from ..core.locks import LockWaitError, acquire_file_lock
    from ..settings import read_config

    target = path.resolve()  # through a link, the file it names (its lock beside it)
    try:
        lock = acquire_file_lock(target.with_name(f".{target.name}.lock"),
                                 wait_s=EDIT_WAIT_S, what=f"edits of {shown_path(path)}",
                                 notice=lambda line: print(line, file=sys.stderr,
                                                           flush=True))
    except LockWaitError:
        raise  # one line naming the lock, its holder and the wait (a TimeoutError)
    except OSError as exc:
        raise CliError(f"cannot lock {shown_path(path)} to edit it "
                       f"({exc.strerror or exc}): make its folder writable") from None
    try:
        previous = read_config(path)
        doc = load_document(path, previous)
        yield doc
        save_document(path, doc, previous)
    finally:
        lock.release()


def save_document(path: Path, doc: Any, previous: str) -> None:
    """Write the edited document in one step (a temporary file renamed over the file a
    link names, its mode kept), then validate it; on a validation error ``previous`` (the
    file's text as read for the edit) is put back and the error names the key. Call it
    under ``edited_document``'s lock."""
    import io
    import stat

    from ..report.files import write_text_atomic
    from ..settings import SettingsError

    target = path.resolve()
    mode = stat.S_IMODE(os.stat(target).st_mode)
    text = io.StringIO()
    yaml_rt().dump(doc, text)
    write_text_atomic(target, text.getvalue())
    os.chmod(target, mode)
    try:
        load_checked(path)
    except SettingsError:
        write_text_atomic(target, previous)
        os.chmod(target, mode)
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
    from ..settings import EvaluationSection, PluginSection, SettingsError, read_config

    builtin = [f.name for f in BUILTIN_FAMILIES]
    try:
        data = load_yaml(read_config(path), str(path))
    except (SettingsError, InputFileError):
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
        return Path(CONFIG_FILE) if config_present(Path(CONFIG_FILE)) else None
    path = Path(given)
    if not config_present(path):
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
