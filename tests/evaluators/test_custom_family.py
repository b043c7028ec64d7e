"""Evaluator families beyond the built-in four, as ``docs/architecture.md`` shows them.

A family declared by a ``conftest.py`` (the docs' example, run as written) and a family
added the way a built-in one is (one package and one line in ``evaluators/registry.py``,
in a copy of the package) are each ranked, weighed and configured by their declaration,
selected by name (``--sb-eval``, ``--sb-only``, the CLI's ``--only``, ``-m`` under
``--strict-markers``), and an earlier run's report still renders after the set of
families changed. An evaluator of a family declared nowhere keeps working as before.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_summarybench.aggregate.scores import weighted
from tests.fakes.project import TEST_MODULE, session_results, write_bench_module

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
SAMPLE = ROOT / "fixtures" / "sample_codebase"
#: Items per evaluator: 8 sampled units x 5 models under test, and with the validity ladder
#: (on by default offline) 7 documented units x 5 ladder models more. The sessions that
#: test a selection pass ``--sb-no-validate``: the ladder items they would add are the
#: same as in the sessions that rank the family.
SAMPLED = 8 * 5
PER_EVALUATOR = SAMPLED + 7 * 5
#: Contrastive matching, the built-in family these sessions run beside the new one, on the
#: lexical embedding: the families' wiring is under test here, not the embedding, and
#: MiniLM was some 70% of each session's CPU time (tests/embeddings test it).
LEXICAL = {"contrastive": {"embeddingModel": "builtin/hashing"}}


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def _example() -> str:
    """The docs' conftest.py declaring the brevity family."""
    return next(b for b in _blocks("python") if "pytest_summarybench_families" in b)


def _config(*extra: dict[str, Any]) -> dict[str, Any]:
    config: dict[str, Any] = {"codebase": {"root": str(SAMPLE), "languages": ["python"]},
                              "evaluation": {"sampleSize": 8, "retrieval": {"enabled": False},
                                             **LEXICAL}}
    for more in extra:
        for key, value in more.items():
            if isinstance(value, dict):
                config.setdefault(key, {}).update(value)
            else:
                config[key] = value
    return config


def _project(pytester: pytest.Pytester, *, conftest: str | None = None, docs_yaml: bool = True,
             extra: str = "", config: dict[str, Any] | None = None) -> None:
    pytester.makeconftest((_example() if conftest is None else conftest) + extra)
    wanted = [yaml.safe_load(next(b for b in _blocks("yaml") if "brevity" in b))] \
        if docs_yaml else []
    cfg = _config(*wanted, *([config] if config else []))
    pytester.path.joinpath("summarybench.yaml").write_text(yaml.safe_dump(cfg))
    write_bench_module(pytester)


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "summarybench", "-p", "no:cacheprovider", "--sb-output",
                              "out", *args)


