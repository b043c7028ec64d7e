"""A synthetic run for report tests: units in three languages, three models of known
strength, records of three evaluator families, priced summaries, and one summary that
carries HTML payloads (summaries are untrusted text)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

from pytest_summarybench.aggregate import ReportInputs, build_report
from pytest_summarybench.schemas import (
    BenchmarkConfig,
    BenchmarkReport,
    CodebaseInfo,
    CodeUnit,
    GeneratedSummary,
    ScoreRecord,
)
from pytest_summarybench.schemas.summaries import GenerationMetadata
from pytest_summarybench.schemas.units import UnitMetadata, UnitType

XSS = ('<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"> '
       'Handles various operations & "quotes"')
#: model -> (probability its summary matches, cost per summary in USD)
MODELS = {"openai/alpha": (0.85, 0.004), "anthropic/beta": (0.6, 0.002),
          "local/gamma": (0.35, 0.0005)}
LANGUAGES = ("python", "go", "typescript")
TYPES: tuple[UnitType, ...] = ("function", "method", "class")


def make_units(n: int) -> list[CodeUnit]:
    units = []
    for i in range(n):
        lang, kind = LANGUAGES[i % 3], TYPES[(i // 3) % 3]
        name = f"update_record_{i}" if lang == "python" else f"updateRecord{i}"
        units.append(CodeUnit(
            id=f"u{i:03d}", path=f"src/mod{i % 5}.{lang[:2]}", name=name, type=kind,
            language=lang, docstring=f"Update record {i} in the ledger.",
            content=f"def {name}(db, row):\n    db.save(row)\n    raise ValueError('bad')\n",
            metadata=UnitMetadata(start_line=1, end_line=3)))
    return units


def summary_of(unit: CodeUnit, model_id: str, text: str, cost: float) -> GeneratedSummary:
    return GeneratedSummary(
        id=f"{unit.id}-{model_id}", code_unit_id=unit.id, model_id=model_id, summary=text,
        generation_metadata=GenerationMetadata(
            model_name=model_id.split("/")[1], prompt_version="v1", temperature=0.3,
            max_tokens=500, generated_at="2026-01-01T00:00:00Z", latency_ms=10.0,
            input_tokens=100, output_tokens=30, cost=cost))


def make_inputs(n_units: int = 30, seed: int = 7) -> ReportInputs:
    rng = np.random.default_rng(seed)
    units = make_units(n_units)
    records: list[ScoreRecord] = []
    summaries: dict[tuple[str, str], GeneratedSummary] = {}
    for unit in units:
        difficulty = rng.uniform(-0.2, 0.2)
        for model_id, (p, cost) in MODELS.items():
            good = rng.random() < p + difficulty
            text = (f"Persist a ledger row for {unit.name} and reject invalid rows."
                    if good else "Handles various operations on the data.")
            rank = 1 if good else int(rng.integers(2, 11))
            if model_id == "local/gamma" and unit.id == "u001":
                # The payload is gamma's worst summary, so every report quotes it.
                text, good, rank = XSS, False, 10
            summaries[(unit.id, model_id)] = summary_of(unit, model_id, text, cost)
            node = f"bench.py::test[{unit.id}-{model_id}"
            records += [
                ScoreRecord(unit_id=unit.id, model_id=model_id, evaluator="contrastive/embedding",
                            nodeid=node + "-c]", metrics={"correct": float(good)}),
                ScoreRecord(unit_id=unit.id, model_id=model_id, evaluator="retrieval/embedding",
                            nodeid=node + "-r]",
                            metrics={"hit@1": float(rank == 1), "hit@5": float(rank <= 5),
                                     "reciprocal_rank": 1.0 / rank}),
                ScoreRecord(unit_id=unit.id, model_id=model_id, evaluator="judge/pointwise",
                            nodeid=node + "-j]",
                            metrics={"weighted_average": float(np.clip(
                                (4.5 if good else 2.0) + rng.normal(0, 0.4), 1, 5))
                                if text != XSS else 1.0},
                            details={"reasoning": "Too vague <b>bold</b>" if not good
                                     else "Accurate.", "cost": cost / 2}),
            ]
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    return ReportInputs(
        run_id="synthetic", name="Synthetic <Bench>", config=BenchmarkConfig(seed=seed),
        codebase=CodebaseInfo(name="synthetic", languages=list(LANGUAGES),
                              total_code_units=n_units * 4, sampled_code_units=n_units),
        records=records, model_ids=sorted(MODELS), units=units, summaries=summaries,
        started_at=start, finished_at=start + timedelta(seconds=42),
        families_skipped={"downstream": "disabled in the configuration"},
        evaluator_details={"judge/pointwise": {
            "biasAudit": {"positionBias": 0.03, "lengthCorrelation": 0.12},
            "byJudge": {"openai/j1": {"items": 90, "meanScore": 3.4},
                        "anthropic/j2": {"items": 90, "meanScore": 3.6}},
            "note": "<img src=x onerror=alert(1)>"}})


def make_report(n_units: int = 30, seed: int = 7) -> BenchmarkReport:
    return build_report(make_inputs(n_units, seed))
