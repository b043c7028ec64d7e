"""``summarybench report``: render a run's report from the store alone (no model call):
the run ``--run`` names by a unique prefix of its id, else the latest complete run. An HTML
report written to a file links to the run's explorer when the output directory has it.

    summarybench report --format markdown|json|html [--output PATH] [--store PATH]
                        [--run RUN_ID]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.printable import shown_path
from ._common import CONFIG_FILE, EXIT_OK, CliError, config_present, load_checked, output_path

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
    if config_present(Path(CONFIG_FILE)):
        return Path(load_checked(Path(CONFIG_FILE)).store_path)
    return DEFAULT_STORE


def output_dir(args: argparse.Namespace) -> Path:
    """The output directory of the configured run (./summarybench.yaml's ``output``), or
    without one the store's own directory (the default layout keeps them together)."""
    if not args.store and config_present(Path(CONFIG_FILE)):
        return Path(load_checked(Path(CONFIG_FILE)).output_dir)
    return store_path(args).parent


def explorer_of(args: argparse.Namespace, run_id: str) -> Path | None:
    """The explorer page of the session run ``run_id``, None when there is none."""
    from ..report.files import EXPLORER_FILE
    from ..report.runs import run_dir

    path = run_dir(output_dir(args), run_id) / EXPLORER_FILE
    return path if path.is_file() else None


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
    from ..core.walk import file_kind
    from ..store import Store

    path = store_path(args)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise CliError(f"no store at {shown_path(path)}: run the benchmark first "
                       "(`summarybench run`, or `summarybench evaluate --all` with a "
                       "configuration) or pass --store PATH") from None
    except OSError as exc:
        raise CliError(f"the store {shown_path(path)} cannot be read "
                       f"({exc.strerror or exc}); pass --store PATH") from None
    kind = file_kind(mode)
    if kind is not None:
        raise CliError(f"the store {shown_path(path)} is {kind}, not a file: move it aside "
                       "or pass --store PATH") from None
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


def explorer_href(args: argparse.Namespace, report: BenchmarkReport) -> str:
    """The address of the run's explorer relative to the report file ``--output`` names
    ("" when there is none, or the report goes to standard output)."""
    import os
    from urllib.parse import quote

    run = report.metadata.run
    if args.output is None or run is None:
        return ""
    page = explorer_of(args, run.id)
    if page is None:
        return ""
    return quote(Path(os.path.relpath(page.resolve(),
                                      Path(args.output).resolve().parent)).as_posix())


def run(args: argparse.Namespace) -> int:
    # From the module: once ``report.render`` is imported, the package's attribute
    # ``render`` is that module, not the function its lazy export names.
    from ..report.files import write_text_atomic
    from ..report.render import render, render_html

    output = output_path(args.output, instead="choose another --output, or leave it out "
                                               "to print the report")
    report = load_report(args)
    text = (render_html(report, explorer_href=explorer_href(args, report))
            if args.format == "html" else render(report, args.format))
    if output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        path = write_text_atomic(output, text)
    except OSError as exc:
        raise CliError(f"cannot write {shown_path(output)}: {exc.strerror or exc}") from None
    print(f"{args.format} report: {shown_path(path)}")
    return EXIT_OK
