"""The validity section's head: the verdict sentence, the external-validity figures quoted
from ``external.json`` (never invented for a family it does not name), and when the ladder
runs by default (no evaluator can call a model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.schemas.report import ExternalValidity, ValidityFamily, ValiditySection
from pytest_summarybench.settings import load_settings
from pytest_summarybench.validity import quote
from pytest_summarybench.validity.analysis import analyze, verdict
from pytest_summarybench.validity.wiring import costs_no_calls
from tests.validity.test_analysis import _judge_records

ENTRY = {"dataset": "CoSQA", "tau_docstrings": 0.8, "tau_stripped": 1.0, "validated": True,
         "doc": "docs/validity.md#external-validity"}


def test_a_missing_file_or_a_bad_entry_means_not_externally_validated(tmp_path: Path) -> None:
    assert quote.load_external(tmp_path / "absent.json") == {}
    path = tmp_path / "external.json"
    path.write_text("not json")
    assert quote.load_external(path) == {}
    path.write_text(json.dumps({
        "contrastive/identity": {**ENTRY, "second_set": "measured too"},
        "retrieval": {"dataset": "CoSQA", "validated": True},  # no taus: not quotable
        "judge": "validated"}))
    table = quote.load_external(path)
    assert list(table) == ["contrastive/identity"]
    assert table["contrastive/identity"].tau_stripped == 1.0


def test_figures_follow_the_evaluators_that_ran() -> None:
    table = {"contrastive": ExternalValidity(name="contrastive", **{**ENTRY, "validated": False,
                                                                    "tau_stripped": 0.11}),
             "contrastive/identity": ExternalValidity(name="contrastive/identity", **ENTRY)}
    assert quote.external_for("contrastive", {"contrastive/identity"}, table) == [
        table["contrastive/identity"]]
    assert quote.external_for("contrastive", {"contrastive/embedding"}, table) == [
        table["contrastive"]]
    assert quote.external_for("retrieval", {"retrieval/embedding"}, table) == []
    family = ValidityFamily(family="contrastive", units=3,
                            external=[table["contrastive/identity"]])
    assert family.external_text() == ("contrastive/identity: externally validated on CoSQA: "
                                      "tau +0.80 with docstrings, +1.00 stripped")
    family.external = [table["contrastive"]]
    assert family.external_text() == ("failed external validation on CoSQA: tau +0.80 with "
                                      "docstrings, +0.11 stripped")
    assert ValidityFamily(family="retrieval", units=3).external_text() == (
        "not externally validated")


def test_analyze_quotes_the_table_and_heads_the_section_with_a_verdict(config) -> None:  # type: ignore[no-untyped-def]
    records = _judge_records("local/a", honest=True)
    quoted = {"judge/pointwise": ExternalValidity(name="judge/pointwise", **ENTRY)}
    section = analyze(records, config, 12, external=quoted)
    (family,) = section.families
    assert family.external == [quoted["judge/pointwise"]]
    assert section.verdict == ("every family that scored it orders the known-answer ladder: "
                               "judge (tau +1.00, valid)")
    assert analyze(records, config, 12, external={}).families[0].external == []
    data = section.to_json_dict()
    assert data["verdict"] == section.verdict
    assert data["families"][0]["external"][0]["tauDocstrings"] == 0.8


def test_the_report_reads_the_shipped_file(config, tmp_path: Path,  # type: ignore[no-untyped-def]
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "external.json"
    path.write_text(json.dumps({"judge": ENTRY}))
    monkeypatch.setattr(quote, "EXTERNAL_PATH", path)
    section = analyze(_judge_records("local/a", honest=True), config, 12)
    assert section.families[0].external_text() == (
        "externally validated on CoSQA: tau +0.80 with docstrings, +1.00 stripped")
    monkeypatch.setattr(quote, "EXTERNAL_PATH", tmp_path / "none.json")
    section = analyze(_judge_records("local/a", honest=True), config, 12)
    assert section.families[0].external_text() == "not externally validated"


def test_the_verdict_names_what_to_distrust_first() -> None:
    good = ValidityFamily(family="retrieval", units=9, kendall_tau=1.0, status="low resolution")
    bad = ValidityFamily(family="contrastive", units=9, kendall_tau=0.67,
                         status="partial order", flagged=True)
    assert verdict(ValiditySection(families=[good, bad])) == (
        "DISTRUST contrastive (tau +0.67, partial order): it does not order the known-answer "
        "ladder; the other family orders the known-answer ladder: retrieval (tau +1.00, "
        "low resolution)")
    assert verdict(ValiditySection()).startswith("no evaluator family scored")


@pytest.mark.parametrize(("overrides", "free"), [
    ({}, True),
    ({"evaluation.retrieval.queriesFile": "q.jsonl"}, True),
    ({"models.judge": [{"provider": "openai", "model": "gpt-4o"}]}, False),
    ({"models.judge": [{"provider": "openai", "model": "gpt-4o"}],
      "evaluation.judge.enabled": False, "evaluation.contrastive.enabled": False,
      "evaluation.retrieval.enabled": False}, True),
    ({"evaluation.downstream.completionModel": "openai/gpt-4o"}, False),
    ({"evaluation.downstream.completionModel": "openai/gpt-4o",
      "evaluation.downstream.enabled": False}, True),
])
def test_the_ladder_runs_by_default_only_when_no_evaluator_can_call_a_model(
        tmp_path: Path, overrides: dict, free: bool) -> None:
    assert costs_no_calls(load_settings(None, overrides, base_dir=tmp_path,
                                        families=BUILTIN_FAMILIES)) is free


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return load_settings(None, base_dir=Path(tmp_path_factory.mktemp("cfg")),
                         families=BUILTIN_FAMILIES).benchmark_config()
