"""``judge/pairwise``: the tournament (docs/methods.md#judge-pairwise), every pair of models on
every unit, each pair judged in both orders by each judge of neither model's family.

An item is unit x pair x judge (``MatrixItem.model_id`` is ``a~b`` with ``a < b``, the
judge in ``variant``); its test asks the judge twice, ``a`` shown first and then ``b``,
maps both verdicts back to the true models and records four scores: each model's ``win``
(1, 0.5 for a tie, 0) in each order. The mean of a model's ``win`` is therefore the spec's
win rate ``(wins + 0.5 ties) / total``. If either order yields no usable verdict the item
fails with the judge's raw text: keeping one order only would let position bias back in.

The report section has the wins / losses / ties table, head to head counts, Bradley-Terry
strengths with bootstrap intervals over units, per-criterion win rates, the
length-controlled win rates and each judge's bias audit and error rate.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations
from typing import TYPE_CHECKING, Any, ClassVar

from ...core.vocabulary import pair_id, split_pair
from ...schemas import ScoreRecord
from ..base import Answers, Component, MatrixItem, gather
from . import bradley_terry
from .agreement import judge_agreement
from .audit import (
    PairVerdict,
    length_bias_pairwise,
    length_controlled,
    pairwise_notes,
    position_bias,
)
from .base import (
    JudgeEvaluator,
    bootstrap_seed,
    error_notes,
    error_rates,
    judge_model,
    other_errors,
)
from .calling import Answer, JudgeError, JudgeQuestion
from .prompts import PAIRWISE_CRITERIA, PAIRWISE_TAG, PROMPT_VERSION, pairwise_messages
from .tally import head_to_head, tally, unit_wins
from .verdicts import PAIRWISE_JSON_SCHEMA, PairwiseVerdict, parse_pairwise

if TYPE_CHECKING:
    from ...context import RunContext
    from ...llm.requests import ModelRequest

_OUTCOME = {"A": 1.0, "B": 0.0, "tie": 0.5}


def _perspective(side: str | None, position: str) -> str | None:
    """A criterion winner (``A``/``B``/``tie``) as ``win``/``loss``/``tie`` for the model
    shown at ``position``."""
    if side is None:
        return None
    if side == "tie":
        return "tie"
    return "win" if side == position else "loss"


def verdicts_of(records: list[ScoreRecord]) -> list[PairVerdict]:
    """One ``PairVerdict`` per judged order, from the records of the model shown first."""
    out = []
    for r in records:
        d = r.details
        if r.error is None and d.get("position") == "A" and "win" in r.metrics:
            out.append(PairVerdict(judge=d["judge"], unit_id=r.unit_id, first=r.model_id,
                                   second=d["opponent"], outcome=float(r.metrics["win"]),
                                   first_length=int(d["length"]),
                                   second_length=int(d["opponentLength"])))
    return sorted(out, key=lambda v: (v.judge, v.unit_id, v.pair, v.first))


class JudgePairwise(JudgeEvaluator):
    """See the module docstring."""

    name: ClassVar[str] = "judge/pairwise"
    pairs: ClassVar[bool] = True
    components: ClassVar[tuple[Component, ...]] = (
        Component("win", "pairwise", "pairwise win rate"),)

    def items(self, ctx: RunContext) -> list[MatrixItem]:
        plan = ctx.roles.judge_plan
        pairs = {pair_id(a.id, b.id): (min(a.id, b.id), max(a.id, b.id))
                 for a, b in combinations(ctx.models, 2)}
        return [MatrixItem(evaluator=self.name, family=self.family, unit_id=u.id,
                           models=pairs[p], variant=j, label=ctx.unit_label(u))
                for u in ctx.units for p in sorted(pairs) for j in plan.judges_for_pair(p)]

    def _questions(self, item: MatrixItem, ctx: RunContext
                   ) -> list[tuple[str, str, str, JudgeQuestion[Any]]]:
        """(order, first, second, question): the pair in both orders."""
        a, b = item.models
        summaries = {m: self.summary_text(ctx, item.unit_id, m) for m in (a, b)}
        unit = ctx.unit(item.unit_id)
        judge = judge_model(ctx, item.variant)
        return [(order, first, second,
                 self.question(ctx, judge, pairwise_messages(
                     unit.language, unit.content, summaries[first], summaries[second]),
                     parse_pairwise, tag=PAIRWISE_TAG, schema_name="pairwise_verdict",
                     schema=PAIRWISE_JSON_SCHEMA))
                for order, (first, second) in (("ab", (a, b)), ("ba", (b, a)))]

    def requests(self, item: MatrixItem, ctx: RunContext,
                 answers: Answers) -> list[ModelRequest]:
        """One order after the other: the item fails when either order has no verdict,
        so the second order is not paid for when the first failed."""
        for *_, asked in self._questions(item, ctx):
            pending, ended = asked.walk(answers)
            if pending is not None:
                return [pending]
            if not isinstance(ended, Answer):
                return []
        return []

    def estimate_requests(self, item: MatrixItem, ctx: RunContext) -> list[ModelRequest]:
        """For the dry run: both orders (the second is asked once the first answered)."""
        return [asked.first for *_, asked in self._questions(item, ctx)]

    def evaluate(self, item: MatrixItem, ctx: RunContext) -> list[ScoreRecord]:
        a, b = item.models
        words = {m: len(self.summary_text(ctx, item.unit_id, m).split()) for m in (a, b)}
        judge = judge_model(ctx, item.variant)
        answers = gather(self, item, ctx)  # the orders were asked one after the other
        records: list[ScoreRecord] = []
        for order, first, second, asked in self._questions(item, ctx):
            try:
                answer = asked.outcome(answers)
            except JudgeError as exc:
                where = JudgeError(exc.judge_id, exc.kind,
                                   f"order {order} ({first} shown as A): {exc.reason}",
                                   raw=exc.raw, attempts=exc.attempts, unusable=exc.unusable)
                raise self.no_verdict(ctx, where) from None
            records.extend(self._records(item, judge.id, order, first, second, answer,
                                         words))
        return records

    def _records(self, item: MatrixItem, judge: str, order: str, first: str, second: str,
                 answer: Answer[PairwiseVerdict], words: dict[str, int]) -> list[ScoreRecord]:
        verdict = answer.verdict
        outcome = _OUTCOME[verdict.winner]
        # the call served both models: each of the two records carries half its cost
        cost = None if answer.cost is None else answer.cost / 2
        winner = "tie" if verdict.winner == "tie" else first if outcome == 1.0 else second
        breakdown = verdict.criteria_breakdown.model_dump()
        out = []
        for model, position, score in ((first, "A", outcome), (second, "B", 1.0 - outcome)):
            opponent = second if model == first else first
            out.append(ScoreRecord(
                unit_id=item.unit_id, model_id=model, evaluator=self.name,
                metrics={"win": score},
                details={"judge": judge, "pair": item.model_id, "order": order,
                         "position": position, "opponent": opponent,
                         "verdict": verdict.winner, "winner": winner,
                         "confidence": verdict.confidence, "reasoning": verdict.reasoning,
                         "criteria": {c: _perspective(breakdown[c], position)
                                      for c in PAIRWISE_CRITERIA},
                         "criteriaBreakdown": breakdown,
                         "length": words[model], "opponentLength": words[opponent],
                         "answers": answer.answers, "cached": answer.cached,
                         "cost": cost, "promptVersion": PROMPT_VERSION}))
        return out

    # -- report section -------------------------------------------------------------------
    def summarize(self, records: list[ScoreRecord], ctx: RunContext) -> dict[str, Any]:
        verdicts = verdicts_of(records)
        failed = [r for r in records if r.error is not None]
        samples = ctx.settings.evaluation.judge.bootstrap_samples
        plan = ctx.roles.judge_plan
        models = sorted({m for v in verdicts for m in (v.first, v.second)})
        by_judge: dict[str, list[PairVerdict]] = defaultdict(list)
        for v in verdicts:
            by_judge[v.judge].append(v)

        fit: dict[str, Any] = {}
        if len(models) >= 2:
            fit = bradley_terry.bootstrap(models, unit_wins(verdicts, models), samples=samples,
                                          seed=bootstrap_seed(ctx, self.name, "bt"))
        lc = length_controlled(verdicts)

        judged_items = Counter({j: len({(v.unit_id, v.pair) for v in vs})
                                for j, vs in by_judge.items()})
        errors = error_rates(judged_items, failed)
        judges: dict[str, Any] = {}
        by_judge_tables: dict[str, dict[str, dict[str, float | None]]] = {
            "winRateByJudge": defaultdict(dict), "lengthControlledByJudge": defaultdict(dict),
            "strengthByJudge": defaultdict(dict)}
        notes = plan.shortfalls(pairs=True)
        for judge in sorted(set(by_judge) | set(errors)):
            vs = by_judge.get(judge, [])
            position = position_bias(vs)
            length = length_bias_pairwise(vs)
            coef = lc["judges"].get(judge, {})
            judges[judge] = {
                **errors[judge],
                "position": {**position,
                             "positionCoefficient": coef.get("positionCoefficient")},
                "length": {**length, "lengthCoefficient": coef.get("lengthCoefficient"),
                           "lengthScale": coef.get("lengthScale")},
            }
            if vs:
                own_fit = bradley_terry.fit_outcomes([(v.first, v.second, v.outcome)
                                                      for v in vs])
                judges[judge]["bradleyTerryEstimator"] = own_fit.estimator
                for m, strength in own_fit.as_dict().items():
                    by_judge_tables["strengthByJudge"][m][judge] = strength
                for m, row in tally(vs).items():
                    by_judge_tables["winRateByJudge"][m][judge] = row["winRate"]
                for m, row in length_controlled(vs)["models"].items():
                    by_judge_tables["lengthControlledByJudge"][m][judge] = \
                        row["lengthControlledWinRate"]
            notes.extend(pairwise_notes(judge, position, length))
            notes.extend(error_notes(judge, judges[judge]))

        agreement = judge_agreement(
            {j: {(v.unit_id, v.pair, "ab" if v.first < v.second else "ba"):
                 "tie" if v.winner == "tie" else "a" if v.winner == split_pair(v.pair)[0]
                 else "b" for v in vs} for j, vs in by_judge.items()},
            categories=["a", "b", "tie"])
        return {
            "promptVersion": PROMPT_VERSION,
            "table": tally(verdicts),
            "bradleyTerry": fit.get("strengths", {}),
            "bradleyTerryFit": {k: v for k, v in fit.items() if k != "strengths"},
            "lengthControlled": lc["models"],
            "headToHead": head_to_head(verdicts),
            "criteria": self._criteria(records),
            "judges": judges,
            **{k: {m: dict(row) for m, row in sorted(t.items())}
               for k, t in by_judge_tables.items()},
            "agreement": agreement,
            "selection": plan.to_json(pairs=True),
            "otherErrors": other_errors(failed),
            "notes": notes,
        }

    @staticmethod
    def _criteria(records: list[ScoreRecord]) -> list[dict[str, Any]]:
        """Per model and criterion: wins, losses, ties and win rate over the verdicts that
        named a winner for that criterion."""
        counts: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
        for r in records:
            if r.error is None:
                for criterion, outcome in (r.details.get("criteria") or {}).items():
                    if outcome is not None:
                        counts[r.model_id][criterion][outcome] += 1
        rows: list[dict[str, Any]] = []
        for model in sorted(counts):
            for criterion in PAIRWISE_CRITERIA:
                c = counts[model][criterion]
                total = c["win"] + c["loss"] + c["tie"]
                rows.append({"model": model, "criterion": criterion, "wins": c["win"],
                             "losses": c["loss"], "ties": c["tie"],
                             "winRate": (c["win"] + 0.5 * c["tie"]) / total if total
                             else None})
        return rows
