"""The desaturated contrastive candidates (benchmarks/validity/candidates.py): how a
candidate's code is rewritten, and ranks counted by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "validity"))

import candidates  # noqa: E402

from pytest_summarybench.schemas import CodeUnit  # noqa: E402
from pytest_summarybench.schemas.units import UnitMetadata  # noqa: E402

CODE = '''def parseUrl(raw_text):
    """Parse the URL in raw_text."""
    # strip first
    return urlparse(raw_text.strip(), "http")
'''


def _unit(code: str) -> CodeUnit:
    return CodeUnit(id="u", path="u.py", name="parseUrl", type="function",
                    language="python", content=code, docstring=None,
                    metadata=UnitMetadata(start_line=1, end_line=4))


def test_masking_keeps_keywords_comments_and_strings() -> None:
    masked = candidates.rewrite(_unit(CODE), "masked")
    assert masked == ('def x(x):\n    """Parse the URL in raw_text."""\n    # strip first\n'
                      '    return x(x.x(), "http")\n')


def test_splitting_writes_identifiers_as_words() -> None:
    split = candidates.rewrite(_unit(CODE), "split")
    assert split.startswith("def parse url(raw text):")
    assert 'return urlparse(raw text.strip(), "http")' in split


def test_scores_count_better_and_tied_candidates() -> None:
    # Unit 0's summary: unit 1's code scores above its own, unit 2's the same as it.
    codes = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [-1.0, 0.0]])
    summaries = np.array([[0.6, 0.8], [0.0, 1.0], [1.0, 0.0], [-1.0, 0.0]])
    pool = candidates.scores(summaries, codes, None, "rr")
    # Unit 0: one better, one tied: ranks 2 and 3 shared, reciprocal rank (1/2 + 1/3) / 2.
    assert pool[0] == pytest.approx((1 / 2 + 1 / 3) / 2)
    assert candidates.scores(summaries, codes, None, "acc")[0] == 0.0
    # Unit 2 ties with unit 0 at the top: hit@1 shared, 1/2.
    assert candidates.scores(summaries, codes, None, "acc")[2] == pytest.approx(0.5)
    # Against unit 3 alone, unit 0 wins outright.
    sets = [[3], [0], [3], [0]]
    assert candidates.scores(summaries, codes, sets, "rr")[0] == 1.0
