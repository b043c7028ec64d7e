"""The scaffolding every end-to-end plugin test writes: a codebase under ``code/`` and a
bench module whose one test evaluates each matrix case (``sb_case``)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

import pytest

TEST_MODULE = '''
    def test_summary(sb_case):
        assert sb_case.evaluate()
'''


def write_code(pytester: pytest.Pytester, code: Mapping[str, str]) -> None:
    """Each ``path -> source`` of ``code`` under ``code/``, dedented."""
    for rel, text in code.items():
        path = pytester.path / "code" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def write_bench_module(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bench=textwrap.dedent(TEST_MODULE))
