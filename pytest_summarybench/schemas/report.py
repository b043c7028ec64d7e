"""The report schema of docs/reports.md#the-results-file (``results.json``)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from ._base import SBModel
from .config import BenchmarkConfig
from .run import CodebaseInfo

#: The reason a run whose health check failed is partial (``RunSelection.reasons``) starts
#: with this: the terminal says it once, as the run's first line, not twice.
UNHEALTHY_REASON = "unhealthy"


class RunSelection(SBModel):
    """The session that wrote a report (``metadata.run``) and whether it scored its whole
    matrix. A session is *complete* when every item of the configured matrix (sampled
    units x models under test x evaluators that can run) was selected and the session ran
    to its end: no ``-k``, ``-m``, ``--deselect``, ``--lf`` or node id left an item out,
    and no ``-x``, ``--maxfail`` or interruption stopped it. Items that ran and failed
    still count (they are the report's errors), as long as one of them scored: a session
    whose every item ended in an error (a dead endpoint) is partial too. Any other session
    is *partial*: its scores cover a different set of items and are not comparable with a
    complete run's."""

    id: str
    """The session's run id: its reports are in ``runs/<id>/`` of the output directory."""
    complete: bool
    matrix_items: int = 0
    """Items of the configured matrix (what a complete session scores)."""
    selected_items: int = 0
    """Items this session selected."""
    deselected_items: int = 0
    """Matrix items this session did not select."""
    deselected_by_family: dict[str, int] = Field(default_factory=dict)
    """Matrix items left out, per evaluator family."""
    deselected_by_model: dict[str, int] = Field(default_factory=dict)
    """Matrix items left out, per model under test (a pair's item counts for both)."""
    keyword: str | None = None
    """The ``-k`` expression, when one was given."""
    markers: str | None = None
    """The ``-m`` expression, when one was given."""
    reasons: list[str] = Field(default_factory=list)
    """Why the session is partial, one phrase each (``-k 'alpha'``, ``stopped early:
    ...``)."""

    @property
    def only_unhealthy(self) -> bool:
        """Partial only because the run is unhealthy (``metadata.health`` says why, first):
        a report then has no separate partial-run line to show."""
        return (not self.complete and not self.deselected_items and bool(self.reasons)
                and all(r.startswith(UNHEALTHY_REASON) for r in self.reasons))

    def describe(self) -> str:
        """One line: what the partial session left out and that its scores do not compare
        ("" for a complete session). An unhealthy run's problems are not repeated here:
        they are said first, on their own (``metadata.health``)."""
        if self.complete:
            return ""
        reasons = [r for r in self.reasons if not r.startswith(UNHEALTHY_REASON)]
        text = "; ".join(reasons) or ("unhealthy" if self.reasons else "a selection")
        if self.deselected_items:
            by_family = ", ".join(f"{f} {n}" for f, n in self.deselected_by_family.items())
            text += (f": {self.deselected_items} of {self.matrix_items} items left out"
                     + (f" ({by_family})" if by_family else ""))
        return text + "; scores are not comparable with a complete run's"


class HealthCount(SBModel):
    """How much of something a run has: ``done`` of ``of``."""

    done: int = 0
    of: int = 0

    @property
    def share(self) -> float | None:
        return self.done / self.of if self.of else None


class RunHealth(SBModel):
    """Whether a run's evidence is whole enough to name a best model (``engine/health.py``;
    docs/reports.md, "Run health"). A run is healthy when every model under test has a
    summary of at least ``minSummaryShare`` of the sampled units it was scored on, every
    evaluator family that ran scored more than ``minFamilyShare`` of its items (models
    without summaries left out, as their problem is said already), and every judge that was
    asked gave at least one verdict. An unhealthy run is kept and reported, names no best
    model, never replaces the output directory's reports and fails a configured gate."""

    healthy: bool = True
    problems: list[str] = Field(default_factory=list)
    """What is wrong, most basic first (a model without summaries before the families its
    items failed in), one sentence each with the figures and the first cause."""
    min_summary_share: float = 0.9
    """A model under test needs a summary of at least this share of its sampled units."""
    min_family_share: float = 0.5
    """A family needs more than this share of its items scored ("most of its items")."""
    summaries: dict[str, HealthCount] = Field(default_factory=dict)
    """Per model under test: sampled units with a summary, of the sampled units its items
    read."""
    families: dict[str, HealthCount] = Field(default_factory=dict)
    """Per family: items scored, of its items that ran (models without summaries left
    out)."""
    judges: dict[str, HealthCount] = Field(default_factory=dict)
    """Per judge: items it gave a verdict on, of the items it was asked to judge."""


class ReportMetadata(SBModel):
    benchmark_id: str
    name: str
    run_date: str
    duration: str
    codebase: CodebaseInfo
    configuration: BenchmarkConfig
    families_run: list[str] = Field(default_factory=list)
    """Evaluator families that produced scores in this run."""
    families_skipped: dict[str, str] = Field(default_factory=dict)
    """Families that did not run, with the reason; also, by name, each evaluator asked for
    that could not run in a family that did (``downstream/bug_localisation``)."""
    language_shares: dict[str, float] = Field(default_factory=dict)
    """Share of the sampled units in each language (0-1), largest first."""
    scored_items: int = 0
    """Matrix items (tests: one unit, evaluator and model or pair) that produced a score."""
    error_items: int = 0
    """Matrix items that ended in an error instead of a score."""
    run: RunSelection | None = None
    """The session that wrote the report and whether it was complete (absent in a report
    rebuilt from the store's records of a configuration rather than of one session)."""
    health: RunHealth | None = None
    """Whether the run's evidence is whole enough to name a best model (absent in a report
    rebuilt from the store's records rather than written by a session)."""


class FamilyScores(SBModel):
    """Per-family scores on a 0-1 scale, by family name (a family that did not run has
    no key)."""

    model_config = ConfigDict(**{**SBModel.model_config, "extra": "allow"})

    def get(self, family: str) -> float | None:
        """The score of ``family`` (None when it did not run)."""
        value = (self.model_extra or {}).get(family)
        return value if isinstance(value, float) else None


class ModelRanking(SBModel):
    rank: int
    model_id: str
    model_name: str
    overall_score: float
    scores: FamilyScores
    delta_from_baseline: float | None = None
    """Overall score minus the baseline run's, when a baseline is configured."""
    confidence_interval: tuple[float, float] | None = None
    """Seeded percentile bootstrap interval of ``overall_score`` (units resampled)."""
    significance_group: str = ""
    """Letters shared by models the run cannot tell apart (Holm-corrected paired tests)."""
    units: int = 0
    """Units with a per-unit overall score for this model."""
    scored_items: int = 0
    """Matrix items (tests) that produced a score for this model; a pairwise item counts
    for both of its models, once whatever the number of orders it was asked in."""
    errors: int = 0
    """Matrix items that ended in an error for this model."""

    @property
    def measured_overall(self) -> float | None:
        """``overall_score``, or None when no unit was scored: the spec's ``overallScore``
        is a number, so the JSON keeps 0.0 (with ``units`` 0), and every display prints
        "-" rather than a 0.000 nothing computed."""
        return self.overall_score if self.units else None


class PairwiseRecord(SBModel):
    a_wins: int = 0
    b_wins: int = 0
    ties: int = 0


class ModelComparison(SBModel):
    """Head to head: ``model_a`` is the higher-ranked model of the pair."""

    model_a: str
    model_b: str
    winner: str
    """The model with the higher overall score; ``tie`` when they are equal."""
    score_difference: float
    """Overall score of A minus B (the ranking's difference)."""
    significant: bool
    """Holm-adjusted paired t-test p-value below 0.05."""
    p_value: float | None = None
    """Holm-adjusted p-value of the paired test on per-unit overall scores."""
    mean_unit_difference: float | None = None
    """Mean of A's minus B's per-unit overall score over the units both were scored on
    (what the test and the interval are about)."""
    confidence_interval: tuple[float, float] | None = None
    """Bootstrap interval of ``mean_unit_difference``."""
    units: int = 0
    pairwise_record: PairwiseRecord = Field(default_factory=PairwiseRecord)
    """The pairwise judges' verdicts between A and B when the judge ran pairwise;
    otherwise the units on which A's per-unit overall score beat, lost to or tied B's."""
    pairwise_source: str = "units"
    """``judge/pairwise`` (verdicts) or ``units`` (per-unit overall scores)."""
    strengths_a: list[str] = Field(default_factory=list)
    strengths_b: list[str] = Field(default_factory=list)


class SignificanceTest(SBModel):
    """One paired comparison of two models on one metric (docs/methods.md#significance)."""

    model_a: str
    model_b: str
    metric: str
    """``overall`` or an evaluator family."""
    mean_difference: float
    """Mean of (A - B) over the units both were scored on."""
    p_value: float
    """Two-sided paired t-test p-value, before correction."""
    significant: bool
    """``p_adjusted`` below 0.05."""
    confidence_interval: tuple[float, float]
    """Seeded percentile bootstrap interval (95%) of the mean difference."""
    p_adjusted: float = 1.0
    """Holm-adjusted across all model pairs of this metric."""
    t_statistic: float = 0.0
    units: int = 0
    """Number of paired units."""
    minimum_detectable_difference: float | None = None
    """Smallest true difference this test detects with 80% power at this sample size."""
    power: float | None = None
    """Power to detect a true difference as large as the observed one."""


class Statistics(SBModel):
    significance_tests: list[SignificanceTest] = Field(default_factory=list)
    correlations: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Spearman rho between families over every scored unit-model pair."""
    correlations_by_model: dict[str, dict[str, dict[str, float]]] = Field(default_factory=dict)
    """Per model, Spearman rho between families across its units."""
    model_correlations: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Spearman rho between families across models: do they rank the models alike?"""
    unit_correlations: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Per unit, Spearman rho between families across the models scored on it; the mean
    over the units where it is defined: do the families pick the same best summary?"""
    significance_groups: dict[str, str] = Field(default_factory=dict)
    """Model -> group letters (see ``ModelRanking.significance_group``)."""
    unit_scores: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Model -> unit id -> per-unit overall score: the data of every test above, kept so
    that a later run can be compared against this one."""


class FailureExample(SBModel):
    code_unit_id: str
    summary: str
    issue: str
    """Which evaluators scored it low, and how."""
    category: str
    """The failure pattern it shows (``other`` when none was detected)."""
    unit_name: str = ""
    language: str = ""
    score: float | None = None
    """Its per-unit overall score."""


class FailureAnalysis(SBModel):
    model_id: str
    weakest_metric: str | None = None
    weakest_language: str | None = None
    weakest_code_type: str | None = None
    examples: list[FailureExample] = Field(default_factory=list)
    low_scores: int = 0
    """Units where this model's per-unit overall score was below the threshold."""
    patterns: dict[str, int] = Field(default_factory=dict)
    """Failure pattern -> how many of its low-scored units show it."""


class FailurePattern(SBModel):
    category: str
    description: str
    share_of_low_scores: float
    """Fraction of the low-scored unit-model pairs that show this pattern."""
    models: dict[str, int] = Field(default_factory=dict)
    """Low-scored pairs showing it, per model."""
    where: str = ""
    """Where it is most common (a code type and language), from the data."""
    example: str = ""
    """A short quotation of a summary showing it."""


class Failures(SBModel):
    by_model: dict[str, FailureAnalysis] = Field(default_factory=dict)
    common_patterns: list[FailurePattern] = Field(default_factory=list)
    low_score_threshold: float = 0.5
    """A unit-model pair below this per-unit overall score counts as a low score."""
    low_scores: int = 0
    """How many unit-model pairs scored below the threshold."""


class CostBreakdown(SBModel):
    total: float | None = None
    """USD; ``None`` when any call's price is unknown."""
    per_1k_summaries: float | None = None
    by_phase: dict[str, float | None] = Field(default_factory=dict)
    """``generation`` and each evaluator family that reported call costs."""
    unknown_price_calls: int = 0
    summaries: int = 0
    cost_per_quality_point: float | None = None
    """USD per 1K summaries divided by the overall score in points (0-100)."""


class Costs(SBModel):
    by_model: dict[str, CostBreakdown] = Field(default_factory=dict)
    total: float | None = None


class GroupScores(SBModel):
    """Mean scores of one group (a language, a code type) per model."""

    units: int = 0
    by_model: dict[str, FamilyScores] = Field(default_factory=dict)
    overall_by_model: dict[str, float] = Field(default_factory=dict)
    units_by_model: dict[str, int] = Field(default_factory=dict)
    """Per model, the units of this group with at least one scored item (the n behind
    its ``overall_by_model`` mean)."""


class Detailed(SBModel):
    by_model: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Per model, every metric's mean over the items it was scored on."""
    by_language: dict[str, GroupScores] = Field(default_factory=dict)
    by_code_type: dict[str, GroupScores] = Field(default_factory=dict)


class ErrorCount(SBModel):
    model_id: str
    evaluator: str
    count: int
    examples: list[str] = Field(default_factory=list)


class Recommendation(SBModel):
    kind: str
    """``best_overall``, ``no_single_best`` (the top group ties: ``text`` names the tied
    models), ``best_value``, ``language`` or ``budget``."""
    model_id: str
    title: str = ""
    """The heading shown before the text (``Best value``, ``For Go-heavy codebases``)."""
    text: str
    """The sentence shown in the reports, with the figures that support it."""


class BaselineComparison(SBModel):
    source: str
    """The baseline's results.json path or run id."""
    run_id: str = ""
    configuration: str = ""
    """The baseline's configuration id (its ``benchmarkId``)."""
    comparable: bool = True
    """False when the baseline scores models another way (other families in the overall
    score, weights or evaluator settings): there are no deltas and no tests, and ``note``
    says why (the gate fails)."""
    note: str = ""
    deltas: dict[str, float] = Field(default_factory=dict)
    """Model -> overall score minus the baseline's."""
    tests: list[SignificanceTest] = Field(default_factory=list)
    """Per model, current (A) against baseline (B) on shared units."""


class ValidityStep(SBModel):
    """One adjacent step of the ladder: is ``better`` scored above ``worse``?"""

    better: str
    worse: str
    mean_difference: float
    """Mean of better's minus worse's per-unit family score."""
    p_value: float
    """Paired t-test p-value, before correction."""
    p_adjusted: float
    """Holm-adjusted across the family's three steps."""
    significant: bool
    """``p_adjusted`` below 0.05 and the difference in the known direction."""
    units: int = 0
    minimum_detectable_difference: float | None = None
    """Smallest true step this test detects with 80% power at this sample size."""


class ExternalValidity(SBModel):
    """How one evaluator (or family) ordered summarizers against real developer queries,
    as ``pytest_summarybench/validity/external.json`` records it (docs/validity.md,
    "External validity"): quoted, never measured by the run."""

    name: str
    """The family or evaluator the figures are of (``contrastive/embedding``)."""
    dataset: str
    """The human-labelled query set (``CoSQA``)."""
    tau_docstrings: float
    """Kendall's tau between this evaluator's ordering of the built-in summarizers and
    real-query retrieval's, on units with their docstrings."""
    tau_stripped: float
    """The same with the docstrings stripped from the code."""
    validated: bool
    """Whether both taus met the bar docs/validity.md sets."""
    doc: str = "docs/validity.md#external-validity"
    """Where the figures and the commands that measured them are."""

    def text(self) -> str:
        """``externally validated on CoSQA: tau +0.90 with docstrings, +0.85 stripped``."""
        figures = (f"tau {self.tau_docstrings:+.2f} with docstrings, "
                   f"{self.tau_stripped:+.2f} stripped")
        if self.validated:
            return f"externally validated on {self.dataset}: {figures}"
        return f"failed external validation on {self.dataset}: {figures}"


class ValidityFamily(SBModel):
    """How well one evaluator family orders the known-answer ladder."""

    family: str
    units: int
    """Ladder units every level was scored on by this family."""
    means: dict[str, float] = Field(default_factory=dict)
    """Level model id -> mean per-unit family score, in the known order."""
    measured_order: list[str] = Field(default_factory=list)
    """The levels by mean score, highest first."""
    kendall_tau: float | None = None
    """Kendall's tau-b between the known and the measured order (1 = perfect; None when
    every level scored the same)."""
    steps: list[ValidityStep] = Field(default_factory=list)
    aa_units: int = 0
    aa_mean_difference: float | None = None
    """Level 1 minus its twin (the same summaries under two names)."""
    aa_p_value: float | None = None
    aa_significant_rate: float | None = None
    """Share of bootstrap reseeds (units resampled) in which the A/A pair came out
    significantly different; should be near 0 and at most about 0.05."""
    aa_reseeds: int = 0
    status: str = "valid"
    """``valid``; ``low resolution`` (a step is not significant at this sample size, and
    none is significantly reversed); ``partial order`` (0 < tau < 1 with an adjacent step
    significantly reversed); ``cannot order`` (tau <= 0, every level scored the same, or
    the A/A pair differs). The last two are flagged."""
    flagged: bool = False
    """True when this family's scores should be distrusted."""
    note: str = ""
    external: list[ExternalValidity] = Field(default_factory=list)
    """Its evaluators' (or the family's) figures against real developer queries; empty:
    not externally validated."""

    def external_text(self) -> str:
        """What the report says of the family's external validity."""
        if not self.external:
            return "not externally validated"
        return "; ".join(f"{e.name}: {e.text()}" if e.name != self.family else e.text()
                         for e in self.external)


class ValidityJudge(SBModel):
    """One judge on the ladder: its own order and its position consistency."""

    judge: str
    pointwise_tau: float | None = None
    """Kendall's tau of this judge's mean rubric score per level against the known order."""
    pointwise_means: dict[str, float] = Field(default_factory=dict)
    flip_rate: float | None = None
    """Share of ladder pairs whose verdict changed when the summaries swapped places."""
    swapped_pairs: int = 0
    first_position_win_rate: float | None = None
    tie_rate: float | None = None
    flagged: bool = False
    note: str = ""


class ValiditySection(SBModel):
    """Instrument validity: can this run's evaluators tell summaries of known quality apart
    (see ``pytest_summarybench/validity``)?"""

    levels: list[str] = Field(default_factory=list)
    """Ladder model ids in the known order, best first."""
    twin: str = ""
    """The A/A twin of the first level."""
    ladder_units: int = 0
    """Units with a human docstring that the ladder was built from."""
    families: list[ValidityFamily] = Field(default_factory=list)
    judges: list[ValidityJudge] = Field(default_factory=list)
    judge_agreement: dict[str, Any] = Field(default_factory=dict)
    """Cohen's and Fleiss' kappa between judges on the ladder (rubric scores, quadratic
    weights; pairwise winners)."""
    flagged: list[str] = Field(default_factory=list)
    """Families (and ``judge <id>``) whose scores should be distrusted, with the reason."""
    verdict: str = ""
    """One sentence that heads the validity section: which families order the ladder and
    which to distrust."""


class RankingBasis(SBModel):
    """What the overall score, hence the ranking, rests on: the families every ranked model
    was scored on and the evaluators whose components entered them, with what the external
    validation measured of those evaluators (``validity/external.json``)."""

    families: list[str] = Field(default_factory=list)
    evaluators: list[str] = Field(default_factory=list)
    external: list[ExternalValidity] = Field(default_factory=list)
    """The figures of each evaluator above that was externally validated or failed it."""

    @property
    def failed_external(self) -> bool:
        """Every evaluator of the ranking failed external validation (its own figures, or
        its family's when only the family was measured)."""
        failed = {e.name for e in self.external if not e.validated}
        return bool(self.evaluators) and all(
            e in failed or e.split("/", 1)[0] in failed for e in self.evaluators)


class BenchmarkReport(SBModel):
    metadata: ReportMetadata
    rankings: list[ModelRanking]
    detailed: Detailed = Field(default_factory=Detailed)
    comparisons: list[ModelComparison] = Field(default_factory=list)
    statistics: Statistics = Field(default_factory=Statistics)
    failures: Failures = Field(default_factory=Failures)
    costs: Costs = Field(default_factory=Costs)
    errors: list[ErrorCount] = Field(default_factory=list)
    """Matrix items that could not be scored, counted per model and evaluator."""
    evaluator_details: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per evaluator, the figures its ``summarize`` contributed (see ``SummarizingEvaluator``)."""
    recommendations: list[Recommendation] = Field(default_factory=list)
    baseline: BaselineComparison | None = None
    gate_failures: list[str] = Field(default_factory=list)
    """Messages of the CI gate (configured thresholds and ranking hooks) that failed."""
    validity: ValiditySection | None = None
    """Instrument validity on the known-answer ladder, when the run had it (by default
    when no evaluator can call a model; ``--sb-validate``)."""
    basis: RankingBasis | None = None
    """What the ranking rests on (families, evaluators and their external validity)."""

    @property
    def families(self) -> list[str]:
        """The score columns: the families of this report (those that ran and those
        skipped), in the order its configuration weighs them, then any other that ran.

        Read from the report alone, so that a report of an earlier run shows that run's
        families, whichever families the reading process declares."""
        meta = self.metadata
        here = {*meta.families_run, *meta.families_skipped}
        weighed = [f for f in meta.configuration.weights.model_dump(by_alias=True)
                   if f in here]
        return [*weighed, *(f for f in meta.families_run if f not in weighed)]
