"""Run health: whether a session's evidence is whole enough to name a best model, decided
at the end of the run before any headline is written.

A run is healthy when every model under test has a summary of at least
``MIN_SUMMARY_SHARE`` of the sampled units its items read, every evaluator family that ran
scored more than ``MIN_FAMILY_SHARE`` of its items ("most of them") and some items of
every model under test (a family whose method skips a model's items, such as downstream's
task model of that model's family, leaves it out of that model's overall score), and every
judge that was asked gave at least one verdict. What is wrong is said most basic first: a model
without summaries comes before the families its items then failed in, and those families
are judged on the other models' items, so that one misspelt model is one problem, not
four. ``finish_run`` keeps an unhealthy run (``runs/<id>/``), names no best model in it,
leaves the output directory's reports as they were and fails a configured gate
(docs/reports.md, "Run health").
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..generate.ladder import is_ladder_model
from ..schemas.report import HealthCount, RunHealth

if TYPE_CHECKING:
    from ..context import RunContext
    from ..evaluators import Evaluator
    from ..schemas import ScoreRecord

#: A model under test needs a summary of at least this share of its sampled units.
MIN_SUMMARY_SHARE = 0.9
#: A family needs more than this share of its items scored.
MIN_FAMILY_SHARE = 0.5
#: How much of a cause a problem quotes.
MAX_CAUSE_CHARS = 240
#: What the circuit breaker appends to a refused call's reason (``llm/breaker.py``): the
#: same cause with or without it is one cause.
_BREAKER_TAIL = re.compile(r" \(failed \d+ times in a row; calls now fail at once without "
                           r"being sent\)$")
#: A judge's recorded error (``evaluators/judge/calling.py``), said in words.
_JUDGE_ERROR = re.compile(r"^judge (\S+) (call_failed|invalid_output): ")
_JUDGE_WORDS = {"call_failed": "judge {}: ", "invalid_output": "judge {} gave an unreadable "
                                                               "verdict: "}


def cause(text: str | None, *, model: str = "") -> str:
    """A recorded error as the cause a problem quotes: one line, without the model's id in
    front (the problem names it) nor the breaker's tail, clipped."""
    line = " ".join((text or "unknown cause").split())
    if model and line.startswith(f"{model}: "):
        line = line[len(model) + 2:]
    line = _JUDGE_ERROR.sub(lambda m: _JUDGE_WORDS[m.group(2)].format(m.group(1)), line)
    line = _BREAKER_TAIL.sub("", line)
    return line if len(line) <= MAX_CAUSE_CHARS else line[:MAX_CAUSE_CHARS - 3] + "..."


def _commonest(causes: Iterable[str]) -> str:
    counted = Counter(causes)
    return min(counted, key=lambda c: (-counted[c], c)) if counted else "unknown cause"


def _models(record: ScoreRecord) -> list[str]:
    return record.model_id.split("~")


def summary_health(ctx: RunContext, records: list[ScoreRecord]
                   ) -> tuple[dict[str, HealthCount], list[str]]:
    """Per model under test, the sampled units its items were scored on whose summary the
    run asked for, those that have it, and a problem for each model below
    ``MIN_SUMMARY_SHARE`` with the commonest cause. (A unit no item reads the summary of,
    such as a completion task's target, is never asked for: it is no failure.)"""
    from ..context import NEVER_GENERATED

    sampled = {u.id for u in ctx.units}
    read: dict[str, set[str]] = defaultdict(set)
    for rec in records:
        for model in _models(rec):
            if (not is_ladder_model(model) and rec.unit_id in sampled
                    and ctx.summary_error(rec.unit_id, model) != NEVER_GENERATED):
                read[model].add(rec.unit_id)
    counts: dict[str, HealthCount] = {}
    problems: list[str] = []
    for model, units in sorted(read.items()):
        missing = sorted(u for u in units if ctx.summary(u, model) is None)
        counts[model] = HealthCount(done=len(units) - len(missing), of=len(units))
        if not missing or counts[model].done >= MIN_SUMMARY_SHARE * len(units):
            continue
        why = _commonest(cause(ctx.summary_error(u, model), model=model) for u in missing)
        if counts[model].done == 0:
            problems.append(f"{model} produced no summary: {why}")
        else:
            problems.append(f"{model} produced summaries of {counts[model].done} of "
                            f"{len(units)} sampled units (fewer than "
                            f"{MIN_SUMMARY_SHARE:.0%}): {why}")
    return counts, problems


