"""Extraction measured against a language's own parser, on any source tree.

An *oracle* is a program built on the language's own parser (Go's ``go/parser``, Python's
``ast``, ...). Given a source root as its last argument it prints one JSON object a line:

* ``{"path", "name", "type", "start_line", "end_line"}`` for each unit it finds, in our
  conventions (path relative to the root with ``/``, name qualified by its enclosing
  units, type ``function``/``method``/``class``, the declaration's first line including
  decorators/annotations but not its doc comment, and its last line);
* ``{"file": path}`` for each file it parsed, and ``{"unparsable": path, "error": ...}``
  for each it could not parse (such files are left out on both sides).

The extractor runs on the same root with every filter off, and the two lists of
(path, name, type, start line, end line) are compared both ways: *recall* is the share of
the oracle's units the extractor found, *precision* the share of extracted units the oracle
confirms. Leftovers are paired up into differences (end line, start line, type, name) or
else left as units only one side has.

Differences that are so by design (a convention of ours that differs from the language's
own, named in docs/extraction.md) are recognised by the rules of
``oracles/by_design_<language>.py`` when that file exists: it defines
``BY_DESIGN: dict[str, Callable[[Difference, Sources], bool]]``, the key being the name the
difference has in docs/extraction.md. Agreement is printed before and after them.

Usage::

    python benchmarks/extraction/compare.py go /tmp/repos/cobra
    python benchmarks/extraction/compare.py go /tmp/repos/cobra -- go run my_oracle.go

Without an explicit command the oracle is ``oracles/<language>.<ext>``, run by the
interpreter its extension names (``.py`` python, ``.go`` ``go run``, ``.rb`` ruby,
``.js``/``.mjs``/``.cjs`` node, ``.java`` java, ``.php`` php).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
ORACLES = HERE / "oracles"

_RUNNERS: dict[str, list[str]] = {
    ".py": [sys.executable], ".go": ["go", "run"], ".rb": ["ruby"], ".js": ["node"],
    ".mjs": ["node"], ".cjs": ["node"], ".java": ["java"], ".php": ["php"],
}


class Unit(NamedTuple):
    path: str
    name: str
    type: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class Difference:
    """One disagreement: a pair that differs in one field, or a unit one side lacks."""

    kind: str
    """``end line``, ``start line``, ``type``, ``name``, ``only oracle``, ``only extracted``."""
    oracle: Unit | None
    extracted: Unit | None

    @property
    def path(self) -> str:
        unit = self.oracle or self.extracted
        assert unit is not None
        return unit.path


class Sources:
    """The compared files' lines, read on demand (rules look at the code around a unit)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._lines: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        """The file's lines without line ends; ``lines(p)[n - 1]`` is line ``n``."""
        if path not in self._lines:
            with open(os.path.join(self.root, path), "rb") as fh:
                self._lines[path] = fh.read().decode("utf-8", "replace").splitlines()
        return self._lines[path]

    def line(self, path: str, number: int) -> str:
        lines = self.lines(path)
        return lines[number - 1] if 0 < number <= len(lines) else ""


Rule = Callable[[Difference, Sources], bool]


@dataclass
class OracleOutput:
    units: list[Unit]
    files: set[str]
    unparsable: dict[str, str]


@dataclass
class Report:
    language: str
    root: str
    oracle_total: int
    extracted_total: int
    matched: int
    differences: list[Difference]
    explained: dict[str, list[Difference]] = field(default_factory=dict)
    """By-design rule name -> the differences it accounts for."""
    unparsable: dict[str, str] = field(default_factory=dict)
    extractor_errors: list[str] = field(default_factory=list)
    """Compared files the extractor reported a problem with (syntax errors, skips)."""
    collisions: list[list[Unit]] = field(default_factory=list)
    """Extracted units of one file sharing type and qualified name (see ``collisions``)."""
    outside_files: int = 0
    """Extracted units in files the oracle did not look at (left out)."""

    @property
    def unexplained(self) -> list[Difference]:
        done = {id(d) for ds in self.explained.values() for d in ds}
        return [d for d in self.differences if id(d) not in done]

    def _adjusted(self) -> tuple[int, int, int]:
        explained = [d for ds in self.explained.values() for d in ds]
        pairs = sum(1 for d in explained if d.oracle is not None and d.extracted is not None)
        only_o = sum(1 for d in explained if d.extracted is None)
        only_e = sum(1 for d in explained if d.oracle is None)
        return self.matched + pairs, self.oracle_total - only_o, self.extracted_total - only_e

    @property
    def recall(self) -> float:
        """Share of the oracle's units found exactly, before by-design differences."""
        return self.matched / self.oracle_total if self.oracle_total else 1.0

    @property
    def precision(self) -> float:
        """Share of extracted units the oracle confirms exactly, before by-design ones."""
        return self.matched / self.extracted_total if self.extracted_total else 1.0

    @property
    def recall_by_design(self) -> float:
        matched, oracle_total, _ = self._adjusted()
        return matched / oracle_total if oracle_total else 1.0

    @property
    def precision_by_design(self) -> float:
        matched, _, extracted_total = self._adjusted()
        return matched / extracted_total if extracted_total else 1.0

    def summary(self) -> dict[str, Any]:
        return {
            "language": self.language, "root": self.root,
            "oracle_units": self.oracle_total, "extracted_units": self.extracted_total,
            "matched": self.matched, "recall": self.recall, "precision": self.precision,
            "recall_by_design": self.recall_by_design,
            "precision_by_design": self.precision_by_design,
            "by_design": {k: len(v) for k, v in sorted(self.explained.items())},
            "unexplained": dict(Counter(d.kind for d in self.unexplained)),
            "unparsable_files": len(self.unparsable),
            "extractor_problem_files": len(self.extractor_errors),
            "name_collisions": len(self.collisions),
        }


