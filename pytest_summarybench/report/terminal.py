"""The ranking table printed in pytest's terminal summary."""

from __future__ import annotations

from ..generate.ladder import level_name
from ..schemas import BenchmarkReport
from ..schemas.report import ValiditySection
from .findings import evidence_caveat, key_findings
from .wording import (
    COLUMNS_LEGEND,
    difference_text,
    items_line,
    record_text,
    table_lines,
    units_line,
)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def headline_lines(report: BenchmarkReport) -> list[str]:
    """What the run's summary says before anything else: that the run is unhealthy and
    why, and what the ranking rests on when a reader must know it (the key findings say
    both again)."""
    out = []
    health = report.metadata.health
    if health is not None and not health.healthy:
        run = report.metadata.run
        out.append(f"UNHEALTHY RUN {run.id if run else report.metadata.benchmark_id}: "
                   f"{health.problems[0]}")
        out += [f"  also: {problem}" for problem in health.problems[1:]]
        out.append("  no best model is named; the output directory's reports are left as "
                   "they were; a configured gate fails")
    caveat = evidence_caveat(report)
    if caveat is not None:
        out.append(f"CAUTION: {caveat}")
    return out


def terminal_lines(report: BenchmarkReport) -> list[str]:
    """What the units and items count, a fixed-width ranking table with significance
    groups, the key findings, which families ran, the top pair's record, and what failed."""
    families = report.families
    header = ["rank", "model", "overall", "95% CI", "group", *families, "units", "items",
              "errors"]
    rows = [[str(r.rank), r.model_id, _fmt(r.measured_overall),
             (f"{r.confidence_interval[0]:.2f}-{r.confidence_interval[1]:.2f}"
              if r.confidence_interval else "-"),
             r.significance_group or "-",
             *(_fmt(r.scores.get(f)) for f in families),
             str(r.units), str(r.scored_items), str(r.errors)] for r in report.rankings]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i in (1, 4) else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    meta = report.metadata
    health = meta.health
    configuration = f"configuration {meta.benchmark_id} ({', '.join(meta.codebase.languages)})"
    if not rows and report.validity is not None:
        # The validity ladder alone (`summarybench validate`, -m validate): no model under
        # test, so no ranking table of empty rows; the ladder's table follows.
        out = [f"{configuration}: {meta.codebase.total_code_units:,} units extracted, "
               f"{meta.codebase.sampled_code_units:,} sampled; the validity ladder alone, no "
               "model under test evaluated (the ladder's scores are in its table below)"]
    else:
        out = [f"{configuration}: {units_line(report)}",
               line(header), line(["-" * w for w in widths])]
        out += [line(r) for r in rows]
        if report.statistics.significance_groups:
            out.append("group: models sharing a letter are not significantly different "
                       "(paired t-tests on per-unit scores, Holm-corrected, alpha 0.05)")
        out.append(COLUMNS_LEGEND.replace("Units:", "units:").replace("Items:", "items:")
                   .replace("Errors:", "errors:"))
        out.append(items_line(report))
    findings = key_findings(report)
    flagged = sum(1 for f in findings if f.validity)
    shown = [f for f in findings if not f.validity]
    if shown or flagged:
        out.append("key findings:")
        out += [f"  {'! ' if f.warn else '- '}{f.text}" for f in shown]
        if flagged:
            # The ladder's DISTRUST lines follow the validity table printed below.
            out.append(f"  ! instrument validity: {flagged} DISTRUST flag"
                       f"{'s' if flagged != 1 else ''}, listed after the validity table below")
    out.append("families run: " + (", ".join(meta.families_run) or "none"))
    for family, reason in meta.families_skipped.items():
        out.append(f"skipped {family}: {reason}")
    if report.comparisons:
        c = report.comparisons[0]
        verdict = "significant" if c.significant else "not significant"
        if health is not None and not health.healthy:
            # An unhealthy run's figures are kept, not read as a verdict.
            verdict = "not a verdict: the run is unhealthy"
        p = f"p={c.p_value:.3g}, " if c.p_value is not None else ""
        out.append(f"top pair: {c.model_a} vs {c.model_b}: {difference_text(c)} "
                   f"({p}{verdict}); {record_text(c)}")
    out += reference_lines(report)
    for err in report.errors:
        out.append(f"errors: {err.model_id} {err.evaluator}: {err.count} "
                   f"(e.g. {err.examples[0]})")
    if report.baseline is not None and not report.baseline.comparable:
        out.append(report.baseline.note)
    elif report.baseline is not None:
        deltas = ", ".join(f"{m} {d:+.3f}" for m, d in report.baseline.deltas.items())
        out.append(f"baseline {report.baseline.source}: {deltas or 'no shared model'}")
    return out


def reference_lines(report: BenchmarkReport) -> list[str]:
    """Retrieval's reference rows: each model's summaries against indexing the code itself
    (none when retrieval did not run)."""
    from ..evaluators.retrieval.report import references_block

    block = references_block(report.evaluator_details.get("retrieval/embedding") or {})
    if block is None:
        return []
    return [f"{block.title[0].lower()}{block.title[1:]} (reference rows, not ranked):",
            *table_lines([h[0].lower() + h[1:] for h in block.headers], block.rows),
            f"  {block.note.split('. ')[0]}; differences: per-unit reciprocal rank "
            "paired with the code row, 95% bootstrap interval"]


def validity_lines(validity: ValiditySection) -> list[str]:
    """The instrument-validity table: per family Kendall's tau on the ladder, the mean
    score of each level, whether each step is significant, the A/A rate; then a DISTRUST
    line for every flagged family or judge."""
    short = [level_name(m) for m in validity.levels]
    out = [f"instrument validity: {validity.verdict}" if validity.verdict
           else "instrument validity:"]
    out += [f"  {f.family}: {f.external_text()}" for f in validity.families]
    out.append(f"known-answer ladder on {validity.ladder_units} documented units, known order "
               f"{' > '.join(short)}")
    header = ["family", "tau", *(s.split("-", 1)[0] for s in short), "steps", "A/A", "status"]
    rows = []
    for f in validity.families:
        steps = " ".join("sig" if s.significant else "ns" for s in f.steps) or "-"
        aa = (f"{f.aa_significant_rate:.0%} of {f.aa_reseeds}"
              if f.aa_significant_rate is not None else "-")
        rows.append([f.family, "-" if f.kendall_tau is None else f"{f.kendall_tau:+.2f}",
                     *(_fmt(f.means.get(m)) for m in validity.levels), steps, aa, f.status])
    for j in validity.judges:
        if j.pointwise_tau is not None or j.pointwise_means:
            rows.append([f"judge {j.judge}", "-" if j.pointwise_tau is None
                         else f"{j.pointwise_tau:+.2f}",
                         *(_fmt(j.pointwise_means.get(m)) for m in validity.levels),
                         "-", "-", f"flips {_fmt(j.flip_rate)}"])
    out += table_lines(header, rows, indent="")
    out.append("steps: adjacent levels, paired t-test on per-unit scores, Holm over the "
               "steps; A/A: level 1 vs its twin, share of bootstrap reseeds significant")
    out += [f"DISTRUST {msg}" for msg in validity.flagged]
    return out