def _records(store: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(store)
    try:
        return [json.loads(row[0]) for row in conn.execute("SELECT json FROM records")]
    finally:
        conn.close()


def _run_id(output: str) -> str:
    found = re.search(r"^run ([0-9a-f]{12}) \(", output, re.MULTILINE)
    assert found is not None, output
    return found.group(1)


def _header(lines: list[str]) -> list[str]:
    return next(line for line in lines if line.lstrip().startswith("rank ")).split()


# -- a family from a conftest.py's hook ----------------------------------------------------

#: The docs' example, with a section in the reports (the family's title heads it).
SUMMARIZING = '''

def _summarize(self, records, ctx):
    return {"summaries": len(records)}


SentenceCount.summarize = _summarize
'''


def test_a_declared_family_is_ranked_weighed_and_configured_by_its_declaration(
        pytester: pytest.Pytester) -> None:
    _project(pytester, extra=SUMMARIZING)
    result = _run(pytester, "--strict-markers")
    # contrastive/embedding and brevity/sentences
    result.assert_outcomes(passed=2 * PER_EVALUATOR)
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    meta = data["metadata"]
    assert "brevity" in meta["familiesRun"]
    configuration = meta["configuration"]
    # the declaration's defaults and the file's values, in results.json as for any family
    assert configuration["weights"]["brevity"] == 0.1
    assert configuration["evaluations"]["brevity"] == {
        "enabled": True, "minSentences": 2, "maxSentences": 3}
    assert configuration["scoring"]["brevityWeights"] == {"sentences": 1.0}
    by_model = {r["modelId"]: r for r in data["rankings"]}
    assert len(by_model) == 5
    for ranking in by_model.values():
        scores = ranking["scores"]
        assert 0.0 <= scores["brevity"] <= 1.0
        # the overall score is the weighted mean over the families that ran
        expected = weighted({"contrastive": scores["contrastive"],
                             "brevity": scores["brevity"]},
                            {"contrastive": 0.25, "brevity": 0.1})
        assert ranking["overallScore"] == pytest.approx(expected)
    # the family score is the mean of the declared metric over the model's items, and the
    # metric follows the family's section (maxSentences: 3 in the file)
    records = [r for r in _records(pytester.path / "out" / "store.sqlite")
               if r["evaluator"] == "brevity/sentences"]
    for r in records:
        assert r["metrics"]["in_range"] == float(2 <= r["metrics"]["sentences"] <= 3)
    for model, ranking in by_model.items():
        mine = [r["metrics"]["in_range"] for r in records if r["modelId"] == model]
        assert len(mine) == 8
        assert ranking["scores"]["brevity"] == pytest.approx(sum(mine) / len(mine))
    assert "brevity" in _header(result.outlines)
    markdown = (pytester.path / "out" / "report.md").read_text()
    assert "## Evaluator details: Brevity" in markdown
    assert "| Brevity |" in next(line for line in markdown.splitlines()
                                 if line.startswith("| Rank |"))


def test_a_declared_family_is_selected_by_its_name(pytester: pytest.Pytester) -> None:
    _project(pytester)
    markers = pytester.runpytest("-p", "summarybench", "-p", "no:cacheprovider", "--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.brevity: summarybench brevity evaluator items"])

    only_family = _run(pytester, "--strict-markers", "--sb-no-validate", "--sb-eval", "brevity")
    only_family.assert_outcomes(passed=SAMPLED)
    assert session_results(only_family)["metadata"]["familiesRun"] == ["brevity"]

    for selection in (["--sb-only", "brevity"], ["-m", "brevity"]):
        selected = _run(pytester, "--strict-markers", "--sb-no-validate", *selection)
        selected.assert_outcomes(passed=SAMPLED, deselected=SAMPLED)
        run = session_results(selected)["metadata"]["run"]
        assert run["deselectedByFamily"] == {"contrastive": SAMPLED}

    refused = _run(pytester, "--sb-eval", "brevity,vibes")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*--sb-eval 'brevity,vibes': expected a comma-separated list "
                                  "of judge, contrastive, retrieval, downstream, brevity*"])


def test_a_declared_family_section_refuses_a_typo_with_did_you_mean(
        pytester: pytest.Pytester) -> None:
    _project(pytester, docs_yaml=False,
             config={"evaluation": {"brevity": {"maxSentence": 3}}})
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*evaluation.brevity.maxSentence = 3*unknown key (did you "
                                 "mean evaluation.brevity.maxSentences?)*"])


