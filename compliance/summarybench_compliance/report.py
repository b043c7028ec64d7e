"""From the session's compliance records to the terminal tables and ``eval_results.json``.

Records are grouped by classifier (the record's ``model_id``): the rule scanner fills the
seed's top-level keys, an LLM its own block next to them, and when both ran on the same
examples their disagreements get a table of their own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_summarybench.harness import table_lines
from pytest_summarybench.schemas import ScoreRecord

from .dataset import NO_VIOLATION
from .metrics import ARTICLE_LABELS, summarize
from .records import BENCHMARK, SCANNER_ID, UNPARSED, outcome_of

RESULTS_FILE = "eval_results.json"

WriteLine = Callable[[str], None]


def by_classifier(records: Sequence[ScoreRecord]) -> dict[str, list[ScoreRecord]]:
    """Compliance records per classifier, the scanner first, each sorted by example."""
    groups: dict[str, list[ScoreRecord]] = {}
    for record in records:
        if record.benchmark == BENCHMARK:
            groups.setdefault(record.model_id, []).append(record)
    ordered = sorted(groups, key=lambda m: (m != SCANNER_ID, m))
    return {m: sorted(groups[m], key=lambda r: r.unit_id) for m in ordered}


def _block(records: list[ScoreRecord], seed: int) -> dict[str, Any]:
    scored = [r for r in records if r.error is None]
    block = summarize([outcome_of(r) for r in scored], seed=seed)
    block["num_scored"] = len(scored)
    block["failed"] = [{"example": r.unit_id, "reason": r.error}
                       for r in records if r.error is not None]
    block["unparsed"] = sum(1 for r in scored
                            if r.details.get("predicted_article") == UNPARSED)
    return block


def disagreements(first: Sequence[ScoreRecord], second: Sequence[ScoreRecord]
                  ) -> list[dict[str, Any]]:
    """Examples both classifiers scored where their predicted classes differ."""
    theirs = {r.unit_id: outcome_of(r) for r in second if r.error is None}
    rows = []
    for record in first:
        if record.error is not None or record.unit_id not in theirs:
            continue
        mine, other = outcome_of(record), theirs[record.unit_id]
        if mine.predicted_label != other.predicted_label:
            rows.append({"example": record.unit_id, "truth": mine.true_label,
                         "first": mine.predicted_label, "second": other.predicted_label,
                         "first_correct": mine.correct, "second_correct": other.correct})
    return rows


def build_results(records: Sequence[ScoreRecord], *, seed: int, llm_state: dict[str, Any]
                  ) -> dict[str, Any]:
    """The ``eval_results.json`` document: the seed's keys for the scanner, then ours."""
    groups = by_classifier(records)
    scanner = groups.pop(SCANNER_ID, [])
    block = _block(scanner, seed) if scanner else None
    examples = {r.unit_id for rs in (scanner, *groups.values()) for r in rs}
    datasets = sorted({str(r.details.get("dataset")) for rs in (scanner, *groups.values())
                       for r in rs if r.details.get("dataset")})
    results: dict[str, Any] = {"timestamp": time.time(), "num_examples": len(examples)}
    if block is not None:
        results.update({
            "rule_based_metrics": block["metrics"],
            "per_article_metrics": block["per_article_metrics"],
            "framework_accuracy": block["framework_accuracy"],
            "stack_accuracy": block["stack_accuracy"],
            "idiom_accuracy": block["idiom_accuracy"],
            "hard_negative_accuracy": block["hard_negative_accuracy"],
            "confusion_matrix": block["confusion_matrix"],
            "avg_scan_time_ms": round(block["avg_scan_time_ms"], 3),
            "confidence_intervals": block["confidence_intervals"],
            "rule_based_num_scored": block["num_scored"],
            "rule_based_failed": block["failed"],
        })
    results["ollama_available"] = bool(llm_state.get("available"))
    results["llm_unavailable_reason"] = llm_state.get("reason")
    results["llm_models"] = {model: _block(rs, seed) for model, rs in groups.items()}
    results["disagreements"] = {model: disagreements(scanner, rs)
                                for model, rs in groups.items()}
    results["dataset"] = datasets
    results["seed"] = seed
    return results


