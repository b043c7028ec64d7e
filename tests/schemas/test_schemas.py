"""Every schema round-trips through JSON with the spec's camelCase field names."""

from __future__ import annotations

import json

import pytest

from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.schemas import (
    BenchmarkConfig,
    BenchmarkReport,
    BenchmarkRun,
    CodebaseInfo,
    CodeUnit,
    ContrastiveResults,
    EvaluationResult,
    FamilyScores,
    GeneratedSummary,
    GenerationMetadata,
    JudgeResults,
    JudgeScores,
    ModelConfig,
    ModelRanking,
    Parameter,
    ReportMetadata,
    RetrievalResults,
    ScoreRecord,
    UnitMetadata,
    UnitRelationships,
)
from pytest_summarybench.settings import load_settings


def _unit() -> CodeUnit:
    return CodeUnit(
        id="u1", path="src/a.py", name="Cart.total", type="method", language="python",
        content="def total(self):\n    return 1\n", docstring="Sum of line items.",
        metadata=UnitMetadata(
            start_line=3, end_line=4, signature="def total(self, tax: float = 0.2) -> float",
            parameters=[Parameter(name="tax", type="float", optional=True, default_value="0.2")],
            return_type="float", visibility="public", decorators=["cached"],
            dependencies=["decimal"], complexity=1),
        relationships=UnitRelationships(parent_id="c1", calls_ids=["u2"], called_by_ids=["u3"]),
    )


def _summary() -> GeneratedSummary:
    return GeneratedSummary(
        id="s1", code_unit_id="u1", model_id="openai/gpt-4o", summary="Totals the cart.",
        generation_metadata=GenerationMetadata(
            model_name="gpt-4o", model_version="2024-08-06", prompt_version="v1",
            temperature=0.3, max_tokens=500, generated_at="2026-11-21T00:00:00Z",
            latency_ms=12.5, input_tokens=100, output_tokens=20, cost=None))


def _report() -> BenchmarkReport:
    return BenchmarkReport(
        metadata=ReportMetadata(
            benchmark_id="r1", name="n", run_date="2026-11-21", duration="1.0s",
            codebase=CodebaseInfo(name="c", languages=["python"], total_code_units=2,
                                  sampled_code_units=1),
            configuration=BenchmarkConfig()),
        rankings=[ModelRanking(rank=1, model_id="builtin/docstring", model_name="docstring",
                               overall_score=0.5, scores=FamilyScores(contrastive=0.5))])


CASES = [
    (_unit, {"id", "path", "name", "type", "language", "content", "metadata",
             "relationships"}, ["metadata", "startLine"]),
    (_summary, {"id", "codeUnitId", "modelId", "summary", "generationMetadata"},
     ["generationMetadata", "latencyMs"]),
    (lambda: EvaluationResult(
        id="e1", summary_id="s1", evaluation_type="judge", evaluated_at="t",
        judge_results=JudgeResults(judge_model_id="j", scores=JudgeScores(
            accuracy=4, completeness=3, semantic_richness=5, abstraction=4, conciseness=3))),
     {"id", "summaryId", "evaluationType", "judgeResults", "evaluatedAt"},
     ["judgeResults", "scores", "semanticRichness"]),
    (lambda: EvaluationResult(
        id="e2", summary_id="s1", evaluation_type="contrastive", evaluated_at="t",
        contrastive_results=ContrastiveResults(correct=True, predicted_rank=1,
                                               distractor_ids=["x"], method="embedding")),
     {"id", "summaryId", "evaluationType", "contrastiveResults", "evaluatedAt"},
     ["contrastiveResults", "predictedRank"]),
    (lambda: EvaluationResult(
        id="e3", summary_id="s1", evaluation_type="retrieval", evaluated_at="t",
        retrieval_results=RetrievalResults(query_id="q", retrieved_at_k=[3, 5],
                                           reciprocal_rank=0.5)),
     {"id", "summaryId", "evaluationType", "retrievalResults", "evaluatedAt"},
     ["retrievalResults", "retrievedAtK"]),
    (lambda: BenchmarkRun(
        # the run's configuration as results.json records it (docs/reports.md#the-results-file),
        # written from the settings (the one configuration tree)
        id="r", name="n", started_at="t",
        config=load_settings(None, families=BUILTIN_FAMILIES).benchmark_config(),
        codebase_info=CodebaseInfo(name="c"),
        models_under_test=[ModelConfig.parse("openai/gpt-4o")]),
     {"id", "name", "description", "config", "codebaseInfo", "modelsUnderTest", "judgeModels",
      "status", "startedAt"}, ["config", "evaluations", "contrastive", "distractorCount"]),
    (_report, {"metadata", "rankings", "detailed", "comparisons", "statistics", "failures",
               "costs", "errors"}, ["rankings", 0, "overallScore"]),
    (lambda: ScoreRecord(unit_id="u", model_id="m", evaluator="contrastive/embedding",
                         metrics={"correct": 1.0}),
     {"benchmark", "nodeid", "unitId", "modelId", "evaluator", "metrics", "details"},
     ["metrics", "correct"]),
]


