"""``summarybench generate``, ``evaluate`` and ``run``: the benchmark through pytest with
the plugin, so ``-n``, ``-k`` and the hooks work and every step resumes from the store."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.sample import bundled_codebase
from ..evaluators.registry import BUILTIN_FAMILIES
from ._common import (
    CONFIG_FILE,
    EXIT_FAILURE,
    CliError,
    check_keys,
    found_config,
    load_with_codebase,
    pytest_extra,
    run_pytest,
    text_arg,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser(
        "generate", help="generate (or resume) every model's summaries",
        description="Generate the summaries of every sampled unit with every model under "
                    "test; completed calls are cached in the store and never repeated.",
        epilog="example: summarybench generate --parallel 5")
    g.add_argument("--parallel", type=int, metavar="N",
                   help="concurrent calls per model, in every phase")
    g.add_argument("--dry-run", action="store_true",
                   help="print calls, tokens and cost per model; call nothing")
    _common(g)
    g.set_defaults(mode="generate")

    e = sub.add_parser(
        "evaluate", help="run the evaluator families (generating what is missing)",
        description="Run the evaluation matrix through pytest; scores go to the store and "
                    "the reports.",
        epilog="example: summarybench evaluate --only contrastive -- -n 2")
    which = e.add_mutually_exclusive_group(required=True)
    which.add_argument("--all", action="store_true", help="every enabled family")
    which.add_argument("--only", metavar="FAMILY", type=text_arg,
                       help="comma-separated families: "
                            f"{', '.join(f.name for f in BUILTIN_FAMILIES)} or a plugin's; "
                            "selects their items of the configured run (--sb-only, as -m "
                            "does): a partial run, which leaves the output directory's own "
                            "reports alone, unless those families are every one that can run")
    _common(e)
    e.set_defaults(mode="evaluate")

    r = sub.add_parser(
        "run", help="the whole benchmark (the README's default run without a config)",
        description="Extract, generate, evaluate and report in one go. Without a "
                    "summarybench.yaml this is the default offline run on the sample "
                    f"codebase bundled with the package ({bundled_codebase()}), in any "
                    "folder.",
        epilog="example: summarybench run -- -n 2")
    _common(r, config_required=False)
    r.set_defaults(mode="run")


def _common(p: argparse.ArgumentParser, *, config_required: bool = True) -> None:
    p.add_argument("--config", metavar="PATH", default=None if not config_required
                   else CONFIG_FILE, help=f"configuration (default: ./{CONFIG_FILE})")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER,
                   help="arguments after -- go to pytest (e.g. -- -n 2 -k typescript)")


def run(args: argparse.Namespace) -> int:
    extra = pytest_extra(args)
    argv: list[str] = []
    path = found_config(args.config, "run `summarybench init --name NAME --codebase PATH` "
                                     "first (or pass --config PATH)")
    settings = None
    if path is not None:
        settings = load_with_codebase(path)
        argv += ["--sb-config", str(path)]
    if args.mode == "generate":
        if args.dry_run:
            return run_pytest([*argv, "--sb-dry-run", "-p", "no:xdist", *extra])
        if settings is not None:
            check_keys(settings, judges=False)  # generation calls no judge
        if args.parallel is not None:
            if args.parallel <= 0:
                raise CliError(f"--parallel {args.parallel}: expected a positive integer")
            argv += ["--sb-parallel", str(args.parallel)]
        if not _doctor_offered(settings, args.command):
            return EXIT_FAILURE
        return run_pytest([*argv, "--sb-generate-only", "-p", "no:xdist", "-q", *extra])
    if settings is not None:
        check_keys(settings)
    if args.mode == "evaluate" and args.only:
        if any(a.startswith("-m") for a in extra):
            raise CliError("--only and a -m after -- both select by family: give one of them")
        # A selection (-m), not another configuration: the run is the configured one, its
        # summaries and calls are shared, and the session is reported as partial. The
        # session checks the names: it knows the families its plugins declare.
        argv += ["--sb-only", args.only]
    if not _doctor_offered(settings, args.command):
        return EXIT_FAILURE
    return run_pytest([*argv, *extra])


def _doctor_offered(settings: Any, command: str) -> bool:
    """``doctor.offer`` once the configuration and its keys are known to be usable; False
    when the user, asked on a terminal, chose to stop."""
    if settings is None:
        return True
    from .doctor import offer

    return offer(settings, command)