def family_health(records: list[ScoreRecord], evaluators: Mapping[str, Evaluator],
                  without: set[str]) -> tuple[dict[str, HealthCount], list[str]]:
    """Per family that ran, items scored of its items (those of the models in ``without``
    left out), and a problem for each that scored no more than ``MIN_FAMILY_SHARE``."""
    scored: Counter[str] = Counter()
    failed: dict[str, list[str]] = defaultdict(list)
    for rec in records:
        if without & set(_models(rec)):
            continue
        ev = evaluators.get(rec.evaluator)
        family = ev.family if ev is not None else rec.evaluator.split("/", 1)[0]
        if rec.error is None:
            scored[family] += 1
        else:
            failed[family].append(cause(rec.error))
    counts: dict[str, HealthCount] = {}
    problems: list[str] = []
    for family in sorted(set(scored) | set(failed)):
        total = scored[family] + len(failed[family])
        counts[family] = HealthCount(done=scored[family], of=total)
        if scored[family] > MIN_FAMILY_SHARE * total:
            continue
        problems.append(f"{family} scored {scored[family]} of {total} items "
                        f"({scored[family] / total:.0%}); {len(failed[family])} ended in an "
                        f"error, most often: {_commonest(failed[family])}")
    return counts, problems


def models_left_out(ctx: RunContext, evaluators: Mapping[str, Evaluator]
                    ) -> dict[str, dict[str, str]]:
    """Per family, the models of this run whose items an evaluator of it skips by a rule of
    its method (``Evaluator.models_left_out``: a task model of their own family), with the
    reason."""
    models = {m.id for m in ctx.models}
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for ev in evaluators.values():
        asked = getattr(ev, "models_left_out", None)
        for model, why in (asked(ctx) if callable(asked) else {}).items():
            if model in models:
                out[ev.family].setdefault(model, why)
    return dict(out)


def left_out_health(ctx: RunContext, records: list[ScoreRecord],
                    evaluators: Mapping[str, Evaluator]) -> list[str]:
    """A problem for each family that ran but scored none of some models' items because
    its method skips them: the family the user configured drops out of those models'
    overall score, so the ranking compares unlike things."""
    ran: dict[str, set[str]] = defaultdict(set)
    for rec in records:
        ev = evaluators.get(rec.evaluator)
        ran[ev.family if ev is not None else rec.evaluator.split("/", 1)[0]].update(
            _models(rec))
    problems: list[str] = []
    for family, skipped in sorted(models_left_out(ctx, evaluators).items()):
        if family not in ran:
            continue
        none = [m for m in sorted(skipped) if m not in ran[family]]
        for why in dict.fromkeys(skipped[m] for m in none):
            named = [m for m in none if skipped[m] == why]
            problems.append(f"{family} scored none of the items of {', '.join(named)}: {why}")
    return problems


def judge_health(records: list[ScoreRecord]) -> tuple[dict[str, HealthCount], list[str]]:
    """Per judge that was asked, the items it gave a verdict on, and a problem for each
    judge that gave none."""
    from ..evaluators.judge.calling import parse_judge_error

    verdicts: Counter[str] = Counter()
    failed: dict[str, list[str]] = defaultdict(list)
    for rec in records:
        if rec.error is None:
            judge = rec.details.get("judge")
            if isinstance(judge, str):
                verdicts[judge] += 1
            continue
        parsed = parse_judge_error(rec.error)
        if parsed is not None:
            judge, _ = parsed
            reason = rec.error.split(": ", 1)[1] if rec.error and ": " in rec.error else ""
            failed[judge].append(cause(reason.split("; raw output: ", 1)[0], model=judge))
    counts: dict[str, HealthCount] = {}
    problems: list[str] = []
    for judge in sorted(set(verdicts) | set(failed)):
        counts[judge] = HealthCount(done=verdicts[judge],
                                    of=verdicts[judge] + len(failed[judge]))
        if not verdicts[judge]:
            problems.append(f"judge {judge} gave no verdict on any of its "
                            f"{len(failed[judge])} items: {_commonest(failed[judge])}")
    return counts, problems


def run_health(ctx: RunContext, records: list[ScoreRecord],
               evaluators: Mapping[str, Evaluator]) -> RunHealth:
    """The health of a session from its records (see the module docstring)."""
    summaries, problems = summary_health(ctx, records)
    without = {m for m, count in summaries.items()
               if count.of and count.done < MIN_SUMMARY_SHARE * count.of}
    judges, judge_problems = judge_health(records)
    families, family_problems = family_health(records, evaluators, without)
    problems += judge_problems + family_problems + left_out_health(ctx, records, evaluators)
    return RunHealth(healthy=not problems, problems=problems,
                     min_summary_share=MIN_SUMMARY_SHARE, min_family_share=MIN_FAMILY_SHARE,
                     summaries=summaries, families=families, judges=judges)
