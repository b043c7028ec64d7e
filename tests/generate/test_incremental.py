"""Issue 32: a run after a small code change pays only for what changed. The sample moves
only where the code did (stable sampling), and the summaries of unchanged units are
reused whatever run wrote them, so the counting fake provider sees calls for the changed
and added units alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_summarybench.store import Store
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.project import write_bench_module

pytest_plugins = ["pytester"]

FILES, PER_FILE, SAMPLE = 10, 10, 40


def _function(i: int, body: str = "") -> str:
    return (f"\n\ndef rule_{i}(price, rate=0.{i % 9 + 1}):\n"
            f'    """Apply pricing rule {i}."""\n'
            f"    {body or f'return round(price * (1 - rate), {i % 3})'}\n")


def _write(root: Path) -> None:
    for f in range(FILES):
        path = root / "code" / "shop" / f"rules_{f}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(_function(f * PER_FILE + i) for i in range(PER_FILE)))


def _sampled(store: Store, run_id: str) -> dict[tuple[str, str], str]:
    """(path, name) -> unit id of the run's sampled units."""
    return {(u.path, u.name): u.id for u in store.load_units(run_id, sampled_only=True)}


def test_a_run_after_a_small_change_calls_only_for_what_changed(
        pytester: pytest.Pytester) -> None:
    _write(pytester.path)
    write_bench_module(pytester)
    with FakeOpenAIServer() as server:
        pytester.path.joinpath("summarybench.yaml").write_text(
            "codebase: {root: code, languages: [python]}\n"
            "extraction: {types: [function]}\n"
            "models:\n  test:\n"
            f"    - {{provider: local, model: alpha-7b, apiEndpoint: '{server.base_url}'}}\n"
            f"evaluation: {{sampleSize: {SAMPLE}}}\n")

        def run() -> int:
            before = server.chat_requests
            result = pytester.runpytest_subprocess(
                "-p", "summarybench", "-p", "no:cacheprovider", "--sb-output", "out",
                "--sb-generate-only")
            assert result.ret == 0, result.outlines[-20:]
            return server.chat_requests - before

        assert run() == SAMPLE
        # A 2% change: one body edited, one function added.
        first = pytester.path / "code" / "shop" / "rules_0.py"
        first.write_text(first.read_text().replace("return round(price * (1 - rate), 0)",
                                                   "return round(price * (1 - rate) + 0.5)",
                                                   1))
        last = pytester.path / "code" / "shop" / f"rules_{FILES - 1}.py"
        last.write_text(last.read_text() + _function(999))
        again = run()
    store = Store(pytester.path / "out" / "store.sqlite")
    try:
        newer, older = store.run_ids()[:2]
        before, after = _sampled(store, older), _sampled(store, newer)
    finally:
        store.close()
    changed = {key for key in after if key in before and after[key] != before[key]}
    added = set(after) - set(before)
    # The sample moves only where the code did: an edited unit keeps its place, and at
    # most the new function enters, pushing one unit out.
    assert added <= {("shop/rules_9.py", "rule_999")}
    assert len(set(before) - set(after)) == len(added)
    assert changed <= {("shop/rules_0.py", "rule_0")}
    assert again == len(changed) + len(added) <= 2
