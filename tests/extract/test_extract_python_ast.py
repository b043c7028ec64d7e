"""Python extraction agrees with Python's own ``ast`` on real, third-party code.

The reference is the ``click`` package installed in the environment (read-only): every
function, method and class on (path, qualified name, type, start line, end line), both
ways, after the by-design differences named in docs/extraction.md ("## Python").
Real repositories are compared in ``test_extract_oracles.py``.
"""

from __future__ import annotations

import os

import pytest
from ast_agreement import compare


@pytest.mark.parametrize("package", ["click"])
def test_units_agree_with_ast(package: str) -> None:
    module = pytest.importorskip(package)
    report = compare(os.path.dirname(str(module.__file__)))
    assert report.oracle_total > 500
    unexplained = report.unexplained[:20]
    assert report.recall_by_design >= 0.995, unexplained
    assert report.precision_by_design >= 0.995, unexplained
    # Every difference click shows is one of the documented ones.
    assert not unexplained
    assert not report.collisions
