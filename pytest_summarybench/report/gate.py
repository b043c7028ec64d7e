"""The CI gate: configured thresholds and a baseline run that fail the pytest session.

Each failure is one message naming the model, the metric and the figures, printed in the
terminal summary and kept in the report's ``gateFailures``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..aggregate.pairs import PairData, compare_pair
from ..core.input_files import clip_text
from ..schemas import BenchmarkReport
from ..schemas.report import BaselineComparison
from ..stats.significance import ALPHA, holm
from .inputs import ReportError

if TYPE_CHECKING:
    from ..settings import GateSection, Settings
    from ..store import Store


class Baseline:
    """A baseline run's overall scores: per model, and per model and unit."""

    def __init__(self, source: str, run_id: str, overall: dict[str, float],
                 unit_scores: dict[str, dict[str, float]],
                 basis: dict[str, Any] | None = None) -> None:
        self.source = source
        self.run_id = run_id
        self.overall = overall
        self.unit_scores = unit_scores
        self.basis = basis

    @classmethod
    def from_report(cls, source: str, report: BenchmarkReport) -> Baseline:
        return cls(source, report.metadata.benchmark_id,
                   {r.model_id: r.overall_score for r in report.rankings if r.units},
                   report.statistics.unit_scores, basis=scoring_basis(report))


#: What makes two runs' overall scores of a model the same measure, in words.
_BASIS_WORDS = {"families": "the families in the overall score", "weights": "the weights",
                "scoring": "the within-family weights", "evaluations": "the evaluators' settings"}


def scoring_basis(report: BenchmarkReport) -> dict[str, Any]:
    """What a model's overall score is made of in ``report``: the families that enter it
    (those that ran, less any scored for only some models), the weights and the
    evaluators' settings. Two runs whose bases are equal score a model the same way; the
    sample, the seed and the code may differ (the paired test reads the shared units)."""
    meta, config = report.metadata, report.metadata.configuration
    partial = {key.removesuffix(" in overall") for key in meta.families_skipped
               if key.endswith(" in overall")}
    return {"families": sorted(set(meta.families_run) - partial),
            "weights": config.weights.model_dump(mode="json"),
            "scoring": config.scoring.model_dump(mode="json"),
            # A unset setting is None in the store's copy and absent in results.json.
            "evaluations": {family: {k: v for k, v in block.items() if v is not None}
                            for family, block in config.evaluations.items()}}


def load_baseline(source: str, store: Store, *, base_dir: Path | None = None) -> Baseline:
    """A baseline from a results.json path, else from a run in the store: a run id (or a
    unique prefix of one) as ``summarybench runs`` lists them, or a ``benchmarkId``.
    """
    path = Path(source)
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            report = BenchmarkReport.model_validate(data)
        except (OSError, ValueError, RecursionError) as exc:
            # RecursionError: JSON nested beyond what the parser takes.
            raise ReportError(f"gate.baseline {source!r} is not a summarybench results.json: "
                              f"{clip_text(str(exc).splitlines()[0])}") from None
        return Baseline.from_report(source, report)
    if source.endswith(".json"):
        raise ReportError(f"gate.baseline {source!r}: no such file ({path})")
    from .runs import report_of_run

    try:
        # a run of `summarybench runs` (a unique prefix of its id), else a configuration's
        report = report_of_run(store, source)
    except ReportError as exc:
        raise ReportError(f"gate.baseline {source!r} is neither a results.json file nor a "
                          f"usable run id: {exc}") from None
    return Baseline.from_report(source, report)


