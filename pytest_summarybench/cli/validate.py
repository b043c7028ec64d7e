"""``summarybench validate``: the instrument-validity check alone, before money is spent on
a full run. It runs only the known-answer ladder (``--sb-validate -m validate``): the
``validate/*`` built-in models on the documented units, through every enabled evaluator
family, and prints how well each family orders it (see ``pytest_summarybench/validity``).
Judges are called on the ladder only; the models under test are not generated. A later
full run with ``--sb-validate`` reuses the ladder's summaries and scores' cached calls."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.printable import shown_path
from ._common import (
    CONFIG_FILE,
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
    p.add_argument("pytest_args", nargs=argparse.REMAINDER,
                   help="arguments after -- go to pytest (e.g. -- -n 2)")


def run(args: argparse.Namespace) -> int:
    argv: list[str] = ["--sb-validate", "-m", "validate", "-q"]
    path = found_config(args.config, "pass --config PATH, or run without one for the "
                                     "default offline evaluators")
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
    return run_pytest([*argv, *pytest_extra(args)])

