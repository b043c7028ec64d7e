"""The ``summarybench`` command line: a thin front over the same engine as the plugin.

Each subcommand lives in its own module exposing ``add_parser(subparsers)`` and
``run(args) -> int``; this module only dispatches.

Another installed distribution adds a command through the entry-point group
:data:`COMMANDS_GROUP`: the entry point's name is the command's, its value an object (a
module, usually) with the same two functions. ``add_parser`` adds one subparser by that
name (with a ``help``, so that ``summarybench --help`` lists it, and an epilog starting
``example``), ``run`` returns the exit code (0 success, 1 the command ran and failed, 2 bad
usage or input) and may raise any ``SummarybenchError`` for a one-line error with its exit
code (the package's public ``InputError``: 2, ``RunError``: 1). A name the built-in
commands already use is not taken; a command that fails to load is left out with one line
on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any, NoReturn

from ..core.errors import EXIT_OK, EXIT_USAGE, SummarybenchError
from ._common import CliError

__all__ = ["COMMANDS_GROUP", "SUBCOMMANDS", "CliError", "build_parser",
           "extension_commands", "main"]

# Subcommand name -> module under pytest_summarybench.cli. Kept as strings so that
# ``summarybench --help`` imports nothing heavy.
SUBCOMMANDS: dict[str, str] = {
    "init": "init",
    "add-model": "models",
    "add-judge": "models",
    "set-model": "models",
    "remove-model": "models",
    "remove-judge": "models",
    "config": "configure",
    "doctor": "doctor",
    "check": "doctor",
    "extract": "extract",
    "generate": "run",
    "evaluate": "run",
    "run": "run",
    "runs": "runs",
    "report": "report",
    "compare": "compare",
    "view": "view",
    "validate": "validate",
}

COMMANDS_GROUP = "summarybench.commands"
"""The entry-point group of the commands other distributions add."""


def extension_commands() -> dict[str, Any]:
    """The commands installed distributions add (:data:`COMMANDS_GROUP`), by name, as
    entry points not yet loaded; names of built-in commands are left out."""
    from importlib.metadata import entry_points

    found: dict[str, Any] = {}
    for point in entry_points(group=COMMANDS_GROUP):
        if point.name not in SUBCOMMANDS:
            found.setdefault(point.name, point)
    return found


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors quote the command line escaped: its own
    "unrecognized arguments: ..." and "invalid choice: ..." lines printed what was typed
    raw, so an argument holding ``ESC]0;...BEL`` set the terminal's title. The commands'
    parsers are made by ``add_subparsers`` with this class too."""

    def error(self, message: str) -> NoReturn:
        from ..core.printable import shown_name

        super().error(shown_name(message))


def _parser() -> tuple[argparse.ArgumentParser, dict[str, Any]]:
    """The parser, and every command's module (built-in, then added) by name."""
    parser = _Parser(
        prog="summarybench",
        description="Benchmark LLMs on writing code summaries for RAG code search.",
        epilog="Exit codes: 0 success, 1 the command ran and failed, 2 bad usage or input.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands: dict[str, Any] = {}
    for name, module in SUBCOMMANDS.items():
        commands[name] = importlib.import_module(f"{__name__}.{module}")
    for mod in dict.fromkeys(commands.values()):
        mod.add_parser(sub)
    for name, point in sorted(extension_commands().items()):
        try:
            command = point.load()
            command.add_parser(sub)
            if name not in sub.choices:
                raise LookupError(f"its add_parser added no command named {name!r}")
        except Exception as exc:  # another distribution's bug must not stop ours
            print(f"summarybench: the command {name!r} ({point.value}) could not be "
                  f"loaded and is left out: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        commands[name] = command
    return parser, commands


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser, with the commands installed distributions add."""
    return _parser()[0]


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit code. This is the one place where an error becomes an
    exit code: every ``SummarybenchError`` is one line on stderr and its ``exit_code``
    (2 bad usage or input, 1 the command ran and failed; ``core/errors.py``), whether a
    built-in command or an added one raised it."""
    parser, commands = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_USAGE
    mod = commands.get(args.command)
    if mod is None:  # a name an added command's add_parser registered besides its own
        parser.error(f"{args.command!r} is not a command of an installed distribution")
    try:
        return int(mod.run(args))
    except SummarybenchError as exc:
        from ..core.printable import shown_name

        # A message quotes names from files and the store: one line, controls escaped.
        print(f"summarybench {args.command}: error: {shown_name(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"summarybench {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`summarybench runs | head`): what it wanted, it has. The
        # interpreter's own flush at exit must not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
