"""summarybench.yaml loading, overrides and error messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.settings import DEFAULT_MODELS, SettingsError, load_settings

SPEC_EXAMPLE = """
name: "MadAppGang Codebase Benchmark"
codebase:
  root: ./
  include: ["src/**/*.ts", "pkg/**/*.go"]
  exclude: ["**/*.test.ts", "**/node_modules/**"]
extraction:
  types: [function, class, method, file]
  minLines: 5
  maxLines: 500
  skipGenerated: true
models:
  test:
    - provider: anthropic
      model: claude-3-5-sonnet-20241022
      temperature: 0.3
    - provider: openai
      model: gpt-4o
      temperature: 0.3
  judge:
    - provider: anthropic
      model: claude-3-opus-20240229
    - provider: openai
      model: gpt-4-turbo
evaluation:
  sampleSize: 1000
  sampling: stratified
  judge:
    enabled: true
    pairwise: true
  contrastive:
    enabled: true
    distractors: 9
    methods: [embedding, llm]
    embeddingModel: voyage-code-2
  retrieval:
    enabled: true
    queriesPerUnit: 5
    kValues: [1, 3, 5, 10]
    embeddingModel: voyage-code-2
  downstream:
    enabled: true
    tasks: [completion, bug_localisation, function_selection]
    completionModel: claude-3-5-sonnet-20241022
weights:
  judge: 0.30
  contrastive: 0.25
  retrieval: 0.25
  downstream: 0.20
output:
  directory: ./benchmark-results
  formats: [markdown, json, html]
"""


def test_spec_example_loads(tmp_path: Path) -> None:
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text(SPEC_EXAMPLE)
    s = load_settings(cfg, families=BUILTIN_FAMILIES)
    assert s.name == "MadAppGang Codebase Benchmark"
    assert [m.id for m in s.test_models()] == [
        "anthropic/claude-3-5-sonnet-20241022", "openai/gpt-4o"]
    assert [m.id for m in s.judge_models()] == [
        "anthropic/claude-3-opus-20240229", "openai/gpt-4-turbo"]
    bc = s.benchmark_config()
    assert bc.sample_size == 1000 and bc.evaluations["contrastive"]["method"] == "both"
    assert bc.evaluations["contrastive"]["distractorCount"] == 9
    assert s.output_dir == tmp_path / "benchmark-results"
    assert s.codebase_root == tmp_path
    ex = s.extraction_config()
    assert ex.filters.min_lines == 5 and ex.include_patterns == ["src/**/*.ts", "pkg/**/*.go"]


def test_overrides_win_over_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text(SPEC_EXAMPLE)
    s = load_settings(cfg, {"evaluation.sampleSize": 7, "evaluation.judge.enabled": False,
                            "models.test": [{"provider": "builtin", "model": "lead"}]},
                      families=BUILTIN_FAMILIES)
    assert s.evaluation.sample_size == 7
    assert s.enabled_families() == ["contrastive", "retrieval", "downstream"]
    assert [m.id for m in s.test_models()] == ["builtin/lead"]


def test_defaults_are_offline_builtins() -> None:
    s = load_settings(None, families=BUILTIN_FAMILIES)
    assert [m.id for m in s.test_models()] == sorted(DEFAULT_MODELS)
    assert all(m.provider == "builtin" for m in s.test_models())


@pytest.mark.parametrize(("text", "needle"), [
    ("evaluation:\n  sampleSize: -3\n", "evaluation.sampleSize = -3"),
    ("evaluation:\n  sampling: clever\n", "evaluation.sampling = 'clever'"),
    ("evaluaton: {}\n", "evaluaton"),
    ("weights:\n  judge: lots\n", "weights.judge = 'lots'"),
    ("models:\n  test:\n    - provider: acme\n      model: x\n", "models.test.0.provider"),
    ("- just\n- a list\n", "mapping at the top level"),
    ("name: [unclosed\n", "not valid YAML"),
])
def test_bad_values_name_key_value_and_file(tmp_path: Path, text: str, needle: str) -> None:
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text(text)
    with pytest.raises(SettingsError) as err:
        load_settings(cfg, families=BUILTIN_FAMILIES)
    assert needle in str(err.value)
    assert len(str(err.value).splitlines()) == 1 or "YAML" in str(err.value)


@pytest.mark.parametrize(("text", "needle"), [
    ("evaluaton: {}\n", "evaluaton = {} in {cfg}: unknown key (did you mean evaluation?)"),
    ("evaluation:\n  judge:\n    minJudge: 3\n",
     "evaluation.judge.minJudge = 3 in {cfg}: unknown key "
     "(did you mean evaluation.judge.minJudges?)"),
    # a snake_case slip is answered with the spec's camelCase name
    ("evaluation:\n  sample_sise: 3\n", "(did you mean evaluation.sampleSize?)"),
    ("models:\n  test:\n    - provider: openai\n      model: gpt-4o\n      temprature: 0\n",
     "models.test.0.temprature = 0 in {cfg}: unknown key "
     "(did you mean models.test.0.temperature?)"),
    ("evaluation:\n  downstream:\n    sandbox:\n      wallSecs: 3\n",
     "(did you mean evaluation.downstream.sandbox.wallS?)"),
])
def test_unknown_keys_say_did_you_mean(tmp_path: Path, text: str, needle: str) -> None:
    """Unknown keys stay errors (a typo never passes silently); the message names the
    key's path and the nearest known key under the same path."""
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text(text)
    with pytest.raises(SettingsError) as err:
        load_settings(cfg, families=BUILTIN_FAMILIES)
    assert needle.replace("{cfg}", str(cfg)) in str(err.value)
    assert len(str(err.value).splitlines()) == 1


def test_unknown_keys_far_from_any_say_no_more(tmp_path: Path) -> None:
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text("zzzz: 1\nbaseDi: 2\n")
    with pytest.raises(SettingsError) as err:
        load_settings(cfg, families=BUILTIN_FAMILIES)
    assert "zzzz = 1" in str(err.value) and "did you mean" not in str(err.value)


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="cannot read config file"):
        load_settings(tmp_path / "nope.yaml", families=BUILTIN_FAMILIES)


def test_duplicate_models_are_rejected() -> None:
    s = load_settings(None, {"models.test": [{"provider": "openai", "model": "gpt-4o"},
                                              {"provider": "openai", "model": "gpt-4o"}]},
                      families=BUILTIN_FAMILIES)
    with pytest.raises(SettingsError, match="more than once"):
        s.test_models()


def test_extraction_workers_reach_the_extractor_but_not_the_run_id() -> None:
    auto = load_settings(None, families=BUILTIN_FAMILIES)
    one = load_settings(None, {"extraction.workers": 1}, families=BUILTIN_FAMILIES)
    assert (auto.extraction_config().workers, one.extraction_config().workers) == (0, 1)
    assert auto.fingerprint() == one.fingerprint()  # results never depend on it
    with pytest.raises(SettingsError, match="extraction.workers = -1"):
        load_settings(None, {"extraction.workers": -1}, families=BUILTIN_FAMILIES)
