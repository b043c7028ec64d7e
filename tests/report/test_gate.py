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


def test_a_baseline_that_scores_models_another_way_is_not_compared_and_fails_the_gate(
        tmp_path: Path) -> None:
    """The new user's pass on rich: the baseline's overall scores left downstream out (it
    scored only some models), the gated run's had it in (the models' families were fixed),
    and maxRegression was applied to the deltas across them without a word."""
    from pytest_summarybench.report.terminal import terminal_lines

    data = json.loads(report_json(make_report()))
    data["metadata"]["benchmarkId"] = "e20b2359aaaa"        # another configuration
    family = data["metadata"]["familiesRun"][-1]
    data["metadata"]["familiesSkipped"][f"{family} in overall"] = "scored for only some models"
    for r in data["rankings"]:
        r["overallScore"] += 0.3                           # which would read as a drop
    (tmp_path / "other.json").write_text(json.dumps(data))
    current = make_report()
    messages = apply_gate(current, _settings(tmp_path, baseline="other.json",
                                             maxRegression=0.05), Store(tmp_path / "s.sqlite"))
    assert len(messages) == 1
    here = current.metadata.benchmark_id[:8]
    assert messages[0].startswith(
        f"gate.baseline other.json (configuration e20b2359) scores models another way than "
        f"this run ({here}): the families in the overall score differ ("), messages
    assert messages[0].endswith(
        f", {family} here), so no model was compared with it; point gate.baseline at a run "
        "that scores the same way, or run once without it to make one")
    assert current.baseline is not None and current.baseline.comparable is False
    assert current.baseline.deltas == {} and current.baseline.tests == []
    assert all(r.delta_from_baseline is None for r in current.rankings)
    lines = terminal_lines(current)
    assert messages[0] in lines
    assert not any(line.startswith("baseline other.json:") for line in lines)
    # Another configuration that scores the same way (another seed, sample or code) is
    # compared, on the units both runs scored.
    del data["metadata"]["familiesSkipped"][f"{family} in overall"]
    (tmp_path / "seed.json").write_text(json.dumps(data))
    again = make_report()
    messages = apply_gate(again, _settings(tmp_path, baseline="seed.json",
                                           maxRegression=0.05), Store(tmp_path / "s.sqlite"))
    assert again.baseline is not None and again.baseline.comparable
    assert again.baseline.deltas and not any("another way" in m for m in messages)


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
