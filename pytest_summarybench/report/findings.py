"""The key findings a reader must see before the tables: who is best (or that nobody is),
the judges' position and length bias, how far the judges agree, and what the validity
ladder says not to trust. The terminal, the Markdown and the HTML report list the same
findings at their top; the figures behind each are further down and in results.json."""

from __future__ import annotations

from dataclasses import dataclass

from ..evaluators.judge.audit import FLIP_ALERT, LENGTH_ALERT
from ..evaluators.judge.report import agreement_sentence
from ..schemas import BenchmarkReport

#: Below this kappa the judges' agreement is a finding to heed (Landis and Koch's
#: "fair" and worse).
LOW_AGREEMENT = 0.4
_JUDGE_KINDS = {"judge/pairwise": "pairwise verdicts", "judge/pointwise": "rubric scores"}


@dataclass(frozen=True)
class Finding:
    text: str
    warn: bool = False
    """A reason to distrust or re-check a figure (shown highlighted)."""
    validity: bool = False
    """From the validity ladder; the terminal prints these with the ladder's table."""


def _best(report: BenchmarkReport) -> list[Finding]:
    for rec in report.recommendations:
        if rec.kind == "no_single_best":
            return [Finding(f"No single best: {rec.text}")]
        if rec.kind == "best_overall":
            return [Finding(f"Best overall: {rec.text}")]
    return []


def _judges(report: BenchmarkReport) -> list[Finding]:
    out: list[Finding] = []
    for name, kind in _JUDGE_KINDS.items():
        details = report.evaluator_details.get(name)
        if not isinstance(details, dict):
            continue
        # The judge evaluators' own notes: position bias, length bias, error rates and
        # judges missing for some model, each with its figure.
        out += [Finding(f"{name}: {note}", warn=True) for note in details.get("notes") or []]
        agreement = details.get("agreement")
        if isinstance(agreement, dict):
            sentence = agreement_sentence(agreement, f"judge agreement on {kind}")
            if sentence is not None:
                kappa = (agreement.get("fleiss") or {}).get("kappa")
                if kappa is None:
                    kappas = [p["kappa"] for p in agreement.get("cohen") or []
                              if isinstance(p.get("kappa"), (int, float))]
                    kappa = min(kappas) if kappas else None
                out.append(Finding(sentence, warn=kappa is None or kappa < LOW_AGREEMENT))
        judges = details.get("judges")
        if isinstance(judges, dict) and judges and not any(map(_biased, judges.values())):
            out.append(Finding(f"{name}: no judge showed position or length bias (flip rate "
                               f"under {FLIP_ALERT:.0%}, length correlation under "
                               f"{LENGTH_ALERT})"))
    return out


def _biased(judge: object) -> bool:
    """Whether a judge's row crosses an alert level of ``evaluators/judge/audit.py`` (the
    levels at which the evaluator writes its bias notes)."""
    if not isinstance(judge, dict):
        return False
    position, length = judge.get("position") or {}, judge.get("length") or {}

    def over(value: object, level: float, centre: float = 0.0) -> bool:
        return isinstance(value, (int, float)) and abs(value - centre) >= level

    return (over(position.get("flipRate"), FLIP_ALERT)
            or over(position.get("firstPositionWinRate"), FLIP_ALERT / 2, 0.5)
            or over(length.get("lengthVerdictCorrelation"), LENGTH_ALERT)
            or over(length.get("lengthScoreSpearman"), LENGTH_ALERT))


def key_findings(report: BenchmarkReport) -> list[Finding]:
    """The findings, most decisive first: the best model (or the tie), the validity
    ladder's flags, the judges' biases and agreement, failed items."""
    out = _best(report)
    if report.validity is not None:
        out += [Finding(f"Distrust {msg}", warn=True, validity=True)
                for msg in report.validity.flagged]
    out += _judges(report)
    scored, errors = report.metadata.scored_items, report.metadata.error_items
    if errors:
        share = errors / (scored + errors)
        out.append(Finding(f"{errors:,} of {scored + errors:,} items ended in an error "
                           f"({share:.0%}) and count for no model (see Errors)",
                           warn=share >= 0.05))
    return out
