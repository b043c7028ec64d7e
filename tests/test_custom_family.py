"""Issue 19: an evaluator of a new family, added from a ``conftest.py`` exactly as
``docs/architecture.md`` shows, enters its family score and the overall ranking."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_summarybench.aggregate.scores import weighted
from tests.fakes.project import write_bench_module

pytest_plugins = ["pytester"]
DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_codebase"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def _project(pytester: pytest.Pytester, *, weight: bool = True, extra: str = "") -> None:
    conftest = next(b for b in _blocks("python") if "pytest_summarybench_evaluators" in b)
    pytester.makeconftest(conftest + extra)
    yaml = next(b for b in _blocks("yaml") if "brevity" in b) if weight else ""
    pytester.path.joinpath("summarybench.yaml").write_text(
        f"codebase:\n  root: {SAMPLE}\n  languages: [python]\n"
        "evaluation:\n  sampleSize: 8\n  retrieval: {enabled: false}\n" + yaml)
    write_bench_module(pytester)


def test_a_custom_family_gets_a_score_and_a_share_of_the_overall(
        pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest("-p", "summarybench", "-p", "no:cacheprovider",
                                "--sb-output", "out")
    # 8 units x 5 models x (contrastive/embedding + brevity/sentences), and the validity
    # ladder, on by default offline and scored by the custom family too: 7 documented
    # units x 5 ladder models x 2 evaluators
    result.assert_outcomes(passed=80 + 7 * 5 * 2)
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    assert "brevity" in data["metadata"]["familiesRun"]
    by_model = {r["modelId"]: r for r in data["rankings"]}
    assert len(by_model) == 5
    for ranking in by_model.values():
        scores = ranking["scores"]
        assert 0.0 <= scores["brevity"] <= 1.0
        # the overall score is the spec's weighted mean over the families that ran
        expected = weighted({"contrastive": scores["contrastive"],
                             "brevity": scores["brevity"]},
                            {"contrastive": 0.25, "brevity": 0.1})
        assert ranking["overallScore"] == pytest.approx(expected)
    # the family score is the mean of the declared metric over the model's items
    records = [json.loads(line) for line in _records(pytester)]
    for model, ranking in by_model.items():
        mine = [r["metrics"]["in_range"] for r in records
                if r["modelId"] == model and r["evaluator"] == "brevity/sentences"]
        assert len(mine) == 8
        assert ranking["scores"]["brevity"] == pytest.approx(sum(mine) / len(mine))
    header = next(line for line in result.outlines if line.lstrip().startswith("rank "))
    assert "brevity" in header.split()


def _records(pytester: pytest.Pytester) -> list[str]:
    import sqlite3

    conn = sqlite3.connect(pytester.path / "out" / "store.sqlite")
    try:
        return [row[0] for row in conn.execute("SELECT json FROM records")]
    finally:
        conn.close()


def test_a_family_without_a_weight_stops_the_run_naming_the_key(
        pytester: pytest.Pytester) -> None:
    _project(pytester, weight=False)
    result = pytester.runpytest("-p", "summarybench", "-p", "no:cacheprovider",
                                "--sb-output", "out")
    assert result.ret != 0
    assert "weights.brevity" in "\n".join(result.outlines + result.errlines)
    assert not (pytester.path / "out" / "results.json").exists()


def test_a_nan_metric_fails_its_item_and_is_never_a_score(pytester: pytest.Pytester) -> None:
    _project(pytester, extra='''

class Broken(SentenceCount):
    name: ClassVar[str] = "brevity/broken"
    components: ClassVar[tuple[Component, ...]] = (
        Component(metric="in_range", weight="broken", label="always NaN"),)

    def evaluate(self, item, ctx):
        return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                            evaluator=self.name, metrics={"in_range": float("nan")})]


def pytest_summarybench_evaluators(config):  # noqa: F811 - replaces the example's
    return [SentenceCount(), Broken()]
''')
    result = pytester.runpytest("-p", "summarybench", "-p", "no:cacheprovider",
                                "--sb-output", "out", "-k", "broken and not validate/")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 40 and "passed" not in outcomes
    result.stdout.fnmatch_lines(["*produced an invalid score record: metric 'in_range' is nan*"])
    assert "During handling of the above exception" not in result.stdout.str()
