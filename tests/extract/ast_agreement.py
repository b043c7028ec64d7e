"""Python extraction measured against Python's own ``ast`` module.

Both sides list every function, method and class as (path, qualified name, kind, start
line): the name is qualified by the enclosing classes and functions, the kind is
``method`` for a function whose nearest enclosing definition is a class, and the start
line is that of the first decorator (units include their decorators). Run as a script to
print the agreement figures for a source tree::

    python tests/extract/ast_agreement.py PATH
"""

from __future__ import annotations

import ast
import logging
import os
import sys
from collections import Counter
from dataclasses import dataclass, field

from pytest_summarybench.extract import (
    ExtractionConfig,
    ExtractionFilters,
    ExtractionTypes,
    extract_units,
)

Key = tuple[str, str, str, int]


def ast_units(root: str) -> tuple[Counter[Key], dict[Key, int], list[str]]:
    """Units per ``ast``, their end lines, and files ``ast`` cannot parse."""
    found: Counter[Key] = Counter()
    ends: dict[Key, int] = {}
    unparsable: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            try:
                with open(full, "rb") as fh:
                    tree = ast.parse(fh.read(), filename=rel)
            except (SyntaxError, ValueError):
                unparsable.append(rel)
                continue
            stack: list[tuple[ast.AST, str, str | None]] = [(tree, "", None)]
            while stack:
                node, prefix, enclosing = stack.pop()
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        qual = f"{prefix}.{child.name}" if prefix else child.name
                        if isinstance(child, ast.ClassDef):
                            kind = "class"
                        else:
                            kind = "method" if enclosing == "class" else "function"
                        start = min([d.lineno for d in child.decorator_list] + [child.lineno])
                        key = (rel, qual, kind, start)
                        found[key] += 1
                        ends[key] = child.end_lineno or child.lineno
                        stack.append((child, qual, kind))
                    else:
                        stack.append((child, prefix, enclosing))
    return found, ends, unparsable


def extracted_units(root: str) -> tuple[Counter[Key], dict[Key, int]]:
    config = ExtractionConfig(
        root_path=root, languages=["python"], exclude_patterns=[],
        extraction=ExtractionTypes(files=False),
        filters=ExtractionFilters(min_lines=1, max_lines=10**9, skip_tests=False,
                 skip_generated=False, max_file_bytes=10**9),
    )
    result = extract_units(config)
    found: Counter[Key] = Counter()
    ends: dict[Key, int] = {}
    for unit in result.units:
        start = unit.metadata.start_line
        # Leading doc comments are a non-Python notion; Python units start at their
        # first decorator or ``def``/``class`` line.
        key = (unit.path, unit.name, unit.type, start)
        found[key] += 1
        ends[key] = unit.metadata.end_line
    return found, ends


@dataclass
class Agreement:
    reference: Counter[Key]
    extracted: Counter[Key]
    only_reference: list[Key] = field(default_factory=list)
    only_extracted: list[Key] = field(default_factory=list)
    end_mismatches: list[tuple[Key, int, int]] = field(default_factory=list)
    unparsable: list[str] = field(default_factory=list)

    @property
    def matched(self) -> int:
        return sum((self.reference & self.extracted).values())

    @property
    def recall(self) -> float:
        """Share of ``ast``'s units that extraction found."""
        total = sum(self.reference.values())
        return self.matched / total if total else 1.0

    @property
    def precision(self) -> float:
        """Share of extracted units that ``ast`` confirms."""
        total = sum(self.extracted.values())
        return self.matched / total if total else 1.0


def compare(root: str) -> Agreement:
    reference, ref_ends, unparsable = ast_units(root)
    bad = set(unparsable)
    extracted, ext_ends = extracted_units(root)
    extracted = Counter({k: v for k, v in extracted.items() if k[0] not in bad})
    result = Agreement(reference, extracted, unparsable=unparsable)
    result.only_reference = sorted((reference - extracted).elements())
    result.only_extracted = sorted((extracted - reference).elements())
    for key in reference & extracted:
        if ref_ends[key] != ext_ends[key]:
            result.end_mismatches.append((key, ref_ends[key], ext_ends[key]))
    return result


def main(argv: list[str]) -> int:
    logging.disable(logging.WARNING)
    root = argv[1] if len(argv) > 1 else os.path.dirname(str(__import__("click").__file__))
    agreement = compare(root)
    print(f"root: {root}")
    print(f"ast units: {sum(agreement.reference.values())}  "
          f"extracted units: {sum(agreement.extracted.values())}  "
          f"matched: {agreement.matched}")
    print(f"recall (ast units found): {agreement.recall:.4%}  "
          f"precision (extracted units confirmed by ast): {agreement.precision:.4%}")
    print(f"end-line mismatches among matched: {len(agreement.end_mismatches)}")
    print(f"files ast cannot parse (left out): {agreement.unparsable}")
    for key in agreement.only_reference:
        print("  only ast:      ", key)
    for key in agreement.only_extracted:
        print("  only extracted:", key)
    for key, ref_end, ext_end in agreement.end_mismatches[:20]:
        print("  end line:      ", key, "ast", ref_end, "extracted", ext_end)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
