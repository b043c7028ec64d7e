"""``summarybench runs``: the runs kept in the store (each session that scored), newest
first: id, date, configuration, complete, partial or unhealthy, units, families, top model
and models. ``report`` and ``compare`` take one of these ids, or a unique prefix of it,
with ``--run``."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.printable import shown_name, shown_path
from ._common import EXIT_OK
from .report import DEFAULT_STORE, open_store


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "runs", help="list the runs of the output directory, newest first",
        description="List the runs kept in the store, newest first: id, date, "
                    "configuration, complete, partial or unhealthy, units scored, families, "
                    "top model and models. A complete run scored every item of its "
                    "configured matrix; a partial one (-k, -m, "
                    "--lf, a session stopped early) is not comparable with it. report and "
                    "compare take an id, or a unique prefix of one, with --run.",
        epilog="example: summarybench runs && summarybench report --run 3f2a --format html "
               "-o partial.html")
    parser.add_argument("--store", metavar="PATH", default=None,
                        help="the run store (default: the one of ./summarybench.yaml's output "
                             f"section when that file exists, else ./{DEFAULT_STORE})")
    return parser


#: How much of a configuration id the listing shows (enough to tell them apart).
CONFIG_CHARS = 8


def _configuration(run: Any) -> str:
    """The run's configuration: a prefix of its id (a hash of the run settings and the
    code), and the benchmark's name when the listing kept it."""
    name = run.listing.get("name")
    return f"{run.run_id[:CONFIG_CHARS]}" + (f" {shown_name(str(name))}" if name else "")


def _status(run: Any) -> str:
    if run.listing.get("healthy") is False:
        return "unhealthy"
    return "complete" if run.complete else "partial"


def _row(listing: dict[str, Any]) -> list[str]:
    """The listing's columns; what the store holds is shown with its control characters
    and line breaks escaped (a model's name is whatever the configuration said)."""
    date = str(listing.get("date", ""))[:16].replace("T", " ")
    return [shown_name(cell) for cell in (
        date, str(listing.get("units", "")), ",".join(listing.get("families", [])) or "-",
        str(listing.get("top") or "-"), ", ".join(map(str, listing.get("models", []))) or "-")]


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    path = store.path
    try:
        runs = store.session_runs.all()
    finally:
        store.close()
    if not runs:
        print(f"no run in {shown_path(path)} yet: a session that scores keeps its run there")
        return EXIT_OK
    default = next((r.id for r in runs if r.complete), runs[0].id)
    header = ["  run", "date (UTC)", "configuration", "status", "units", "families",
              "top model", "models"]
    rows = [[("* " if r.id == default else "  ") + r.id, *_row(r.listing)[:1],
             _configuration(r), _status(r), *_row(r.listing)[1:]] for r in runs]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    for r, row in zip(runs, rows, strict=True):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        for problem in r.listing.get("problems") or []:
            print(f"    unhealthy: {shown_name(str(problem))}")
        if not r.complete and r.listing.get("partial"):
            print(f"    {shown_name(str(r.listing['partial']))}")
    if len({r.run_id for r in runs}) > 1:
        print("configuration: the run settings and code a run scored (a prefix of its id, "
              "and its name); runs of different configurations do not compare")
    print(f"* {default}: the latest complete run, what report and compare show without "
          "--run" if any(r.complete for r in runs) else
          f"* {default}: no run is complete; report and compare show the latest one")
    return EXIT_OK
