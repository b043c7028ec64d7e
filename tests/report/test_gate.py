"""The CI gate's rules on a synthetic report (the session wiring is in
test_session_reports.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic_report import make_report

from pytest_summarybench.report.gate import apply_gate
from pytest_summarybench.report.json_report import report_json
from pytest_summarybench.settings import Settings
from pytest_summarybench.store import Store


def _settings(tmp_path: Path, **gate: object) -> Settings:
    return Settings.model_validate({"gate": gate, "baseDir": str(tmp_path)})


def test_thresholds_name_model_and_metric(tmp_path: Path) -> None:
    report = make_report()
    scores = {r.model_id: r.overall_score for r in report.rankings}
    messages = apply_gate(report, _settings(tmp_path, minOverall={
        "openai/alpha": 0.1, "local/gamma": 0.99, "nobody/else": 0.1},
        minFamily={"contrastive": 0.5}), Store(tmp_path / "s.sqlite"))
    assert f"local/gamma: overall {scores['local/gamma']:.3f} < gate.minOverall 0.990" \
        in messages
    assert "nobody/else: overall has no score in this run (gate.minOverall requires " \
           "0.100)" in messages
    assert any(m.startswith("local/gamma: contrastive 0.") for m in messages)
    assert not any(m.startswith("openai/alpha: overall") for m in messages)


def test_regression_against_a_results_json(tmp_path: Path) -> None:
    current = make_report()
    data = json.loads(report_json(current))
    # The baseline's alpha was 0.2 better on every unit; beta was the same.
    data["statistics"]["unitScores"]["openai/alpha"] = {
        u: s + 0.2 for u, s in data["statistics"]["unitScores"]["openai/alpha"].items()}
    for r in data["rankings"]:
        if r["modelId"] == "openai/alpha":
            r["overallScore"] += 0.2
    (tmp_path / "base.json").write_text(json.dumps(data))
    messages = apply_gate(current, _settings(tmp_path, baseline="base.json",
                                             maxRegression=0.05), Store(tmp_path / "s.sqlite"))
    assert len(messages) == 1
    assert messages[0].startswith("openai/alpha: overall regressed 0.200 against baseline "
                                  "base.json (p=")
    assert current.baseline is not None
    assert current.baseline.deltas["openai/alpha"] == pytest.approx(-0.2)
    assert current.baseline.deltas["anthropic/beta"] == pytest.approx(0.0)
    assert current.rankings[0].delta_from_baseline == pytest.approx(-0.2)
    # Against itself: no regression, every delta zero.
    (tmp_path / "same.json").write_text(report_json(make_report()))
    same = make_report()
    assert apply_gate(same, _settings(tmp_path, baseline="same.json"),
                      Store(tmp_path / "s.sqlite")) == []
    assert same.baseline is not None and set(same.baseline.deltas.values()) == {0.0}
    # A tolerance larger than the drop lets it pass.
    again = make_report()
    assert apply_gate(again, _settings(tmp_path, baseline="base.json", maxRegression=0.25),
                      Store(tmp_path / "s.sqlite")) == []


@pytest.mark.parametrize(("baseline", "message"), [
    ("missing.json", "gate.baseline 'missing.json': no such file"),
    ("run-that-is-not-there", "gate.baseline 'run-that-is-not-there' is neither a "
                              "results.json file nor a usable run id"),
])
def test_unusable_baseline_is_one_message(tmp_path: Path, baseline: str, message: str) -> None:
    messages = apply_gate(make_report(), _settings(tmp_path, baseline=baseline),
                          Store(tmp_path / "s.sqlite"))
    assert len(messages) == 1 and messages[0].startswith(message)


def test_a_file_that_is_not_a_report_is_named(tmp_path: Path) -> None:
    (tmp_path / "other.json").write_text('{"hello": 1}')
    [message] = apply_gate(make_report(), _settings(tmp_path, baseline="other.json"),
                           Store(tmp_path / "s.sqlite"))
    assert message.startswith("gate.baseline 'other.json' is not a summarybench results.json")
