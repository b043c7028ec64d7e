"""``summarybench report``: render a run's report from the store alone (no model call):
the run ``--run`` names by a unique prefix of its id, else the latest complete run.

    summarybench report --format markdown|json|html [--output PATH] [--store PATH]
                        [--run RUN_ID]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import CONFIG_FILE, EXIT_OK, CliError, load_checked

if TYPE_CHECKING:
    from ..schemas import BenchmarkReport
    from ..store import Store

DEFAULT_STORE = Path("summarybench-results") / "store.sqlite"


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", metavar="PATH", default=None,
                        help="the run store (default: the one of ./summarybench.yaml's output "
                             f"section when that file exists, else ./{DEFAULT_STORE})")
    parser.add_argument("--run", metavar="RUN_ID", default=None,
                        help="which run: its id or a unique prefix of it, as `summarybench "
                             "runs` lists them (default: the latest complete run)")


def store_path(args: argparse.Namespace) -> Path:
    """``--store``, else the configured store of ./summarybench.yaml, else the default."""
    if args.store:
        return Path(args.store)
    if Path(CONFIG_FILE).is_file():
        return Path(load_checked(Path(CONFIG_FILE)).store_path)
    return DEFAULT_STORE


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "report", help="render a run's report (markdown, json or html) from the store",
        description="Render a run's report from the store alone, without calling a model: "
                    "the latest complete run unless --run names another (`summarybench "
                    "runs` lists them).",
        epilog="example: summarybench report --format html -o report.html")
    parser.add_argument("--format", choices=("markdown", "json", "html"), default="markdown",
                        help="report format (default: markdown)")
    parser.add_argument("--output", "-o", metavar="PATH", default=None,
                        help="file to write (default: standard output)")
    add_store_arguments(parser)
    return parser


def open_store(args: argparse.Namespace) -> Store:
    """The store ``--store`` (or the configuration) names, or a one-line CliError when
    there is none yet."""
    from ..store import Store

    path = store_path(args)
    if not path.is_file():
        raise CliError(f"no store at {path}: run the benchmark first "
                       "(pytest -p summarybench benchmarks/summary) or pass --store PATH")
    return Store(path)


def load_report(args: argparse.Namespace) -> BenchmarkReport:
    """The report of the selected run (a ``ReportError`` or ``StoreError`` saying why
    there is none)."""
    from ..report import report_of_run

    store = open_store(args)
    try:
        return report_of_run(store, args.run)
    finally:
        store.close()


def run(args: argparse.Namespace) -> int:
    from ..report import render
    from ..report.files import write_text_atomic

    text = render(load_report(args), args.format)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        path = write_text_atomic(Path(args.output), text)
    except OSError as exc:
        raise CliError(f"cannot write {args.output}: {exc.strerror}") from None
    print(f"{args.format} report: {path}")
    return EXIT_OK
