"""``summarybench extract [PATH]``: extract the codebase's units, count them, and write
them as JSON lines.

The same engine the pytest plugin uses (:func:`pytest_summarybench.extract.extract_units`);
one CodeUnit JSON object (spec field names) per line. Without PATH it works on the
benchmark of ``summarybench.yaml``: ``--languages`` is saved there, and the units go to the
store, where ``generate`` and ``evaluate`` pick them up.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..core.errors import EXIT_OK, EXIT_USAGE
from ..core.printable import neutralise, shown_name, shown_path
from ..core.regular import create_fresh, target_kind
from ._common import CliError, output_path

if TYPE_CHECKING:
    from ..extract.result import ExtractionResult
    from ..schemas import CodeUnit


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "extract",
        help="extract code units (functions, classes, methods, files) from a codebase",
        description="Extract code units with tree-sitter and write them as JSON lines. "
                    "Without PATH, extract the benchmark of summarybench.yaml into its store.",
        epilog="examples: summarybench extract --languages typescript,go,python\n"
               "          summarybench extract ./src --output units.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", nargs="?", default=None,
                        help="root folder of a codebase (default: the benchmark's codebase)")
    parser.add_argument("--config", metavar="PATH", default="summarybench.yaml",
                        help="the benchmark's configuration, used without PATH")
    parser.add_argument("--languages", nargs="+", metavar="LANG",
                        help="languages to extract, space- or comma-separated "
                             "(default: all ten; without PATH also saved as "
                             "codebase.languages in summarybench.yaml)")
    parser.add_argument("--output", "-o", metavar="FILE",
                        help="write units here as JSON lines (default: no unit output)")
    parser.add_argument("--include", nargs="+", metavar="GLOB", default=None,
                        help="only files matching these globs (relative to PATH)")
    parser.add_argument("--exclude", nargs="+", metavar="GLOB", default=None,
                        help="globs to leave out, added to the default excludes")
    parser.add_argument("--types", nargs="+", choices=("function", "class", "method", "file"),
                        help="unit types to extract (default: all)")
    parser.add_argument("--min-lines", type=int, default=None, help="skip shorter units")
    parser.add_argument("--max-lines", type=int, default=None, help="skip longer units")
    parser.add_argument("--include-tests", action="store_true",
                        help="also extract test files (skipped by default)")
    parser.add_argument("--include-generated", action="store_true",
                        help="also extract files marked generated or minified")
    parser.add_argument("--strip-docstrings", action="store_true",
                        help="remove each unit's own docstring/doc comment from its content")
    parser.add_argument("--follow-external-symlinks", action="store_true",
                        help="with PATH: also follow symlinks whose target is outside PATH "
                             "(skipped and listed by default; for the benchmark: "
                             "codebase.followExternalSymlinks in summarybench.yaml)")
    parser.add_argument("--sample", type=int, metavar="N", default=None,
                        help="write a sample of N units (N >= 1; the counts are still of "
                             "every unit extracted)")
    parser.add_argument("--strategy", choices=("stratified", "random", "all"),
                        default="stratified", help="sampling strategy (with --sample)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed")
    return parser


_OPTION = {"root_path": "PATH", "languages": "--languages", "include_patterns": "--include",
           "exclude_patterns": "--exclude", "filters.min_lines": "--min-lines",
           "filters.max_lines": "--max-lines"}


def _option_error(exc: Any) -> str:
    """A pydantic error on the extraction options, one line, in the options' names."""
    parts = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"] if not isinstance(p, int))
        msg = err["msg"].removeprefix("Value error, ")
        parts.append(f"{_OPTION.get(key, key)} {err.get('input')!r}: {msg}")
    return "; ".join(parts)