def test_an_earlier_runs_report_renders_after_the_families_changed(
        pytester: pytest.Pytester) -> None:
    _project(pytester, config={"evaluation": {"contrastive": {"enabled": False}}})
    earlier = _run_id(_run(pytester).stdout.str())
    # The family is gone (a process that never declared it: the CLI's), and the earlier
    # run's report, from the store, still shows it.
    pytester.path.joinpath("conftest.py").unlink()
    proc = subprocess.run([sys.executable, "-m", "pytest_summarybench.cli", "report", "--run",
                           earlier, "--store", "out/store.sqlite", "--format", "markdown"],
                          cwd=pytester.path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    header = next(line for line in proc.stdout.splitlines() if line.startswith("| Rank |"))
    assert "| Brevity |" in header


# -- an evaluator of a family declared nowhere ---------------------------------------------

#: An evaluator of a family no hook declares (the hook route before families were
#: declared).
UNDECLARED = '''
from typing import ClassVar

from pytest_summarybench.evaluators import Component, Evaluator
from pytest_summarybench.schemas import ScoreRecord


class SentenceCount(Evaluator):
    name: ClassVar[str] = "brevity/sentences"
    family: ClassVar[str] = "brevity"
    components: ClassVar[tuple[Component, ...]] = (
        Component(metric="in_range", weight="sentences", label="summaries of 2-4 sentences"),)

    def evaluate(self, item, ctx):
        sentences = sum(ctx.summary(item.unit_id, item.model_id).summary.count(m) for m in ".!?")
        return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id, evaluator=self.name,
                            metrics={"in_range": float(2 <= sentences <= 4)})]


def pytest_summarybench_evaluators(config):
    return [SentenceCount()]
'''


def test_a_family_declared_nowhere_needs_a_weight_and_gets_its_marker(
        pytester: pytest.Pytester) -> None:
    _project(pytester, conftest=UNDECLARED, docs_yaml=False)
    unweighed = _run(pytester)
    assert unweighed.ret != 0
    assert "weights.brevity" in "\n".join(unweighed.outlines + unweighed.errlines)
    assert not (pytester.path / "out" / "results.json").exists()

    pytester.path.joinpath("summarybench.yaml").write_text(yaml.safe_dump(_config(
        {"weights": {"brevity": 0.1}})))
    result = _run(pytester, "--strict-markers", "--sb-no-validate", "-m", "brevity")
    # its marker is registered when the matrix is built, before -m and --strict-markers
    # read it
    result.assert_outcomes(passed=SAMPLED, deselected=SAMPLED)


def test_a_nan_metric_fails_its_item_and_is_never_a_score(pytester: pytest.Pytester) -> None:
    _project(pytester, extra='''

class Broken(SentenceCount):
    name: ClassVar[str] = "brevity/broken"
    components: ClassVar[tuple[Component, ...]] = (
        Component(metric="in_range", weight="broken", label="always NaN"),)

    def evaluate(self, item, ctx):
        return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                            evaluator=self.name, metrics={"in_range": float("nan")})]


def pytest_summarybench_evaluators(config):
    return [Broken()]
''')
    result = _run(pytester, "--sb-no-validate", "-k", "broken")
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == SAMPLED and "passed" not in outcomes
    result.stdout.fnmatch_lines(["*produced an invalid score record: metric 'in_range' is nan*"])
    assert "During handling of the above exception" not in result.stdout.str()


def test_the_cli_only_selects_a_plugins_family(pytester: pytest.Pytester) -> None:
    # The CLI runs the package's benchmark, so a family reaches it from a plugin (-p, or
    # installed); the session, which loaded it, checks the names --only gives.
    pytester.makepyfile(brevity_plugin=_example())
    pytester.path.joinpath("summarybench.yaml").write_text(yaml.safe_dump(_config(
        yaml.safe_load(next(b for b in _blocks("yaml") if "brevity" in b)),
        {"output": {"directory": "out"}})))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(pytester.path), os.environ.get("PYTHONPATH", "")])}

    def sb(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest_summarybench.cli", *args],
                              cwd=pytester.path, env=env, capture_output=True, text=True,
                              timeout=600)

    selected = sb("evaluate", "--only", "brevity", "--", "-p", "brevity_plugin",
                  "-p", "no:cacheprovider", "--strict-markers", "--sb-no-validate")
    assert selected.returncode == 0, selected.stdout + selected.stderr
    assert f"{SAMPLED} passed, {SAMPLED} deselected" in selected.stdout
    refused = sb("evaluate", "--only", "vibes", "--", "-p", "brevity_plugin")
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--sb-only 'vibes': expected a comma-separated list of judge, contrastive, " \
        "retrieval, downstream, brevity" in refused.stderr


# -- a built-in family: one package and one registry line ----------------------------------

LENGTH = {
    "__init__.py": '''
        """A scratch family: do summaries keep within a word budget?"""

        from __future__ import annotations

        from ...core.family import Family

        FAMILY = Family(
            name="length",
            title="Length",
            weight=0.1,
            evaluators={"length/words": "pytest_summarybench.evaluators.length.words:WordBudget"},
            weights={"within_budget": 1.0},
            settings="pytest_summarybench.evaluators.length.settings:LengthSettings",
        )
        ''',
    "settings.py": '''
        from __future__ import annotations

        from ...settings import FamilySection


        class LengthSettings(FamilySection):
            max_words: int = 40
        ''',
    "words.py": '''
        from __future__ import annotations

        from typing import ClassVar

        from ...schemas import ScoreRecord
        from ..base import Component, EvaluationError, Evaluator


        class WordBudget(Evaluator):
            name: ClassVar[str] = "length/words"
            family: ClassVar[str] = "length"
            components: ClassVar[tuple[Component, ...]] = (
                Component(metric="within", weight="within_budget", label="within the budget"),)

            def evaluate(self, item, ctx):
                budget = ctx.settings.evaluation.length.max_words
                summary = ctx.summary(item.unit_id, item.model_id)
                if summary is None:
                    raise EvaluationError(f"no summary of {item.model_id}")
                words = len(summary.summary.split())
                return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                                    evaluator=self.name,
                                    metrics={"within": float(words <= budget),
                                             "words": float(words)})]

            def summarize(self, records, ctx):
                return {"budget": ctx.settings.evaluation.length.max_words,
                        "summaries": len(records)}
        ''',
}
#: The one line a built-in family adds to the registry, after the last built-in one.
REGISTRY_LINE = '    _declared("length"),\n'