def write_results(results: dict[str, Any], directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / RESULTS_FILE
    path.write_text(json.dumps(results, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path


def _table(write: WriteLine, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    for line in table_lines(header, rows, rule=True):
        write(line)


def _pct(value: float) -> str:
    return f"{value:.1%}"


def _ci(block: dict[str, Any], name: str, fmt: Callable[[float], str] = _pct) -> str:
    ci = block["confidence_intervals"].get(name)
    return f"[{fmt(ci[0])}, {fmt(ci[1])}]" if ci else "-"


def _f1(value: float) -> str:
    return f"{value:.3f}"


def print_block(write: WriteLine, title: str, block: dict[str, Any]) -> None:
    """The headline, per-article, per-framework and confusion tables of one classifier."""
    m = block["metrics"]
    write(f"{title}: {block['num_scored']} examples scored, "
          f"{len(block['failed'])} failed, {block['unparsed']} unparsed answers, "
          f"avg {block['avg_scan_time_ms']:.2f} ms per example")
    _table(write, ("metric", "value", "95% CI (bootstrap)", "n"), [
        ("overall accuracy", _pct(m["overall_accuracy"]), _ci(block, "overall_accuracy"),
         m["n"]),
        ("compliance accuracy", _pct(m["compliance_accuracy"]),
         _ci(block, "compliance_accuracy"), m["n"]),
        ("severity accuracy", _pct(m["severity_accuracy"]), _ci(block, "severity_accuracy"),
         m["severity_n"]),
        ("macro F1 (6 articles)", _f1(m["macro_f1"]), _ci(block, "macro_f1", _f1), m["n"]),
    ])
    write("")
    _table(write, ("article", "accuracy", "precision", "recall", "F1", "count"), [
        (f"Art. {a}", _pct(s["accuracy"]), f"{s['precision']:.3f}", f"{s['recall']:.3f}",
         f"{s['f1']:.3f}", s["count"]) for a, s in block["per_article_metrics"].items()])
    write("")
    for title, key in (("stack (framework)", "stack_accuracy"), ("idiom", "idiom_accuracy"),
                       ("hard negatives", "hard_negative_accuracy")):
        groups = block[key]
        if groups:
            _table(write, (title, "correct", "total", "accuracy", "95% CI (bootstrap)"), [
                (name, g["correct"], g["total"], _pct(g["accuracy"]),
                 f"[{_pct(g['ci'][0])}, {_pct(g['ci'][1])}]" if g.get("ci") else "-")
                for name, g in groups.items()])
            write("")
    matrix = block["confusion_matrix"]
    columns = [*ARTICLE_LABELS, NO_VIOLATION]
    columns += sorted({p for row in matrix.values() for p in row} - set(columns))
    _table(write, ("true \\ predicted", *columns), [
        (t, *(matrix.get(t, {}).get(p, 0) or "." for p in columns))
        for t in [*ARTICLE_LABELS, NO_VIOLATION] if t in matrix])
    for failure in block["failed"][:5]:
        write(f"  failed {failure['example']}: {failure['reason']}")


#: Where a combined run's reader finds the full tables.
FULL_TABLES = ("the full tables: pytest -p summarybench_compliance benchmarks/compliance "
               "(or this run with -v)")


def print_compact(write: WriteLine, sep: Callable[[str, str], None],
                  results: dict[str, Any], path: Path, *, llm_skipped: int) -> None:
    """A few lines for a session that also ran the code-summary benchmark, whose ranking
    leads: each classifier's accuracy and macro-F1, the LLM tests skipped and why, and
    where the full tables are."""
    sep("=", "compliance benchmark")
    blocks: list[tuple[str, dict[str, Any]]] = []
    if "rule_based_metrics" in results:
        blocks.append((SCANNER_ID, {"metrics": results["rule_based_metrics"],
                                    "confidence_intervals": results["confidence_intervals"]}))
    blocks += list(results["llm_models"].items())
    for name, block in blocks:
        m = block["metrics"]
        write(f"{name}: accuracy {_pct(m['overall_accuracy'])} "
              f"{_ci(block, 'overall_accuracy')}, macro-F1 {_f1(m['macro_f1'])} "
              f"{_ci(block, 'macro_f1', _f1)} on {m['n']} examples")
    if not results["llm_models"]:
        skipped = f", its {llm_skipped} tests skipped" if llm_skipped else ""
        write(f"LLM classifier: not run{skipped} ({results['llm_unavailable_reason']})")
    write(f"{FULL_TABLES}; results: {path}")


def print_results(write: WriteLine, sep: Callable[[str, str], None],
                  results: dict[str, Any], path: Path) -> None:
    """Every table of the run, then where the JSON went."""
    sep("=", "compliance benchmark")
    if "rule_based_metrics" in results:
        block = {"metrics": results["rule_based_metrics"],
                 "per_article_metrics": results["per_article_metrics"],
                 "framework_accuracy": results["framework_accuracy"],
                 "stack_accuracy": results["stack_accuracy"],
                 "idiom_accuracy": results["idiom_accuracy"],
                 "hard_negative_accuracy": results["hard_negative_accuracy"],
                 "confusion_matrix": results["confusion_matrix"],
                 "confidence_intervals": results["confidence_intervals"],
                 "avg_scan_time_ms": results["avg_scan_time_ms"],
                 "num_scored": results["rule_based_num_scored"],
                 "failed": results["rule_based_failed"], "unparsed": 0}
        print_block(write, SCANNER_ID, block)
    for model, block in results["llm_models"].items():
        write("")
        print_block(write, model, block)
    if not results["llm_models"]:
        write("")
        write(f"LLM classifier: not run ({results['llm_unavailable_reason']})")
    for model, rows in results["disagreements"].items():
        write("")
        write(f"{SCANNER_ID} vs {model}: {len(rows)} disagreements")
        if rows:
            _table(write, ("example", "truth", SCANNER_ID, model, "right"), [
                (r["example"], r["truth"], r["first"], r["second"],
                 "both wrong" if not (r["first_correct"] or r["second_correct"])
                 else SCANNER_ID if r["first_correct"] else model) for r in rows])
    write("")
    write(f"compliance results written to {path}")