@pytest.mark.parametrize(("make", "keys", "path"), CASES,
                         ids=[c[0]().__class__.__name__ + str(i) for i, c in enumerate(CASES)])
def test_round_trip_with_spec_field_names(make, keys, path) -> None:
    obj = make()
    data = json.loads(json.dumps(obj.to_json_dict()))
    assert keys <= set(data), f"missing spec keys: {keys - set(data)}"
    node = data
    for step in path:
        node = node[step]
    back = type(obj).model_validate(data)
    # What is read back writes the same JSON (a run's evaluation blocks are open mappings,
    # whose unset entries results.json leaves out).
    assert back.to_json_dict() == data


def test_unknown_field_is_rejected() -> None:
    with pytest.raises(ValueError, match="startLin"):
        UnitMetadata.model_validate({"startLine": 1, "endLine": 2, "startLin": 3})


def test_model_config_parse_and_errors() -> None:
    m = ModelConfig.parse("openrouter/meta-llama/llama-3.1-70b")
    assert (m.provider, m.model_name, m.id) == (
        "openrouter", "meta-llama/llama-3.1-70b", "openrouter/meta-llama/llama-3.1-70b")
    assert (m.temperature, m.max_tokens, m.top_p) == (0.3, 500, 1.0)
    with pytest.raises(ValueError, match="PROVIDER/MODEL"):
        ModelConfig.parse("gpt-4o")
    # Of the form, with a provider nobody serves: say that, not "not of the form".
    with pytest.raises(ValueError, match="unknown provider 'foo' in model 'foo/bar': use one of "
                                         "anthropic, openai, "):
        ModelConfig.parse("foo/bar")
    with pytest.raises(ValueError, match="temperature"):
        ModelConfig(provider="openai", model_name="x", temperature=3)


def test_default_weights_are_the_spec_defaults() -> None:
    # Declared by each family (its package's FAMILY), written by the settings.
    cfg = load_settings(None, families=BUILTIN_FAMILIES).benchmark_config().to_json_dict()
    assert cfg["weights"] == {"judge": 0.30, "contrastive": 0.25, "retrieval": 0.25,
                              "downstream": 0.20}
    s = cfg["scoring"]
    assert s["judgeWeights"] == {"pointwise": 0.4, "pairwise": 0.6}
    # the spec's two, and contrastive/lexical's (not in the spec; used only when selected)
    assert s["contrastiveWeights"] == {"embedding": 0.5, "lexical": 0.5, "llm": 0.5}
    assert s["retrievalWeights"] == {"precision1": 0.3, "precision5": 0.4, "mrr": 0.3}
    assert s["downstreamWeights"] == {"completion": 0.4, "bugLocalization": 0.3,
                                      "functionSelection": 0.3}
