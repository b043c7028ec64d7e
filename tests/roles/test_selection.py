"""Judge selection (docs/methods.md#judge-selection): never the judged model's family, at
least two judges where available, diverse families first, and shortfalls said out loud."""

from __future__ import annotations

from itertools import combinations

import pytest

from pytest_summarybench.llm.families import families_of, same_family
from pytest_summarybench.roles.judges import pair_id, plan_judges, select_diverse
from pytest_summarybench.schemas import ModelConfig

# Without the dev extra (hypothesis) this module is skipped, not a collection error
# (e.g. in `pytest -m local_llm` after installing only the local extra).
pytest.importorskip("hypothesis", reason='needs the dev extra (pip install -e ".[dev]")')
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

M = ModelConfig.parse

#: Model names of current families, with their provider, to draw models and judges from.
NAMES = {
    "anthropic": ["anthropic/claude-3-5-sonnet-20241022", "anthropic/claude-opus-4-1",
                  "openrouter/anthropic/claude-3.5-haiku"],
    "openai": ["openai/gpt-4o", "openai/gpt-4o-mini", "openai/o3-mini",
               "openrouter/openai/gpt-oss-120b"],
    "google": ["google/gemini-2.5-pro", "google/gemini-1.5-flash", "ollama/gemma3:27b"],
    "meta": ["openrouter/meta-llama/llama-3.1-405b-instruct", "ollama/codellama:13b"],
    "mistral": ["openrouter/mistralai/codestral-2501", "ollama/mixtral:8x7b"],
    "qwen": ["ollama/qwen2.5-coder:32b", "openrouter/qwen/qwq-32b"],
    "deepseek": ["openrouter/deepseek/deepseek-chat-v3", "ollama/deepseek-coder-v2"],
}


@pytest.mark.parametrize(("family", "spec"), [(f, s) for f, specs in NAMES.items()
                                               for s in specs])
def test_family_table_covers_current_names(family: str, spec: str) -> None:
    assert family in families_of(M(spec))


def test_names_of_two_families_belong_to_both() -> None:
    distill = M("openrouter/deepseek/deepseek-r1-distill-llama-70b")
    assert families_of(distill) == {"deepseek", "meta"}
    assert same_family(distill, M("ollama/llama3.1"))
    assert same_family(distill, M("openrouter/deepseek/deepseek-chat"))


def test_config_patterns_and_explicit_family() -> None:
    acme = M("local/acme-coder-7b")
    assert families_of(acme) == {"unknown:local/acme-coder-7b"}
    assert families_of(acme, {"acme": ["^acme-"]}) == {"acme"}
    tuned = ModelConfig(provider="local", model_name="my-finetune", family="openai")
    assert same_family(tuned, M("openai/gpt-4o"))


def test_never_judged_by_own_family_and_pairs_exclude_both() -> None:
    models = [M("openai/gpt-4o"), M("anthropic/claude-3-5-sonnet-20241022"),
              M("builtin/docstring")]
    judges = [M("openai/gpt-4o-mini"), M("anthropic/claude-3-5-haiku-20241022"),
              M("google/gemini-2.5-pro"), M("ollama/llama3.1")]
    plan = plan_judges(models, judges, min_judges=2, max_judges=3)
    assert plan.judges_for_model("openai/gpt-4o") == (
        "anthropic/claude-3-5-haiku-20241022", "google/gemini-2.5-pro", "ollama/llama3.1")
    assert "openai/gpt-4o-mini" in plan.models["openai/gpt-4o"].excluded
    assert "same family" in plan.models["openai/gpt-4o"].excluded["openai/gpt-4o-mini"]
    pair = pair_id("openai/gpt-4o", "anthropic/claude-3-5-sonnet-20241022")
    assert plan.judges_for_pair(pair) == ("google/gemini-2.5-pro", "ollama/llama3.1")
    # any LLM judge may judge the built-in baselines
    assert len(plan.judges_for_model("builtin/docstring")) == 3


def test_diverse_families_first() -> None:
    judges = [M("openai/gpt-4o"), M("openai/gpt-4o-mini"), M("openai/o3-mini"),
              M("google/gemini-2.5-pro")]
    chosen = [j.id for j in select_diverse(judges, 2)]
    assert chosen == ["google/gemini-2.5-pro", "openai/gpt-4o"]
    assert len(select_diverse(judges, 3)) == 3


def test_shortfall_is_reported_and_config_decides() -> None:
    models = [M("openai/gpt-4o"), M("builtin/docstring")]
    judges = [M("openai/gpt-4o-mini"), M("google/gemini-2.5-pro")]
    lenient = plan_judges(models, judges, min_judges=2, allow_fewer=True)
    assert lenient.judges_for_model("openai/gpt-4o") == ("google/gemini-2.5-pro",)
    [message] = lenient.shortfalls(pairs=False)
    # counted against the judges configured, minJudges named as the bar
    assert message.startswith("openai/gpt-4o: 1 of the 2 judges may judge it, fewer than "
                              "minJudges (2)")
    assert "judged by google/gemini-2.5-pro only" in message
    strict = plan_judges(models, judges, min_judges=2, allow_fewer=False)
    assert strict.judges_for_model("openai/gpt-4o") == ()
    assert "not judged (evaluation.judge.allowFewer is false)" in strict.shortfalls(
        pairs=False)[0]
    assert strict.judges_for_model("builtin/docstring") == (
        "google/gemini-2.5-pro", "openai/gpt-4o-mini")
    none = plan_judges([M("openai/gpt-4o")], [M("openai/gpt-4o-mini")])
    # one judge configured: never "of 2 asked"; the advice is of another family
    assert none.shortfalls(pairs=False)[0] == (
        "openai/gpt-4o: not judged: no eligible judge (1 configured); add one of another "
        "family (--sb-judge anthropic/claude-sonnet-4-5)")
    assert none.to_json(pairs=False)["assignments"]["openai/gpt-4o"]["judges"] == []


ALL_SPECS = sorted(s for specs in NAMES.values() for s in specs) + [
    "builtin/docstring", "builtin/signature", "local/acme-7b",
    "openrouter/deepseek/deepseek-r1-distill-qwen-32b"]


@settings(max_examples=200, deadline=None)
@given(models=st.lists(st.sampled_from(ALL_SPECS), min_size=1, max_size=5, unique=True),
       judges=st.lists(st.sampled_from([s for s in ALL_SPECS if not s.startswith("builtin")]),
                       min_size=0, max_size=6, unique=True),
       min_judges=st.integers(1, 3), extra=st.integers(0, 2), allow=st.booleans())
def test_no_model_is_ever_judged_by_its_own_family(models: list[str], judges: list[str],
                                                   min_judges: int, extra: int,
                                                   allow: bool) -> None:
    tested = [M(s) for s in models]
    pool = [M(s) for s in judges]
    plan = plan_judges(tested, pool, min_judges=min_judges, max_judges=min_judges + extra,
                       allow_fewer=allow)
    by_id = {j.id: j for j in pool}
    for m in tested:
        chosen = plan.judges_for_model(m.id)
        assert len(chosen) <= min_judges + extra
        assert not any(same_family(by_id[j], m) for j in chosen)
        eligible = [j for j in pool if not same_family(j, m)]
        if len(eligible) >= min_judges or allow:
            assert len(chosen) == min(len(eligible), min_judges + extra)
        else:
            assert chosen == ()
    for a, b in combinations(sorted(tested, key=lambda x: x.id), 2):
        for j in plan.judges_for_pair(pair_id(a.id, b.id)):
            assert not same_family(by_id[j], a) and not same_family(by_id[j], b)