def compare_to_baseline(report: BenchmarkReport, baseline: Baseline) -> BaselineComparison:
    """Each model against itself in the baseline, on the units both runs scored; fills
    ``deltaFromBaseline`` of the rankings. Tests are Holm-corrected across models.

    A baseline that scores models another way (``scoring_basis``: other families in the
    overall score, other weights or evaluator settings) is compared with nothing: a model's
    difference from itself there would measure the change of configuration, not of the
    model (``note`` says so; the gate fails on it)."""
    out = BaselineComparison(source=baseline.source, run_id=baseline.run_id,
                             configuration=baseline.run_id)
    here = scoring_basis(report)
    differ = [words for key, words in _BASIS_WORDS.items()
              if baseline.basis is not None and baseline.basis.get(key) != here[key]]
    if differ:
        out.comparable = False
        families = ""
        if baseline.basis is not None and baseline.basis["families"] != here["families"]:
            families = (f" ({', '.join(baseline.basis['families']) or 'none'} there, "
                        f"{', '.join(here['families']) or 'none'} here)")
        out.note = (f"gate.baseline {baseline.source} (configuration {baseline.run_id[:8]}) "
                    f"scores models another way than this run "
                    f"({report.metadata.benchmark_id[:8]}): {', '.join(differ)} differ"
                    f"{families}, so no model was compared with it; point gate.baseline at "
                    "a run that scores the same way, or run once without it to make one")
        return out
    seed = report.metadata.configuration.seed
    for r in report.rankings:
        if r.model_id not in baseline.overall or not r.units:
            continue
        r.delta_from_baseline = r.overall_score - baseline.overall[r.model_id]
        out.deltas[r.model_id] = r.delta_from_baseline
        data = PairData.shared(report.statistics.unit_scores.get(r.model_id, {}),
                               baseline.unit_scores.get(r.model_id, {}))
        test = compare_pair(r.model_id, f"baseline:{r.model_id}", "overall", data, seed=seed)
        if test is not None:
            out.tests.append(test)
    for test, adjusted in zip(out.tests, holm([t.p_value for t in out.tests]), strict=True):
        test.p_adjusted = adjusted
        test.significant = adjusted < ALPHA
    return out


def _min_overall(gate: GateSection, report: BenchmarkReport) -> list[str]:
    if gate.min_overall is None:
        return []
    scored = {r.model_id: r for r in report.rankings}
    wanted = (gate.min_overall if isinstance(gate.min_overall, dict)
              else {m: gate.min_overall for m in scored})
    out = []
    for model_id, minimum in sorted(wanted.items()):
        r = scored.get(model_id)
        if r is None or not r.units:
            out.append(f"{model_id}: overall has no score in this run "
                       f"(gate.minOverall requires {minimum:.3f})")
        elif r.overall_score < minimum:
            out.append(f"{model_id}: overall {r.overall_score:.3f} < gate.minOverall "
                       f"{minimum:.3f}")
    return out


def _min_family(gate: GateSection, report: BenchmarkReport) -> list[str]:
    out = []
    for family, minimum in sorted(gate.min_family.items()):
        for r in report.rankings:
            value = r.scores.get(family)
            if value is not None and value < minimum:
                out.append(f"{r.model_id}: {family} {value:.3f} < gate.minFamily.{family} "
                           f"{minimum:.3f}")
    return out


def _regressions(gate: GateSection, comparison: BaselineComparison) -> list[str]:
    out = []
    tests = {t.model_a: t for t in comparison.tests}
    for model_id, delta in sorted(comparison.deltas.items()):
        if delta >= -gate.max_regression:
            continue
        test = tests.get(model_id)
        where = f"against baseline {comparison.source}"
        if test is None:
            out.append(f"{model_id}: overall dropped {-delta:.3f} {where} (more than "
                       f"gate.maxRegression {gate.max_regression:.3f}; fewer than 2 shared "
                       "units, so the drop could not be tested)")
        elif test.significant and -test.mean_difference > gate.max_regression:
            out.append(f"{model_id}: overall regressed {-test.mean_difference:.3f} {where} "
                       f"(p={test.p_adjusted:.3g} Holm-adjusted on {test.units} shared units; "
                       f"gate.maxRegression {gate.max_regression:.3f})")
    return out


def gate_configured(gate: GateSection) -> bool:
    """Whether the configuration asks for any gate (a threshold or a baseline)."""
    return gate.min_overall is not None or bool(gate.min_family) or bool(gate.baseline)


def _nothing_scored(gate: GateSection, report: BenchmarkReport) -> list[str]:
    """A gate never passes on a run in which no unit was scored (every item failed)."""
    if not gate_configured(gate) or any(r.units for r in report.rankings):
        return []
    return ["no unit was scored in this run (every item failed or was skipped); a gate "
            "passes only on a run that scored"]


def apply_gate(report: BenchmarkReport, settings: Settings, store: Store) -> list[str]:
    """Gate failure messages of the configured thresholds; attaches the baseline
    comparison to the report first when one is configured (before the session publishes:
    a baseline naming the output directory's results.json reads the earlier session's)."""
    gate = settings.gate
    messages = (_nothing_scored(gate, report) + _min_overall(gate, report)
                + _min_family(gate, report))
    if gate.baseline:
        try:
            baseline = load_baseline(gate.baseline, store, base_dir=Path(settings.base_dir))
        except ReportError as exc:
            return [*messages, str(exc)]
        report.baseline = compare_to_baseline(report, baseline)
        if not report.baseline.comparable:
            messages.append(report.baseline.note)
        messages += _regressions(gate, report.baseline)
    return messages
