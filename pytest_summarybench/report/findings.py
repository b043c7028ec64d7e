"""The key findings a reader must see before the tables: what is wrong with the run when it
is unhealthy, what the ranking rests on when that is thin, who is best (or that nobody
is), the judges' position and length bias, how far the judges agree, and what the
validity ladder says not to trust. The terminal, the Markdown and the HTML report list the
same findings at their top; the figures behind each are further down and in results.json.

A finding comes only from evidence the run has: no best model in an unhealthy run, no
bias verdict for a judge that gave no verdict."""

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


def unhealthy(report: BenchmarkReport) -> bool:
    health = report.metadata.health
    return health is not None and not health.healthy


def evidence_caveat(report: BenchmarkReport) -> str | None:
    """What the ranking rests on, when a reader must know it before the ranking: only on
    evaluators that failed external validation (docs/validity.md), or on one family."""
    basis = report.basis
    if basis is None or not basis.evaluators or not any(r.units for r in report.rankings):
        return None
    names = ", ".join(basis.evaluators)
    if basis.failed_external:
        figures = "; ".join(
            f"{e.name}: tau {e.tau_docstrings:+.2f} with docstrings, {e.tau_stripped:+.2f} "
            f"stripped, on {e.dataset}" for e in basis.external)
        one = len(basis.evaluators) == 1
        return (f"The ranking rests only on {names}, which failed external validation "
                f"({figures}; docs/validity.md): {'its' if one else 'their'} order of "
                "summaries did not match real developer queries, so read the ranking as "
                "a check, not a verdict")
    if len(basis.families) == 1:
        external = "; ".join(e.text() for e in basis.external) or "not externally validated"
        return (f"The ranking rests on one family alone, {basis.families[0]} ({names}; "
                f"{external}): no other family confirms it")
    return None


def _health(report: BenchmarkReport) -> list[Finding]:
    health = report.metadata.health
    if health is None or health.healthy:
        return []
    return [Finding(f"Unhealthy run: {p}", warn=True) for p in health.problems] + [
        Finding("No best model is named: the run's evidence is incomplete (see the problems "
                "above); fix them and run again", warn=True)]


def _best(report: BenchmarkReport) -> list[Finding]:
    if unhealthy(report):
        return []
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
        if not isinstance(judges, dict):
            continue
        # A bias verdict needs verdicts: a judge that gave none showed nothing either way.
        heard = {j: row for j, row in judges.items() if _verdicts(row)}
        silent = sorted(set(judges) - set(heard))
        if heard and not any(map(_biased, heard.values())):
            who = ("no judge" if not silent
                   else f"no judge that gave verdicts ({', '.join(sorted(heard))})")
            out.append(Finding(f"{name}: {who} showed position or length bias (flip rate "
                               f"under {FLIP_ALERT:.0%}, length correlation under "
                               f"{LENGTH_ALERT})"))
        if silent:
            their = "its" if len(silent) == 1 else "their"
            out.append(Finding(f"{name}: {', '.join(silent)} gave no verdict, so nothing is "
                               f"known of {their} bias", warn=True))
    return out


def _verdicts(row: object) -> int:
    """How many of its items a judge gave a verdict on (its row of the judge section)."""
    if not isinstance(row, dict):
        return 0
    items, errors = row.get("items"), row.get("errors")
    if not isinstance(items, int):
        return 1  # a section without counts: its figures are verdicts
    return items - (errors if isinstance(errors, int) else 0)


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
    """The findings, most decisive first: what makes the run unhealthy, what the ranking
    rests on when that is thin, the best model (or that none can be told apart), the
    validity ladder's flags, the judges' biases and agreement, failed items."""
    out = _health(report)
    caveat = evidence_caveat(report)
    if caveat is not None:
        out.append(Finding(caveat, warn=True))
    out += _best(report)
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