@pytest.fixture(scope="module")
def with_length(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package with the scratch family added as a built-in one: its package
    under ``evaluators/`` and its line in ``evaluators/registry.py``, nothing else."""
    site = tmp_path_factory.mktemp("site")
    package = site / "pytest_summarybench"
    shutil.copytree(ROOT / "pytest_summarybench", package,
                    ignore=shutil.ignore_patterns("__pycache__", "_sample"))
    (site / "fixtures").symlink_to(ROOT / "fixtures")  # where a checkout keeps the sample
    family = package / "evaluators" / "length"
    family.mkdir()
    for name, text in LENGTH.items():
        (family / name).write_text(textwrap.dedent(text).lstrip())
    registry = package / "evaluators" / "registry.py"
    text = registry.read_text()
    last = '    _declared("downstream"),\n'
    assert text.count(last) == 1, "the registry lists one built-in family per line"
    registry.write_text(text.replace(last, last + REGISTRY_LINE))
    return site


def test_a_built_in_family_is_one_package_and_one_registry_line(
        with_length: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_bench.py").write_text(textwrap.dedent(TEST_MODULE))
    (project / "summarybench.yaml").write_text(yaml.safe_dump(_config({
        "evaluation": {"length": {"maxWords": 30}},
        "scoring": {"lengthWeights": {"withinBudget": 2.0}},
        "output": {"directory": "out"}})))
    plain = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    copy = {**plain, "PYTHONPATH": str(with_length)}

    def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], cwd=project, env=env,
                              capture_output=True, text=True, timeout=900)

    def pytest_run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
        return run(env, "-m", "pytest", "-p", "summarybench", "-p", "no:cacheprovider",
                   "--strict-markers", "test_bench.py", *args)

    # An earlier run, before the family existed (its section removed from the file).
    (project / "summarybench.yaml").write_text(yaml.safe_dump(_config(
        {"output": {"directory": "out"}})))
    earlier = pytest_run(plain, "--sb-no-validate")
    assert earlier.returncode == 0, earlier.stdout + earlier.stderr
    earlier_id = _run_id(earlier.stdout)
    (project / "summarybench.yaml").write_text(yaml.safe_dump(_config({
        "evaluation": {"length": {"maxWords": 30}},
        "scoring": {"lengthWeights": {"withinBudget": 2.0}},
        "output": {"directory": "out"}})))

    # Ranked, weighed and configured by its declaration, with --strict-markers.
    ranked = pytest_run(copy)
    assert ranked.returncode == 0, ranked.stdout + ranked.stderr
    assert f"{2 * PER_EVALUATOR} passed" in ranked.stdout
    assert "length" in _header(ranked.stdout.splitlines())
    data = json.loads((project / "out" / "results.json").read_text())
    meta = data["metadata"]
    assert meta["familiesRun"] == ["contrastive", "length"]
    assert list(meta["configuration"]["weights"]) == [
        "judge", "contrastive", "retrieval", "downstream", "length"]
    assert meta["configuration"]["weights"]["length"] == 0.1
    assert meta["configuration"]["evaluations"]["length"] == {"enabled": True, "maxWords": 30}
    assert meta["configuration"]["scoring"]["lengthWeights"] == {"withinBudget": 2.0}
    for ranking in data["rankings"]:
        scores = ranking["scores"]
        assert ranking["overallScore"] == pytest.approx(weighted(
            {"contrastive": scores["contrastive"], "length": scores["length"]},
            {"contrastive": 0.25, "length": 0.1}))
    markdown = (project / "out" / "report.md").read_text()
    assert "## Evaluator details: Length" in markdown
    latest_id = _run_id(ranked.stdout)

    # Selected by its name: --sb-eval, and the CLI's --only.
    alone = pytest_run(copy, "--sb-no-validate", "--sb-eval", "length")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert f"{SAMPLED} passed" in alone.stdout
    cli = run(copy, "-m", "pytest_summarybench.cli", "evaluate", "--only", "length", "--",
              "-p", "no:cacheprovider", "--strict-markers", "--sb-no-validate")
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert f"{SAMPLED} passed, {SAMPLED} deselected" in cli.stdout

    # `summarybench config` knows it too.
    configured = run(copy, "-m", "pytest_summarybench.cli", "config", "--eval", "length")
    assert configured.returncode == 0, configured.stderr
    evaluation = yaml.safe_load((project / "summarybench.yaml").read_text())["evaluation"]
    assert evaluation["length"]["enabled"] is True
    assert evaluation["contrastive"]["enabled"] is False

    # Reports of both runs render, from the store, whichever families are declared.
    for env, run_id, family_shown in ((copy, earlier_id, False), (copy, latest_id, True),
                                      (plain, latest_id, True)):
        shown = run(env, "-m", "pytest_summarybench.cli", "report", "--run", run_id,
                    "--store", "out/store.sqlite", "--format", "markdown")
        assert shown.returncode == 0, shown.stderr
        header = next(line for line in shown.stdout.splitlines()
                      if line.startswith("| Rank |"))
        assert ("| Length |" in header) is family_shown
        assert "| Contrastive |" in header
