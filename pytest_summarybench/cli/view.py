"""``summarybench view [--run RUN_ID]``: where a run's explorer is (``runs/<id>/explorer.html``
of the output directory), opened in a browser when one is at hand.

    summarybench view [--run RUN_ID] [--store PATH] [--no-open]
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ._common import EXIT_OK, CliError, CliFailure
from .report import add_store_arguments, explorer_of, open_store, output_dir


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "view", help="print where a run's explorer is and open it in a browser",
        description="Print where the explorer of a run is (every unit's code, each "
                    "model's summary, scores, judge verdicts, contrastive options, "
                    "retrieval ranks and downstream outcomes, in one offline page) and "
                    "open it in a browser when one is at hand: the latest complete run "
                    "unless --run names another.",
        epilog="example: summarybench view --run 3f2a")
    add_store_arguments(parser)
    parser.add_argument("--no-open", action="store_true",
                        help="only print where it is; do not start a browser")
    return parser


def _graphical() -> bool:
    """Whether a browser started from here can show a page: a chosen one ($BROWSER), a
    desktop (macOS, Windows), or a display on other systems. Without one, ``webbrowser``
    would fall back to a text browser taking over the terminal."""
    if os.environ.get("BROWSER"):
        return True
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_in_browser(uri: str) -> str:
    """Open ``uri``; "" when a browser took it, else why not (never raises)."""
    import webbrowser

    if not _graphical():
        return "no browser at hand (no display); open the file above in one"
    try:
        if webbrowser.open(uri):
            return ""
    except Exception as exc:  # noqa: BLE001 - a browser that cannot start is not an error
        return f"no browser could be started ({type(exc).__name__}: {exc}); open the file above"
    return "no browser could be started; open the file above in one"


def run(args: argparse.Namespace) -> int:
    from ..report.runs import find_run

    store = open_store(args)
    try:
        found = find_run(store, args.run)  # its ReportError or StoreError: one line (main)
    finally:
        store.close()
    if found is None:
        raise CliError(f"no run {args.run!r} in {store.path} (`summarybench runs` lists them)"
                       if args.run else f"no run in {store.path} yet: a session that scores "
                                        "keeps its run there")
    path = explorer_of(args, found.id)
    if path is None:
        from ..report.files import EXPLORER_FILE
        from ..report.runs import run_dir

        where = run_dir(output_dir(args), found.id) / EXPLORER_FILE
        raise CliFailure(f"run {found.id} has no explorer at {where}: a session writes it "
                         "with report.html (output.formats includes html); run the "
                         "benchmark again to have one")
    uri = path.resolve().as_uri()
    print(f"explorer of run {found.id}{'' if found.complete else ' (partial)'}: {path}")
    print(f"  {uri}")
    if not args.no_open:
        why = open_in_browser(uri)
        if why:
            print(f"  {why}")
    return EXIT_OK
