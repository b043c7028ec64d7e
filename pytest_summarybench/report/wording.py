"""The sentences that say what a report's counts count, shared word for word by the
terminal summary, the Markdown and the HTML report, so that "units", "items" and a
win-loss-tie record mean the same in all three; and the fixed-width table the terminal
summaries print (a hosted benchmark's too, through ``harness.table_lines``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..schemas import BenchmarkReport
from ..schemas.report import ModelComparison

#: What the Units, Items and Errors columns of a ranking count.
COLUMNS_LEGEND = (
    "Units: sampled units with at least one scored item for the model. "
    "Items: tests that produced a score (one per unit, evaluator and model; a pairwise "
    "judge item counts for both of its models). "
    "Errors: tests that ended in an error instead of a score.")


def units_line(report: BenchmarkReport) -> str:
    """Extracted, sampled and scored units in one sentence, with why some sampled units
    have no score."""
    cb = report.metadata.codebase
    scored = sorted({r.units for r in report.rankings if r.units})
    # A model scored on no unit (no summary at all) is said by name, never counted away.
    none = [r.model_id for r in report.rankings if not r.units]
    text = (f"{cb.total_code_units:,} units extracted, {cb.sampled_code_units:,} sampled "
            "for this run")
    if not scored:
        return text + ", none scored"
    if len(scored) == 1 and not none:
        text += f", {scored[0]:,} scored for every model"
    elif len(scored) == 1:
        text += f", {scored[0]:,} scored per model that scored any"
    else:
        text += f", {scored[0]:,}-{scored[-1]:,} scored per model (Units column)"
    if none:
        text += (f"; no unit scored for {len(none)} model{'s' if len(none) != 1 else ''} "
                 f"({', '.join(none)})")
    unscored = cb.sampled_code_units - scored[-1]
    if unscored > 0:
        text += (f"; {unscored:,} sampled units have no score (no evaluator that ran "
                 "applies to them, or all their items ended in an error)")
    return text


def items_line(report: BenchmarkReport) -> str:
    """The items scored and errored over all models, and the families skipped."""
    meta = report.metadata
    text = (f"items: {meta.scored_items:,} scored, {meta.error_items:,} ended in an error "
            "(one item per unit, evaluator and model or pair of models)")
    skipped = [f for f in report.metadata.families_skipped if " " not in f]
    if skipped:
        text += f"; not run (no items): {', '.join(skipped)}"
    return text


#: What the two differences of a head-to-head are, said the same in every output (the
#: terminal, ``summarybench compare``, both reports and the significance table).
OVERALL_DIFFERENCE = "overall difference"
"""A's overall score minus B's, as ranked (``ModelComparison.score_difference``)."""
UNIT_DIFFERENCE = "mean per-unit difference"
"""The mean of A's minus B's per-unit overall scores on the units both were scored on:
what the paired test, its interval and the significance table are about
(``ModelComparison.mean_unit_difference``, ``SignificanceTest.mean_difference``)."""
DIFFERENCES_NOTE = (
    f"The {OVERALL_DIFFERENCE} is A's overall score minus B's, as ranked; the "
    f"{UNIT_DIFFERENCE} (Δ) is the mean of A's minus B's per-unit scores over the units both "
    "were scored on, which the paired test, its interval and p are about. They differ when "
    "the models were scored on different units or items.")


def difference_text(c: ModelComparison) -> str:
    """``overall difference +0.426; mean per-unit difference +0.484 (95% CI ..., 40
    shared units)``: the head-to-head's two differences, each named."""
    unit = "-" if c.mean_unit_difference is None else f"{c.mean_unit_difference:+.3f}"
    ci = ("-" if c.confidence_interval is None
          else f"{c.confidence_interval[0]:+.3f} to {c.confidence_interval[1]:+.3f}")
    return (f"{OVERALL_DIFFERENCE} {c.score_difference:+.3f}; {UNIT_DIFFERENCE} {unit} "
            f"(95% CI {ci}, {c.units} shared units)")


def record_text(c: ModelComparison) -> str:
    """A head-to-head record with its words: ``A: 28 wins, 22 losses, 38 ties on 88
    units``; for a pairwise judge, the verdicts it counts."""
    r = c.pairwise_record
    counts = (f"{r.a_wins} {'win' if r.a_wins == 1 else 'wins'}, "
              f"{r.b_wins} {'loss' if r.b_wins == 1 else 'losses'}, "
              f"{r.ties} {'tie' if r.ties == 1 else 'ties'}")
    if c.pairwise_source == "judge/pairwise":
        total = r.a_wins + r.b_wins + r.ties
        return (f"{c.model_a}: {counts} in {total} pairwise judge verdicts against "
                f"{c.model_b} ({c.units} units)")
    return f"{c.model_a}: {counts} against {c.model_b} on {c.units} units (per-unit scores)"


def table_lines(headers: Sequence[object], rows: Sequence[Sequence[object]],
                indent: str = "  ", *, rule: bool = False) -> list[str]:
    """A fixed-width table: the first column left-aligned, the others right-aligned; with
    ``rule``, a line of dashes under the header."""
    cells = [[str(c) for c in headers], *([str(c) for c in row] for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [indent + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                for i, (c, w) in enumerate(zip(row, widths, strict=True)))
             for row in cells]
    if rule:
        lines.insert(1, indent + "  ".join("-" * w for w in widths))
    return lines
