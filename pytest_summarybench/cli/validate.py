"""``summarybench validate``: the instrument-validity check alone, before money is spent on
a full run. It runs only the known-answer ladder (``--sb-validate -m validate``): the
``validate/*`` built-in models on the documented units, through every enabled evaluator
family, and prints how well each family orders it (see ``pytest_summarybench/validity``).
Judges are called on the ladder only; the models under test are not generated. A later
full run with ``--sb-validate`` reuses the ladder's summaries and scores' cached calls.
When the configuration calls models, the dry run's table of calls and cost comes first,
and nothing is called until the user says yes (``--yes`` without a terminal)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.printable import shown_path
from ._common import (
    CONFIG_FILE,
    EXIT_FAILURE,
    EXIT_OK,
    CliError,
    check_keys,
    found_config,
    load_checked,
    pytest_extra,
    run_pytest,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate", help="check that the evaluators can order summaries of known quality",
        description="Run only the instrument-validity ladder (summaries of known quality "
                    "built from the codebase's docstrings) through the enabled evaluator "
                    "families and report Kendall's tau per family; no model under test is "
                    "called. The table is printed and written to the run's results.json "
                    "(validity) and reports in runs/<run id>/ of the output directory: a "
                    "partial run, which leaves the output directory's own reports alone.",
        epilog="example: summarybench validate --codebase ~/src/project -- -n 2")
    p.add_argument("--config", metavar="PATH", default=None,
                   help=f"configuration (default: ./{CONFIG_FILE} if present, else the "
                        "default offline run)")
    p.add_argument("--codebase", metavar="PATH", default=None,
                   help="codebase to validate on (overrides codebase.root)")
    p.add_argument("--sample-size", metavar="N", type=int, default=None,
                   help="units to sample (overrides evaluation.sampleSize)")
    p.add_argument("--yes", "-y", action="store_true",
                   help="make the model calls the dry run prices without asking (needed "
                        "without a terminal when the configuration calls models)")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER,
                   help="arguments after -- go to pytest (e.g. -- -n 2)")


def run(args: argparse.Namespace) -> int:
    argv: list[str] = ["--sb-validate", "-m", "validate", "-q"]
    path = found_config(args.config, "pass --config PATH, or run without one for the "
                                     "default offline evaluators")
    settings = None
    if path is not None:
        settings = load_checked(path)
        argv += ["--sb-config", str(path)]
        # Only judges are called on the ladder; the models under test need no key here.
        check_keys(settings.model_copy(update={"models": settings.models.model_copy(
            update={"test": []})}))
    if args.codebase is not None:
        if not Path(args.codebase).is_dir():
            raise CliError(f"--codebase {shown_path(args.codebase)}: not a readable directory")
        argv += ["--sb-codebase", args.codebase]
    if args.sample_size is not None:
        if args.sample_size <= 0:
            raise CliError(f"--sample-size {args.sample_size}: expected a positive integer")
        argv += ["--sb-sample-size", str(args.sample_size)]
    extra = pytest_extra(args)
    from ..validity.wiring import costs_no_calls

    if settings is not None and not costs_no_calls(settings) and not args.yes:
        # The ladder asks the judges (and the helper, the task model): say what that
        # costs, the dry run's own table, and ask before paying for it.
        code = run_pytest([*argv, "--sb-dry-run", "-p", "no:xdist", *extra])
        if code != EXIT_OK:
            return code
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            print("summarybench validate: nothing was called: the calls above would be paid "
                  "for; pass --yes to make them (there is no terminal to ask on)",
                  file=sys.stderr)
            return EXIT_FAILURE
        if input("summarybench validate: make the calls above? [y/N] ").strip().lower() \
                not in ("y", "yes"):
            print("summarybench validate: nothing was called")
            return EXIT_OK
    return run_pytest([*argv, *extra])

