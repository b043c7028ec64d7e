"""The ``summarybench`` command line: a thin front over the same engine as the plugin.

Each subcommand lives in its own module exposing ``add_parser(subparsers)`` and
``run(args) -> int``; this module only dispatches.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from ..core.errors import EXIT_OK, EXIT_USAGE, SummarybenchError

# Subcommand name -> module under pytest_summarybench.cli. Kept as strings so that
# ``summarybench --help`` imports nothing heavy.
SUBCOMMANDS: dict[str, str] = {
    "init": "init",
    "add-model": "models",
    "add-judge": "models",
    "config": "configure",
    "extract": "extract",
    "generate": "run",
    "evaluate": "run",
    "run": "run",
    "runs": "runs",
    "report": "report",
    "compare": "compare",
    "view": "view",
    "validate": "validate",
    "compliance": "compliance",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="summarybench",
        description="Benchmark LLMs on writing code summaries for RAG code search.",
        epilog="Exit codes: 0 success, 1 the command ran and failed, 2 bad usage or input.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in dict.fromkeys(SUBCOMMANDS.values()):
        mod = importlib.import_module(f"{__name__}.{module}")
        mod.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit code. This is the one place where an error becomes an
    exit code: every ``SummarybenchError`` is one line on stderr and its ``exit_code``
    (2 bad usage or input, 1 the command ran and failed; ``core/errors.py``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_USAGE
    mod = importlib.import_module(f"{__name__}.{SUBCOMMANDS[args.command]}")
    try:
        return int(mod.run(args))
    except SummarybenchError as exc:
        print(f"summarybench {args.command}: error: {exc}", file=sys.stderr)
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
