"""The family rule explained where it bites (issue 21 item 6): the lines that say a judge
shares a family with the models under test are short, count right, name the family and
give advice the rule does not itself refuse."""

from __future__ import annotations

from pytest_summarybench.llm.families import families_of
from pytest_summarybench.roles import plan_judges
from pytest_summarybench.roles.advice import (
    SUGGESTED_JUDGES,
    conflict_warning,
    family_conflicts,
    family_source,
    no_judge_reason,
    suggest_judge,
)
from pytest_summarybench.schemas import ModelConfig


def M(spec: str, **kw: object) -> ModelConfig:
    provider, _, name = spec.partition("/")
    return ModelConfig(provider=provider, model_name=name, **kw)  # type: ignore[arg-type]


OPENAI_MODELS = [M("openai/fake-alpha"), M("openai/fake-beta")]


def test_the_skip_line_is_short_names_the_family_and_advises_another() -> None:
    """The issue's case: one judge, openai/fake-judge, beside two openai/* models."""
    judges = [M("openai/fake-judge")]
    pointwise = no_judge_reason(OPENAI_MODELS, judges, pairs=False)
    pairwise = no_judge_reason(OPENAI_MODELS, judges, pairs=True)
    # one cause, one line: the family's skip line groups evaluators by reason
    assert pointwise == pairwise
    line = f"judge/pointwise, judge/pairwise: {pointwise}"
    assert len(line) <= 200, line
    assert "\n" not in line
    assert "openai/fake-judge (openai)" in line
    assert "correct family: in models.judge" in line
    # never a judge of the excluded family
    suggested = line.split("--sb-judge ")[1].split(")")[0]
    assert not families_of(M(suggested)) & {"openai"}


def test_the_suggestion_avoids_every_family_under_test() -> None:
    assert suggest_judge([M("openai/gpt-4o")]) == "anthropic/claude-sonnet-4-5"
    assert suggest_judge([M("openai/gpt-4o"), M("anthropic/claude-sonnet-4-5")]) == \
        "google/gemini-2.5-pro"
    every = [M(s) for s in SUGGESTED_JUDGES]
    assert suggest_judge(every) is None
    reason = no_judge_reason(every, [M("openai/gpt-4o-mini")], pairs=False)
    assert "--sb-judge" not in reason
    assert "a family other than anthropic, google, openai" in reason
    # a judge's family set by hand counts as the table does
    assert suggest_judge([M("local/acme-7b", family="openai")]) == "anthropic/claude-sonnet-4-5"


def test_pairs_no_judge_may_judge_say_so() -> None:
    models = [M("openai/gpt-4o"), M("anthropic/claude-sonnet-4-5")]
    judges = [M("openai/gpt-4o-mini"), M("anthropic/claude-haiku-4-5")]
    reason = no_judge_reason(models, judges, pairs=True)
    assert "may not judge a pair with a model of their own family" in reason
    assert "--sb-judge google/gemini-2.5-pro" in reason


def test_shortfalls_count_configured_judges_not_min_judges() -> None:
    """'0 eligible judges of 2 asked' beside one configured judge read as a miscount."""
    plan = plan_judges(OPENAI_MODELS, [M("openai/fake-judge")], min_judges=2)
    for message in [*plan.shortfalls(pairs=False), *plan.shortfalls(pairs=True)]:
        assert "no eligible judge (1 configured)" in message
        assert "2 asked" not in message and "openai/gpt-4o" not in message


def test_conflicts_name_the_family_its_source_and_both_ways_out() -> None:
    judges = [M("openai/fake-judge"), M("google/gemini-2.5-pro")]
    [conflict] = family_conflicts(OPENAI_MODELS, judges)
    assert conflict.judge.id == "openai/fake-judge"
    assert conflict.families == ("openai",)
    assert conflict.models == ("openai/fake-alpha", "openai/fake-beta")
    text = conflict_warning(conflict, OPENAI_MODELS)
    assert "is of the openai family (taken from its provider" in text
    assert "it will judge none of them" in text
    assert "summarybench set-model openai/fake-judge --family NAME" in text
    assert "family: NAME in its models.judge entry" in text
    assert "summarybench add-judge anthropic/claude-sonnet-4-5" in text
    assert "docs/evaluators.md#judge-families" in text
    # a family set by hand removes the conflict
    assert family_conflicts(OPENAI_MODELS, [M("openai/fake-judge", family="acme")]) == []
    assert family_source(M("openai/gpt-4o")) == "read from its name"
    assert family_source(M("openai/x", family="acme")) == "set by its family: key"
    # built-in models under test share no family with any judge
    assert family_conflicts([M("builtin/docstring")], judges) == []


def test_one_judge_of_another_family_is_counted_as_configured() -> None:
    plan = plan_judges([M("openai/gpt-4o")], [M("google/gemini-2.5-pro")], min_judges=2)
    [message] = plan.shortfalls(pairs=False)
    assert message == ("openai/gpt-4o: 1 judge configured, fewer than minJudges (2): judged "
                       "by google/gemini-2.5-pro only (evaluation.judge.allowFewer is true)")
