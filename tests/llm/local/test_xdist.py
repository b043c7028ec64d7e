"""One server for a whole pytest-xdist session: the workers share it, and it is gone once
the session ends."""

from __future__ import annotations

import pytest

from tests.llm.local.conftest import FakeLlama


def test_a_session_shares_one_server_and_stops_it(pytester: pytest.Pytester,
                                                  fake_llama: FakeLlama) -> None:
    pytester.makepyfile(f"""
        import pytest
        from pytest_summarybench.llm import complete
        from pytest_summarybench.schemas import ModelConfig

        MODEL = ModelConfig.parse("local/{fake_llama.weights}")

        @pytest.mark.parametrize("n", range(6))
        def test_call(n):
            answer = complete(MODEL, [{{"role": "user", "content": f"unit {{n}}"}}])
            assert answer.text.startswith("A summary")
    """)
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)
    requests = fake_llama.requests()
    assert len(requests) == 6
    assert len({r["pid"] for r in requests}) == 1
    assert fake_llama.states() == []  # stopped by the last worker to exit
