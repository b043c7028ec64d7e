"""Python extraction measured against Python's own ``ast`` module.

A thin entry point to ``benchmarks/extraction/compare.py`` with the ``ast`` oracle
(``benchmarks/extraction/oracles/python.py``) and the by-design differences of
``oracles/by_design_python.py``: every function, method and class on (path, qualified
name, type, start line, end line), both ways. Run as a script to print the figures for a
source tree (the installed ``click`` without one)::

    python tests/extract/ast_agreement.py PATH
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.extraction.compare import Report, print_report  # noqa: E402
from benchmarks.extraction.compare import compare as compare_with  # noqa: E402


def compare(root: str) -> Report:
    return compare_with(root, "python")


def main(argv: list[str]) -> int:
    root = argv[1] if len(argv) > 1 else os.path.dirname(str(__import__("click").__file__))
    print_report(compare(root), examples=20)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