class _Warnings(logging.Handler):
    """Prints the extraction logger's lines (every result warning, a failed worker) as
    ``warning: ...`` on standard error, once each."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage().removeprefix("summarybench extract: ")
        print(f"warning: {neutralise(message, one_line=True)}", file=sys.stderr)


def _config_from(args: argparse.Namespace) -> Any:
    from ..extract import ExtractionConfig
    from ..extract.config import DEFAULT_EXCLUDES

    data: dict[str, Any] = {"root_path": args.path, "strip_docstrings": args.strip_docstrings,
                            "follow_external_symlinks": args.follow_external_symlinks}
    if args.languages:
        data["languages"] = args.languages
    if args.include:
        data["include_patterns"] = args.include
    if args.exclude:
        data["exclude_patterns"] = [*DEFAULT_EXCLUDES, *args.exclude]
    if args.types:
        data["extraction"] = {t + ("es" if t == "class" else "s"): t in args.types
                              for t in ("function", "class", "method", "file")}
    filters: dict[str, Any] = {"skip_tests": not args.include_tests,
                               "skip_generated": not args.include_generated}
    if args.min_lines is not None:
        filters["min_lines"] = args.min_lines
    if args.max_lines is not None:
        filters["max_lines"] = args.max_lines
    data["filters"] = filters
    return ExtractionConfig.model_validate(data)


def print_counts(counts: Counter[tuple[str, str]], out: TextIO) -> None:
    """A table of unit counts by language and type (``counts``: units per (language,
    type))."""
    types = ["file", "class", "function", "method"]
    languages = sorted({lang for lang, _ in counts})
    header = f"{'language':<12}" + "".join(f"{t:>10}" for t in types) + f"{'total':>10}"
    print(header, file=out)
    for lang in languages:
        row = [counts[(lang, t)] for t in types]
        print(f"{lang:<12}" + "".join(f"{n:>10}" for n in row) + f"{sum(row):>10}", file=out)
    totals = [sum(counts[(lang, t)] for lang in languages) for t in types]
    print(f"{'total':<12}" + "".join(f"{n:>10}" for n in totals) + f"{sum(totals):>10}",
          file=out)


def print_scan(result: ExtractionResult, shown: int, out: TextIO) -> None:
    print(f"{result.files_scanned} files, {result.bytes_scanned / 1e6:.2f} MB scanned; "
          f"{len(result.skipped)} skipped; {shown} units written", file=out)


def _line(unit: CodeUnit) -> str:
    """One unit as a line of the JSON-lines output."""
    return json.dumps(unit.to_json_dict(), ensure_ascii=False) + "\n"


class _Output:
    """The JSON-lines file, written as units come: into a temporary file beside it,
    renamed over it once every unit is written (a failed extraction leaves no half file).
    Without ``--output``, a sink that writes nothing."""

    def __init__(self, path: str | None) -> None:
        self.path = Path(path) if path else None
        self._fh: TextIO | None = None
        self._tmp: Path | None = None

    @property
    def folder(self) -> Path | None:
        """Where the file goes (extraction's working files go there too: a disk, not a
        temporary file system that may live in memory)."""
        return None if self.path is None else (self.path.parent if str(self.path.parent)
                                               else Path("."))

    def open(self) -> None:
        if self.path is None:
            return
        self._tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        self._fh = open(create_fresh(self._tmp), "w", encoding="utf-8")  # noqa: SIM115

    def write(self, line: str) -> None:
        if self._fh is not None:
            self._fh.write(line)

    def close(self, keep: bool) -> None:
        if self._fh is None or self._tmp is None or self.path is None:
            return
        self._fh.close()
        self._fh = None
        if keep and target_kind(self.path) is None:
            os.replace(self._tmp, self.path)
            return
        self._tmp.unlink(missing_ok=True)
        if keep:  # something else took the name while extracting: it is not replaced
            output_path(str(self.path))


def _open_output(path: str | None) -> _Output | None:
    """The output, opened before any work; None (the reason printed) if it cannot be.
    Only a regular file or nothing is replaced (``output_path``: a CliError)."""
    output = _Output(str(output_path(path)) if path else None)
    try:
        output.open()
    except OSError as exc:
        print(f"summarybench extract: cannot write {shown_path(path or '')} "
              f"({neutralise(exc.strerror or str(exc), one_line=True)}): choose another "
              "--output", file=sys.stderr)
        return None
    return output


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    if args.languages:
        args.languages = [lang.strip() for item in args.languages for lang in item.split(",")
                          if lang.strip()]
    if args.path is None:
        return _run_configured(args)
    if args.sample is not None and args.sample < 1:
        print(f"summarybench extract: --sample {args.sample}: must be at least 1 "
              "(leave it out to write every unit)", file=sys.stderr)
        return EXIT_USAGE
    try:
        config = _config_from(args)
    except ValidationError as exc:
        print(f"summarybench extract: invalid options: {_option_error(exc)}", file=sys.stderr)
        return EXIT_USAGE
    output = _open_output(args.output)
    if output is None:
        return EXIT_USAGE
    written = False
    try:
        code = _extract_to(config, args, output)
        written = code == EXIT_OK
        return code
    finally:
        output.close(keep=written)


def _separators(line: str) -> list[int]:
    """Where ``": "`` occurs in ``line``."""
    found = []
    at = line.find(": ")
    while at >= 0:
        found.append(at)
        at = line.find(": ", at + 1)
    return found


def _extract_to(config: Any, args: argparse.Namespace, output: _Output) -> int:
    """Extract ``config``'s codebase, writing each unit to ``output`` once it is built:
    each file's unit data is written aside as the file is extracted and read back one
    file at a time (``extract/spill.py``, as the pytest session does), so what this
    holds grows with the units' names and calls, not with their code."""
    from ..core.progress import Progress
    from ..extract.codebase import stream_units
    from ..extract.sampling import choose, identity

    # The logger's lines are printed by this handler alone: not propagated to the root
    # handlers, and with a handler present logging's last-resort one stays quiet.
    logger = logging.getLogger("pytest_summarybench.extract")
    propagate = logger.propagate
    handler = _Warnings()
    logger.addHandler(handler)
    logger.propagate = False
    counts: Counter[tuple[str, str]] = Counter()
    try:
        with tempfile.TemporaryDirectory(prefix=".summarybench-extraction-",
                                         dir=output.folder) as work:
            try:
                stream = stream_units(config, Progress(), Path(work))
            except NotADirectoryError as exc:
                print(f"summarybench extract: {neutralise(str(exc), one_line=True)}",
                      file=sys.stderr)
                return EXIT_USAGE
            if args.sample is None:
                for unit in stream.units:
                    counts[(unit.language, unit.type)] += 1
                    output.write(_line(unit))
                shown = stream.total
            else:
                # Every unit's line aside, then the sample's: sampling reads light rows.
                entries: list[tuple[str, str, str, str]] = []
                every = Path(work) / "units.jsonl"
                with open(every, "w", encoding="utf-8") as fh:
                    for unit in stream.units:
                        counts[(unit.language, unit.type)] += 1
                        entries.append((unit.id, identity(unit), unit.language, unit.type))
                        fh.write(_line(unit))
                chosen = choose(entries, args.strategy, args.sample, args.seed)
                ids = [e[0] for e in entries]
                del entries
                with open(every, encoding="utf-8") as fh:
                    for uid, line in zip(ids, fh, strict=True):
                        if uid in chosen:
                            output.write(line)
                shown = len(chosen)
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
    result = stream.result
    # What each warning line may name (its text up to any ": "): a set, not a scan of
    # every warning per skipped file.
    warned = {w[:i] for w in result.warnings for i in _separators(w)}
    for skip in result.skipped:
        shown_skip = shown_path(skip.path)
        if shown_skip not in warned:
            print(f"skipped: {shown_skip}: {neutralise(skip.reason, one_line=True)}",
                  file=sys.stderr)
    print_counts(counts, sys.stdout)
    print_scan(result, shown, sys.stdout)
    if shown < stream.total:
        print(f"sample: {shown} of {stream.total} units ({args.strategy}, seed "
              f"{args.seed}); the table counts every unit extracted", file=sys.stdout)
    return EXIT_OK


