"""Property-based fuzzing (hypothesis) of the classifier's answer parser: any answer
either parses or raises ParseError with a message that says something; nothing else
escapes (no KeyError, TypeError or RecursionError leaking through)."""

from __future__ import annotations

import pytest

from summarybench_compliance.parsing import ParseError, parse_response

# Without summarybench's dev extra (hypothesis) this module is skipped, not a collection
# error.
pytest.importorskip("hypothesis", reason='needs the dev extra (pip install -e ".[dev]")')
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_answer_parts = st.lists(st.one_of(
    st.text(max_size=30),
    st.sampled_from(["ARTICLE: 9", "ARTICLE: 15", "ARTICLE: none", "ARTICLE: ??",
                     "SEVERITY: high", "SEVERITY: critical", "SEVERITY: ", "<think>",
                     "</think>", "Article 12", "compliant", "no violation", "**", "\n"])),
    max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=_answer_parts)
def test_compliance_answers_parse_or_raise_parse_error(parts: list[str]) -> None:
    try:
        prediction = parse_response(" ".join(parts))
    except ParseError as exc:
        assert str(exc).strip()
    else:
        assert prediction.article is None or isinstance(prediction.article, int)
        assert isinstance(prediction.label, str)
