"""Property-based fuzzing (hypothesis) of everything that reads untrusted text: the
configuration file, judge verdicts and source files (the compliance benchmark's answers
are fuzzed in its own tests, compliance/tests/test_parsing.py).

The property is the same everywhere: any input either parses or raises the module's own
error with a message that says something; nothing else escapes (no KeyError, TypeError,
RecursionError or a pydantic error leaking through).
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest
import yaml

from pytest_summarybench.evaluators.judge.verdicts import (
    InvalidVerdict,
    parse_pairwise,
    parse_pointwise,
)
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.extract import ExtractionConfig, extract_units
from pytest_summarybench.settings import Settings, SettingsError, load_settings

# Without the dev extra (hypothesis) this module is skipped, not a collection error
# (e.g. in `pytest -m local_llm` after installing only the local extra).
pytest.importorskip("hypothesis", reason='needs the dev extra (pip install -e ".[dev]")')
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# -- configuration --------------------------------------------------------------------------
_KEYS = ["name", "codebase", "root", "languages", "models", "test", "judge", "provider",
         "model", "evaluation", "sampleSize", "sampling", "seed", "parallel", "maxCostUsd",
         "judge", "minJudges", "maxJudges", "familyPatterns", "contrastive", "distractors",
         "retrieval", "kValues", "output", "formats", "store", "gate", "minOverall",
         "weights", "scoring", "extraction", "types", "minLines", "temperature",
         "requestsPerMinute", "deployments", "apiEndpoint", "unknownKey"]
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
                     st.sampled_from(["openai", "builtin", "python", "all", "json", "[1,2]",
                                      "(?P<", "random", "stratified"]))
_yaml_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(_KEYS), inner, max_size=5)),
    max_leaves=25)


def _load(tmp_path: Path, text: str) -> Settings | None:
    path = tmp_path / "summarybench.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        settings_ = load_settings(path, families=BUILTIN_FAMILIES)
        # The derived views must hold too (they run at collection).
        settings_.test_models()
        settings_.judge_models()
        settings_.benchmark_config()
        settings_.extraction_config()
        return settings_
    except SettingsError as exc:
        assert str(exc).strip()
        return None


@FUZZ
@given(data=st.dictionaries(st.sampled_from(_KEYS), _yaml_values, max_size=6))
def test_config_mapping_loads_or_says_why(tmp_path: Path, data: dict) -> None:
    _load(tmp_path, yaml.safe_dump(data, allow_unicode=True))


@FUZZ
@given(text=st.text(alphabet=string.printable + "\u00e9\u4e2d\x00", max_size=300))
def test_config_garbage_text_loads_or_says_why(tmp_path: Path, text: str) -> None:
    _load(tmp_path, text)


def test_config_errors_name_the_key_and_value(tmp_path: Path) -> None:
    path = tmp_path / "summarybench.yaml"
    path.write_text("evaluation:\n  sampleSize: -3\n")
    with pytest.raises(SettingsError, match=r"evaluation\.sampleSize = -3"):
        load_settings(path, families=BUILTIN_FAMILIES)


# -- judge verdicts ----------------------------------------------------------------------------
_json_like = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-100, 100), st.floats(allow_nan=False),
              st.text(max_size=15),
              st.sampled_from(["A", "B", "tie", "4", "4/5", "high", "Semantic Richness"])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(
            ["scores", "reasoning", "winner", "confidence", "criteria_breakdown",
             "weighted_average", "accuracy", "completeness", "conciseness", "abstraction",
             "semantic_richness", "Semantic Richness", "score", "x"]), inner, max_size=6)),
    max_leaves=20)


def _wrapped(obj: object, prose: str, fence: bool) -> str:
    import json

    body = json.dumps(obj)
    return f"{prose}\n```json\n{body}\n```\n" if fence else f"{prose} {body} {prose}"


@FUZZ
@given(obj=_json_like, prose=st.text(max_size=40), fence=st.booleans())
def test_judge_verdicts_parse_or_raise_invalid_verdict(obj: object, prose: str,
                                                       fence: bool) -> None:
    text = _wrapped(obj, prose, fence)
    for parse in (parse_pointwise, parse_pairwise):
        try:
            verdict = parse(text)
        except InvalidVerdict as exc:
            assert str(exc).strip()
        else:
            assert verdict.reasoning is not None


@FUZZ
@given(text=st.text(max_size=400))
def test_judge_verdicts_survive_arbitrary_text(text: str) -> None:
    for parse in (parse_pointwise, parse_pairwise):
        try:
            parse(text)
        except InvalidVerdict as exc:
            assert str(exc).strip()


# -- extraction over garbage files --------------------------------------------------------------
_SUFFIXES = [".py", ".js", ".ts", ".go", ".java", ".rs", ".cs", ".rb", ".php", ".kt"]
_code_bits = st.sampled_from(["def ", "class ", "function ", "func ", "fn ", "(", ")", "{",
                              "}", ":", "\n", "    ", "\t", "'''", '"', "=>", "//", "#",
                              "/*", "<?php", "import ", "x", "\x00", "\ufeff", "\r\n"])
_garbage = st.one_of(
    st.binary(max_size=400),
    st.lists(_code_bits, max_size=80).map(lambda parts: "".join(parts).encode("utf-8")),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")))


@FUZZ
@given(files=st.lists(st.tuples(st.sampled_from(_SUFFIXES), _garbage), min_size=1,
                      max_size=4))
def test_extraction_over_garbage_never_crashes(tmp_path_factory: pytest.TempPathFactory,
                                               files: list[tuple[str, bytes]]) -> None:
    root = tmp_path_factory.mktemp("garbage")
    for i, (suffix, data) in enumerate(files):
        (root / f"f{i}{suffix}").write_bytes(data)
    result = extract_units(ExtractionConfig(root_path=str(root)))
    seen = {u.path for u in result.units} | {s.path for s in result.skipped}
    assert seen <= {f"f{i}{suffix}" for i, (suffix, _) in enumerate(files)}
    for skipped in result.skipped:
        assert skipped.reason.strip()
    for unit in result.units:
        assert unit.id and unit.language and unit.metadata.start_line >= 1
