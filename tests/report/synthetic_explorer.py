"""A synthetic run for the explorer: every built-in family's records with the details the
real evaluators write (pointwise reasoning, pairwise verdicts in both orders, contrastive
options with the summary's similarities and the pick, retrieval queries with ranks,
downstream tasks, errors), at any size, and hostile text where a reader would see it.

Sizes follow a real run: code of ~1,500 characters per unit, summaries of ~250,
judges' reasons of ~300, three queries per unit, nine distractors.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from itertools import combinations

import numpy as np
from synthetic_report import summary_of

from pytest_summarybench.aggregate import ReportInputs, build_report
from pytest_summarybench.aggregate.scoring import builtin_scoring
from pytest_summarybench.schemas import (
    BenchmarkConfig,
    BenchmarkReport,
    CodebaseInfo,
    CodeUnit,
    GeneratedSummary,
    ScoreRecord,
)
from pytest_summarybench.schemas.report import RunSelection
from pytest_summarybench.schemas.units import UnitMetadata, UnitType

#: Text that must show as text and never run: it closes the data's script element, opens
#: a comment, and carries markup with handlers.
HOSTILE = ('</script><script>window.__xss = 1</script><!-- <img src=x '
           'onerror="window.__xss = 2"> & "quotes" \u2028')
MODELS = ("openai/alpha", "anthropic/beta", "local/gamma", "google/delta", "mistral/eps")
JUDGE = "xai/judge"
LANGUAGES = ("python", "go", "typescript")
TYPES: tuple[UnitType, ...] = ("function", "method", "class")
CRITERIA = ("accuracy", "completeness", "semantic_richness", "abstraction", "conciseness")
PAIR_CRITERIA = ("accuracy", "completeness", "searchability", "clarity", "conciseness")
_FILLER = ("    total = compute_total(items, discount)\n"
           "    if total < threshold:\n        raise ValueError('total below threshold')\n")


def _unit(i: int) -> CodeUnit:
    lang, kind = LANGUAGES[i % 3], TYPES[(i // 3) % 3]
    name = f"update_record_{i}" if lang == "python" else f"updateRecord{i}"
    body = f"def {name}(db, row):\n" + _FILLER * 12 + "    db.save(row)\n"
    return CodeUnit(id=f"u{i:04d}", path=f"src/pkg{i % 7}/mod{i % 11}.{lang[:2]}", name=name,
                    type=kind, language=lang, content=body,
                    metadata=UnitMetadata(start_line=10, end_line=10 + body.count("\n")))


def _reason(good: bool, unit: CodeUnit) -> str:
    return ((f"The summary of {unit.name} states its purpose, the validation and the save; "
             if good else f"The summary of {unit.name} is generic and omits the threshold; ")
            + "it names the inputs and the error raised, which a developer searching for "
              "ledger updates would recognise. Minor: it repeats the parameter names.")


def make_explorer_inputs(n_units: int = 30, n_models: int = 5, seed: int = 3,
                         hostile: bool = True,
                         names: tuple[str, ...] = MODELS) -> ReportInputs:
    """Inputs of a run of ``n_units`` units x ``n_models`` models (the first of
    ``names``) with a judge, the three other families and one failed item. With
    ``hostile``, unit ``u0001`` is named ``HOSTILE`` and every model's text about it
    quotes it."""
    rng = np.random.default_rng(seed)
    models = list(names[:n_models])
    units = [_unit(i) for i in range(n_units)]
    pool = units + [_unit(i) for i in range(n_units, n_units + 40)]  # distractors too
    if hostile and n_units > 1:
        units[1] = units[1].model_copy(update={"name": HOSTILE, "path": "src/" + HOSTILE})
        pool[1] = units[1]
    strength = {m: 0.85 - 0.15 * i for i, m in enumerate(models)}
    summaries: dict[tuple[str, str], GeneratedSummary] = {}
    records: list[ScoreRecord] = []
    for k, unit in enumerate(units):
        evil = hostile and k == 1
        good = {m: bool(rng.random() < strength[m]) for m in models}
        for m in models:
            text = (f"Validates a ledger row against the threshold and saves it for "
                    f"{unit.name}; raises ValueError when the total is too low." if good[m]
                    else "Handles various operations on the data and returns the result.")
            summaries[(unit.id, m)] = summary_of(unit, m, HOSTILE if evil else text, 0.001)
            node = f"bench.py::test[{unit.id}-{m}"
            rubric = {c: float(np.clip((4 if good[m] else 2) + rng.integers(-1, 2), 1, 5))
                      for c in CRITERIA}
            records.append(ScoreRecord(
                unit_id=unit.id, model_id=m, evaluator="judge/pointwise", nodeid=node + "-p]",
                metrics={"weighted_average": sum(rubric.values()) / 5, **rubric},
                details={"judge": JUDGE, "reasoning": HOSTILE if evil else
                         _reason(good[m], unit), "summaryWords": 30}))
            distractors = [pool[(k * 7 + j * 13 + 1) % len(pool)].id for j in range(9)]
            distractors = [d for d in distractors if d != unit.id][:9]
            sims = [float(rng.uniform(0.3, 0.9)) for _ in range(len(distractors) + 1)]
            if good[m]:
                sims[0] = max(sims) + 0.01
            best = max(range(len(sims)), key=lambda i: sims[i])
            options = [unit.id, *distractors]
            records.append(ScoreRecord(
                unit_id=unit.id, model_id=m, evaluator="contrastive/embedding",
                nodeid=node + "-c]",
                metrics={"correct": float(best == 0), "predicted_rank": float(
                    1 + sum(s > sims[0] for s in sims[1:])), "confidence_gap": 0.05},
                details={"method": "embedding", "options": len(options),
                         "summarySimilarities": [round(s, 4) for s in sims],
                         "picked": options[best], "distractorIds": distractors,
                         "tiers": [1, 2, 3, 3, 3, 4, 4, 4, 4][:len(distractors)],
                         "difficulty": "medium",
                         "distractorSimilarities": [0.7] * len(distractors)}))
            if k % 10 == 3:  # contrastive/llm: the options shuffled per model
                shown = [options[i] for i in rng.permutation(len(options))]
                choice = unit.id if good[m] else distractors[2]
                records.append(ScoreRecord(
                    unit_id=unit.id, model_id=m, evaluator="contrastive/llm",
                    nodeid=node + "-l]",
                    metrics={"correct": float(good[m]),
                             "predicted_rank": 1.0 if good[m] else 2.0,
                             "confidence_gap": 0.0},
                    details={"method": "llm", "llmModel": JUDGE, "options": len(shown),
                             "optionIds": shown, "targetPosition": shown.index(unit.id) + 1,
                             "selected": shown.index(choice) + 1, "selectedUnitId": choice,
                             "confidence": "high", "reasoning": "it validates the total",
                             "distractorIds": distractors}))
            queries = []
            for q in range(3):
                rank = 1 if good[m] and q < 2 else int(rng.integers(2, 12))
                queries.append({
                    "id": f"{unit.id}-q{q}", "type": ("keyword", "natural", "task")[q],
                    "query": HOSTILE if evil else f"how to save a ledger row {q} checked "
                                                  f"against a threshold",
                    "rank": rank if rank <= 10 else None,
                    "hits": {"1": float(rank == 1), "5": float(rank <= 5)},
                    "reciprocalRank": 1 / rank if rank <= 10 else 0.0, "score": 0.5,
                    "topId": None if rank == 1 else distractors[q]})
            records.append(ScoreRecord(
                unit_id=unit.id, model_id=m, evaluator="retrieval/embedding",
                nodeid=node + "-r]",
                metrics={"hit@1": sum(q["hits"]["1"] for q in queries) / 3,
                         "hit@5": sum(q["hits"]["5"] for q in queries) / 3,
                         "reciprocal_rank": sum(q["reciprocalRank"] for q in queries) / 3},
                details={"kValues": [1, 5, 10], "queries": queries}))
            if k % 20 == 0:
                ok = good[m]
                records.append(ScoreRecord(
                    unit_id=unit.id, model_id=m, evaluator="downstream/function_selection",
                    nodeid=node + "-d]", metrics={"success": float(ok)},
                    details={"taskId": f"select-{unit.id}", "answer": "2",
                             "selected": unit.name if ok else distractors[0],
                             **({} if ok else {"reason": "chose a similar function"})}))
            if k % 20 == 10:  # a completion task built without tests: similarity only
                records.append(ScoreRecord(
                    unit_id=unit.id, model_id=m, evaluator="downstream/completion",
                    nodeid=node + "-x]", metrics={"similarity": 0.0},
                    details={"taskId": f"complete-{unit.id}", "exactMatch": False,
                             "generatedCode": f"def {unit.name}(db, row):\n    pass"}))
        for a, b in combinations(models, 2):
            node = f"bench.py::test[{unit.id}-{a}~{b}-pairwise-{JUDGE}]"
            if k == 2 and (a, b) == (models[0], models[1]):
                records.append(ScoreRecord.failed(
                    unit_id=unit.id, model_id=f"{a}~{b}", evaluator="judge/pairwise",
                    reason=f"judge {JUDGE} invalid_output: no valid verdict after 2 "
                           f"attempts; answer: {HOSTILE}"))
                continue
            for order, first, second in (("ab", a, b), ("ba", b, a)):
                # Position bias on some units: the first-shown summary wins both orders.
                winner = (first if k % 5 == 0 else a if good[a] and not good[b]
                          else b if good[b] and not good[a] else "tie")
                side = "tie" if winner == "tie" else "A" if winner == first else "B"
                for model, position in ((first, "A"), (second, "B")):
                    score = 0.5 if winner == "tie" else float(winner == model)
                    records.append(ScoreRecord(
                        unit_id=unit.id, model_id=model, evaluator="judge/pairwise",
                        nodeid=node, metrics={"win": score},
                        details={"judge": JUDGE, "pair": f"{a}~{b}", "order": order,
                                 "position": position,
                                 "opponent": second if model == first else first,
                                 "verdict": side, "winner": winner, "confidence": "medium",
                                 "reasoning": HOSTILE if (hostile and k == 1) else
                                 _reason(winner != "tie", unit),
                                 "criteriaBreakdown": {c: side for c in PAIR_CRITERIA},
                                 "length": 30, "opponentLength": 28}))
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    config = BenchmarkConfig(seed=seed)
    return ReportInputs(
        run_id="synthetic-explorer", name="Explorer <Bench> " + (HOSTILE if hostile else ""),
        config=config,
        codebase=CodebaseInfo(name="synthetic", languages=list(LANGUAGES),
                              total_code_units=len(pool), sampled_code_units=n_units),
        records=records, model_ids=sorted(models), units=pool, summaries=summaries,
        started_at=start, finished_at=start + timedelta(seconds=42),
        scoring=builtin_scoring(config))


def make_explorer_report(inputs: ReportInputs) -> BenchmarkReport:
    report = build_report(inputs)
    report.metadata.run = RunSelection(id="20260101-000000-abcdef", complete=True,
                                       matrix_items=len(inputs.records),
                                       selected_items=len(inputs.records))
    return report