def default_oracle(language: str) -> list[str]:
    """The command of ``oracles/<language>.<ext>``."""
    for ext, runner in _RUNNERS.items():
        script = ORACLES / f"{language}{ext}"
        if script.exists():
            return [*runner, str(script)]
    raise SystemExit(f"no oracle for {language!r}: expected oracles/{language}.<ext> in "
                     f"{ORACLES} (one of {', '.join(_RUNNERS)}), or pass a command after --")


def oracle_available(command: list[str]) -> str | None:
    """None when the command's program is installed, else what is missing."""
    program = command[0]
    return None if shutil.which(program) or os.path.exists(program) else program


def run_oracle(command: list[str], root: str) -> OracleOutput:
    proc = subprocess.run([*command, root], capture_output=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(
            f"oracle {' '.join(command)} failed on {root} (exit {proc.returncode}): "
            f"{proc.stderr.decode('utf-8', 'replace')[-2000:]}")
    units: list[Unit] = []
    files: set[str] = set()
    unparsable: dict[str, str] = {}
    for number, raw in enumerate(proc.stdout.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise RuntimeError(f"oracle output line {number} is not JSON ({exc}): "
                               f"{raw[:200]!r}") from None
        if "unparsable" in rec:
            unparsable[rec["unparsable"]] = str(rec.get("error", ""))
        elif "file" in rec:
            files.add(rec["file"])
        else:
            units.append(Unit(rec["path"], rec["name"], rec["type"],
                              int(rec["start_line"]), int(rec["end_line"])))
    files.update(u.path for u in units)
    files -= set(unparsable)
    return OracleOutput(units, files, unparsable)


def extracted(root: str, language: str) -> tuple[list[Unit], list[str]]:
    """Every unit the extractor emits with all filters off, and the files it flagged.

    ``strip_docstrings`` makes ``start_line`` the declaration's own first line (a leading
    doc comment is not part of what any parser calls the declaration).
    """
    from pytest_summarybench.extract import (
        ExtractionConfig,
        ExtractionFilters,
        ExtractionTypes,
        extract_units,
    )

    config = ExtractionConfig(
        root_path=root, languages=[language], exclude_patterns=[], strip_docstrings=True,
        extraction=ExtractionTypes(files=False), workers=1,
        # The oracles do not follow symbolic links either: a linked folder would give the
        # same files under two paths.
        follow_symlinks=False,
        filters=ExtractionFilters(min_lines=1, max_lines=10**9, skip_tests=False,
                                  skip_generated=False, max_file_bytes=10**9),
    )
    logging.disable(logging.WARNING)
    try:
        result = extract_units(config)
    finally:
        logging.disable(logging.NOTSET)
    units = [Unit(u.path, u.name, u.type, u.metadata.start_line, u.metadata.end_line)
             for u in result.units]
    problems = sorted({s.path for s in result.skipped}
                      | {w.split(":", 1)[0] for w in result.warnings})
    return units, problems


_PAIRINGS: tuple[tuple[str, Callable[[Unit], tuple[Any, ...]]], ...] = (
    ("end line", lambda u: (u.path, u.name, u.type, u.start_line)),
    ("start line", lambda u: (u.path, u.name, u.type, u.end_line)),
    ("type", lambda u: (u.path, u.name, u.start_line, u.end_line)),
    ("name", lambda u: (u.path, u.type, u.start_line, u.end_line)),
)


def differences(oracle: Iterable[Unit], ours: Iterable[Unit]) -> tuple[int, list[Difference]]:
    """Exact matches (as multisets) and the differences between what remains."""
    left = Counter(oracle)
    right = Counter(ours)
    both = left & right
    only_o = sorted((left - both).elements())
    only_e = sorted((right - both).elements())
    out: list[Difference] = []
    for kind, key in _PAIRINGS:
        waiting: dict[tuple[Any, ...], list[Unit]] = defaultdict(list)
        for unit in only_e:
            waiting[key(unit)].append(unit)
        rest: list[Unit] = []
        for unit in only_o:
            partners = waiting.get(key(unit))
            if partners:
                out.append(Difference(kind, unit, partners.pop(0)))
            else:
                rest.append(unit)
        only_o = rest
        only_e = [u for us in waiting.values() for u in us]
        only_e.sort()
    out.extend(Difference("only oracle", u, None) for u in only_o)
    out.extend(Difference("only extracted", None, u) for u in only_e)
    return sum(both.values()), out


def collisions(units: Iterable[Unit]) -> list[list[Unit]]:
    """Groups of distinct units of one file that share type and qualified name.

    A reader (and the call graph) tells units apart by path, type and name; two
    declarations with the same three are ambiguous. The same declaration reported twice
    (identical lines) is not a collision.
    """
    groups: dict[tuple[str, str, str], set[Unit]] = defaultdict(set)
    for unit in units:
        groups[(unit.path, unit.type, unit.name)].add(unit)
    return [sorted(g) for _, g in sorted(groups.items()) if len(g) > 1]


_DISTINCTION = re.compile(r"(\([^()]*\))?(@L(\d+)(#\d+)?)?\Z")


def plain_name(name: str) -> str:
    """``A@L12.write(int)`` -> ``A.write``: each part without what tells same-named units
    of a file apart."""
    return ".".join(_DISTINCTION.sub("", part, count=1) or part for part in name.split("."))


def distinguished_name(diff: Difference, sources: Sources) -> bool:
    """Units of one file that would share type and qualified name get their parameter
    types appended (``write(JsonWriter,T)``) or else their declaration line
    (``init@L980``); names nested in them carry it too (``units.distinguish``)."""
    o, e = diff.oracle, diff.extracted
    if diff.kind != "name" or o is None or e is None:
        return False
    parts = e.name.split(".")
    if plain_name(e.name) != o.name:
        return False
    line = _DISTINCTION.search(parts[-1])
    return line is None or line.group(3) is None or int(line.group(3)) == e.start_line


def load_rules(language: str, path: str | None = None) -> dict[str, Rule]:
    file = Path(path) if path else ORACLES / f"by_design_{language}.py"
    if not file.exists():
        return {}
    spec = importlib.util.spec_from_file_location(f"_by_design_{language}", file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rules: dict[str, Rule] = module.BY_DESIGN
    return rules


def compare(root: str, language: str, command: list[str] | None = None,
            rules: dict[str, Rule] | None = None) -> Report:
    root = os.path.abspath(root)
    out = run_oracle(command or default_oracle(language), root)
    ours, problems = extracted(root, language)
    kept = [u for u in ours if u.path in out.files]
    matched, diffs = differences(out.units, kept)
    report = Report(language, root, len(out.units), len(kept), matched, diffs,
                    unparsable=out.unparsable,
                    extractor_errors=[p for p in problems if p in out.files],
                    outside_files=len(ours) - len(kept), collisions=collisions(ours))
    rules = load_rules(language) if rules is None else rules
    sources = Sources(root)
    for diff in diffs:
        for name, rule in rules.items():
            if rule(diff, sources):
                report.explained.setdefault(name, []).append(diff)
                break
    return report


def _show(diff: Difference) -> str:
    o, e = diff.oracle, diff.extracted
    if o is not None and e is not None:
        return (f"{o.path}: oracle {o.type} {o.name} {o.start_line}-{o.end_line} | "
                f"extracted {e.type} {e.name} {e.start_line}-{e.end_line}")
    unit = o or e
    assert unit is not None
    return f"{unit.path}: {unit.type} {unit.name} {unit.start_line}-{unit.end_line}"


def print_report(report: Report, examples: int) -> None:
    print(f"{report.language} {report.root}")
    print(f"  oracle units {report.oracle_total}, extracted units {report.extracted_total}, "
          f"exact matches {report.matched}")
    print(f"  raw:            recall {report.recall:.4%}  precision {report.precision:.4%}")
    print(f"  after by-design: recall {report.recall_by_design:.4%}  "
          f"precision {report.precision_by_design:.4%}")
    if report.unparsable:
        print(f"  files the oracle cannot parse (left out): {len(report.unparsable)}")
        for path, error in sorted(report.unparsable.items())[:examples]:
            print(f"    {path}: {error[:160]}")
    if report.extractor_errors:
        print(f"  files the extractor reported: {len(report.extractor_errors)}")
        for path in report.extractor_errors[:examples]:
            print(f"    {path}")
    if report.collisions:
        print(f"  extracted units sharing path, type and name: {len(report.collisions)} groups")
        for group in report.collisions[:examples]:
            print("    " + "; ".join(f"{u.path}: {u.type} {u.name} {u.start_line}-{u.end_line}"
                                     for u in group))
    for name, diffs in sorted(report.explained.items()):
        print(f"  by design: {name}: {len(diffs)}")
        for diff in diffs[:examples]:
            print(f"    {diff.kind}: {_show(diff)}")
    groups: dict[str, list[Difference]] = defaultdict(list)
    for diff in report.unexplained:
        groups[diff.kind].append(diff)
    for kind, diffs in sorted(groups.items()):
        print(f"  unexplained {kind}: {len(diffs)}")
        for diff in diffs[:examples]:
            print(f"    {_show(diff)}")


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command: list[str] | None = None
    if "--" in args:
        cut = args.index("--")
        args, command = args[:cut], args[cut + 1:]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("language", help="extractor language key (go, python, ...)")
    parser.add_argument("roots", nargs="+", help="source trees to compare on")
    parser.add_argument("--examples", type=int, default=10,
                        help="differences shown per kind (default 10)")
    parser.add_argument("--rules", help="by-design rules file (default "
                        "oracles/by_design_<language>.py when it exists)")
    parser.add_argument("--json", action="store_true", help="print one JSON summary a root")
    ns = parser.parse_args(args)
    rules = load_rules(ns.language, ns.rules)
    for root in ns.roots:
        report = compare(root, ns.language, command, rules)
        if ns.json:
            print(json.dumps(report.summary(), sort_keys=True))
        else:
            print_report(report, ns.examples)
    return 0


if __name__ == "__main__":
    sys.exit(main())