def _run_configured(args: argparse.Namespace) -> int:
    """Extract the configured benchmark's codebase into its store (what ``generate`` uses)."""

    from ..engine.pipeline import ensure_units
    from ..extract.config import known_languages
    from ..store import Store
    from ._common import config_file, edited_document, load_with_codebase, section

    output_path(args.output)  # before any work, as with PATH
    path = config_file(args)
    if args.languages:
        try:
            known_languages(args.languages)  # before the file is touched
        except ValueError as exc:
            raise CliError(f"--languages: {exc}") from None
        with edited_document(path) as doc:
            section(doc, "codebase")["languages"] = args.languages
        print(f"{shown_path(path)}: codebase.languages set to "
              f"{shown_name(', '.join(args.languages))}")
    settings = load_with_codebase(path)
    store = Store(settings.store_path)
    ctx = ensure_units(settings, store)
    # Read back a batch at a time: the store holds the units, this holds a batch.
    output = _open_output(args.output)
    if output is None:
        return EXIT_USAGE
    try:
        for batch in store.iter_units(ctx.run_id):
            for unit in batch:
                output.write(_line(unit))
    except BaseException:
        output.close(keep=False)
        raise
    output.close(keep=True)
    counts = Counter(store.unit_groups(ctx.run_id))
    print_counts(counts, sys.stdout)
    print(f"run {ctx.run_id}: {len(store.sampled_unit_ids(ctx.run_id))} of "
          f"{sum(counts.values())} units sampled ({settings.evaluation.sampling}); stored in "
          f"{shown_path(settings.store_path)}")
    return EXIT_OK
