"""What the explorer shows of a run, unit by unit: the code, each model's summary, and what
every evaluator recorded about it (scores, the judge's reasoning and verdicts, the
contrastive options, the retrieval queries' ranks, the downstream tasks' outcomes).

Everything comes from the run's records (their ``details``), units and summaries; the
per-unit scores are the report's (``statistics.unit_scores``) or computed from the
declared components exactly as ``aggregate`` does. Text that a model, a judge or the
codebase wrote is bounded, redacted and neutralised here (``llm/redaction.scrub``); the
page shows it as text only.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..aggregate.scores import evaluator_unit_scores

if TYPE_CHECKING:
    from ..aggregate import ReportInputs, Scoring
    from ..schemas import BenchmarkReport, CodeUnit, ScoreRecord

#: Characters kept of a unit's code, of a summary or a judge's text, of an option's code.
CODE_CHARS = 20_000
TEXT_CHARS = 4_000
EXCERPT_CHARS = 800
#: Characters of a record's details shown for an evaluator the explorer does not know.
DETAILS_CHARS = 2_000
#: Units listed under each option picked instead of its target.
FOOLED_UNITS = 10
#: Options listed per evaluator: the first ``FOOLED_SHOWN``, and those tied with the last
#: of them up to ``FOOLED_TIED``.
FOOLED_SHOWN = 10
FOOLED_TIED = 25

#: Outcome filters, each a bit of a unit-model pair's ``out``: (key, what it means).
OUTCOMES: tuple[tuple[str, str], ...] = (
    ("error", "an evaluator could not score it"),
    ("low", "overall score below the report's low-score threshold"),
    ("contrastive", "contrastive: another option ranked above its own code"),
    ("retrieval", "retrieval: a query did not find it first"),
    ("downstream", "downstream: a task failed"),
    ("flip", "judge: a pairwise verdict changed with the order shown"),
)
_BIT = {key: 1 << i for i, (key, _) in enumerate(OUTCOMES)}


def _text(value: Any, limit: int = TEXT_CHARS) -> str:
    """Text for the page: bounded, control characters made visible. Secret values are
    masked on the whole page once it is rendered (``render._finished``), as in report.html;
    record details were scrubbed when they were recorded."""
    from ..llm.redaction import neutralise, truncate

    text = str(value)
    if len(text) > 2 * limit:
        text = text[:2 * limit]  # cut before the work; ``truncate`` still says how much
    return truncate(neutralise(text), limit)


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return round(float(value), 4)


def _models_of(rec: ScoreRecord) -> list[str]:
    # A pairwise item that failed is recorded under its pair ``a~b``.
    return list(rec.models)


class _Unit:
    """One row of the explorer, filled in record by record."""

    def __init__(self, unit: CodeUnit | None, unit_id: str, n_models: int) -> None:
        self.unit = unit
        self.id = unit_id
        self.out = [0] * n_models
        #: evaluator -> bit mask of the models it recorded something for on this unit
        self.seen: dict[str, int] = defaultdict(int)
        self.errors: list[list[Any]] = []
        self.pointwise: list[list[Any]] = []
        self.pairwise: list[list[Any]] = []
        self.contrastive: dict[str, dict[str, Any]] = {}
        self.retrieval: dict[str, Any] | None = None
        self.downstream: list[dict[str, Any]] = []
        self.other: list[dict[str, Any]] = []


class _Builder:
    def __init__(self, report: BenchmarkReport, inputs: ReportInputs) -> None:
        self.report = report
        self.models = [r.model_id for r in report.rankings]
        self.index = {m: i for i, m in enumerate(self.models)}
        self.units = {u.id: u for u in inputs.units}
        self.summaries = inputs.summaries
        self.scoring: Scoring = inputs.score_spec
        self.records = [r for r in inputs.records if r.benchmark == "summary"
                        and all(m in self.index for m in _models_of(r))]
        self.rows: dict[str, _Unit] = {}
        #: unit ids an option or a query's first hit names: listed with the units.
        self.refs: set[str] = set()
        #: unit ids whose code excerpt the page needs (picked instead of a target).
        self.excerpts: set[str] = set()
        #: evaluator -> option id -> (unit, model index) of each pick of it over the target.
        self.fooled: dict[str, dict[str, list[tuple[str, int]]]] = defaultdict(
            lambda: defaultdict(list))
        #: Judges and criteria, listed once: verdicts refer to them by position.
        self.judges: dict[str, int] = {}
        self.criteria: dict[str, int] = {}
        self.pair_criteria: dict[str, int] = {}

    def judge(self, d: Mapping[str, Any]) -> int:
        name = _text(d.get("judge", ""), 200)
        return self.judges.setdefault(name, len(self.judges))

    def row(self, unit_id: str) -> _Unit:
        if unit_id not in self.rows:
            self.rows[unit_id] = _Unit(self.units.get(unit_id), unit_id, len(self.models))
        return self.rows[unit_id]

    def mark(self, row: _Unit, model: str, outcome: str) -> None:
        row.out[self.index[model]] |= _BIT[outcome]

    # -- records --------------------------------------------------------------------
    def add(self, rec: ScoreRecord) -> None:
        row = self.row(rec.unit_id)
        for model in _models_of(rec):
            row.seen[rec.evaluator] |= 1 << self.index[model]
        if rec.error is not None:
            for model in _models_of(rec):
                self.mark(row, model, "error")
            row.errors.append([[self.index[x] for x in _models_of(rec)], rec.evaluator,
                               _text(rec.error)])
            return
        family, _, method = rec.evaluator.partition("/")
        m = self.index[rec.model_id]
        d = rec.details or {}
        if rec.evaluator == "judge/pointwise":
            # [model, judge, score, criteria scores (``criteria`` order), reasoning]
            scores: list[float | None] = [None] * len(self.criteria)
            for k, v in rec.metrics.items():
                if k != "weighted_average":
                    at = self.criteria.setdefault(k, len(self.criteria))
                    scores += [None] * (at + 1 - len(scores))
                    scores[at] = _num(v)
            row.pointwise.append([m, self.judge(d), _num(rec.metrics.get("weighted_average")),
                                  scores, _text(d.get("reasoning", ""))])
        elif rec.evaluator == "judge/pairwise":
            if d.get("position") == "A":  # one verdict per order: the first-shown's record
                self._pairwise(row, rec, d)
        elif family == "contrastive":
            self._contrastive(row, rec, d, method)
        elif family == "retrieval" and "queries" in d:
            self._retrieval(row, rec, d)
        elif family == "downstream":
            self._downstream(row, rec, d)
        else:
            row.other.append({"ev": rec.evaluator, "m": m,
                              "metrics": {k: _num(v) for k, v in rec.metrics.items()},
                              "details": _text(json.dumps(d, sort_keys=True, default=str),
                                               DETAILS_CHARS)})

    def _pairwise(self, row: _Unit, rec: ScoreRecord, d: Mapping[str, Any]) -> None:
        first, second = rec.model_id, str(d.get("opponent", ""))
        if second not in self.index:
            return
        winner = d.get("winner")
        # The winner of each criterion as shown: one letter per criterion of
        # ``pairCriteria`` (A, B, T for a tie, - when the judge named none).
        sides = ["-"] * len(self.pair_criteria)
        for k, v in (d.get("criteriaBreakdown") or {}).items():
            at = self.pair_criteria.setdefault(str(k), len(self.pair_criteria))
            sides += ["-"] * (at + 1 - len(sides))
            sides[at] = {"A": "A", "B": "B", "tie": "T"}.get(str(v), "-")
        # [judge, first shown, second shown, winner (-1: tie), confidence, reasoning,
        #  criteria]
        row.pairwise.append([self.judge(d), self.index[first], self.index[second],
                             self.index[winner] if winner in self.index else -1,
                             _text(d.get("confidence") or "", 40),
                             _text(d.get("reasoning", "")), "".join(sides)])

    def _contrastive(self, row: _Unit, rec: ScoreRecord, d: Mapping[str, Any],
                     method: str) -> None:
        distractors = [str(i) for i in d.get("distractorIds", [])]
        entry = row.contrastive.setdefault(rec.evaluator, {
            "ev": rec.evaluator, "options": [rec.unit_id, *distractors],
            "tiers": [None, *d.get("tiers", [])],
            "codeSims": [None, *(_num(s) for s in d.get("distractorSimilarities", []))],
            "byModel": []})
        self.refs.update(distractors)
        options: list[str] = entry["options"]
        where = {uid: i for i, uid in enumerate(options)}
        m = self.index[rec.model_id]
        correct = rec.metrics.get("correct")
        one: dict[str, Any] = {"m": m, "correct": _num(correct),
                               "rank": _num(rec.metrics.get("predicted_rank"))}
        if "selectedUnitId" in d:  # contrastive/llm: the helper's pick among shuffled options
            picked = str(d["selectedUnitId"])
            one.update(order=[where.get(str(i), -1) for i in d.get("optionIds", [])],
                       confidence=_text(d.get("confidence", ""), 40),
                       reasoning=_text(d.get("reasoning", "")))
        else:  # embedding, lexical: the option nearest the summary
            picked = str(d.get("picked", ""))
            sims = d.get("summarySimilarities")
            one["sims"] = [_num(s) for s in sims] if isinstance(sims, list) else None
        one["picked"] = where.get(picked, -1)
        entry["byModel"].append(one)
        if correct is not None and correct < 1:
            self.mark(row, rec.model_id, "contrastive")
            if picked and picked != rec.unit_id and picked in where:
                self.excerpts.add(picked)
                self.fooled[rec.evaluator][picked].append((rec.unit_id, m))

    def _retrieval(self, row: _Unit, rec: ScoreRecord, d: Mapping[str, Any]) -> None:
        queries = [q for q in d.get("queries", []) if isinstance(q, Mapping)]
        if row.retrieval is None:
            row.retrieval = {
                "k": max(d.get("kValues") or [0]),
                "queries": [{"id": _text(q.get("id", ""), 100),
                             "type": _text(q.get("type") or "", 60),
                             "text": _text(q.get("query", ""), 1000)} for q in queries],
                "byModel": []}
        top = [str(q["topId"]) if q.get("topId") else None for q in queries]
        self.refs.update(t for t in top if t)
        row.retrieval["byModel"].append({
            "m": self.index[rec.model_id], "ranks": [_num(q.get("rank")) for q in queries],
            "rr": [_num(q.get("reciprocalRank")) for q in queries], "top": top})
        if any(q.get("rank") != 1 for q in queries):
            self.mark(row, rec.model_id, "retrieval")

    def _downstream(self, row: _Unit, rec: ScoreRecord, d: Mapping[str, Any]) -> None:
        answer = next((d[k] for k in ("answer", "predictedFile", "selected", "generatedCode")
                       if d.get(k)), "")
        tests = [{"name": _text(t.get("name", ""), 200), "passed": bool(t.get("passed"))}
                 for t in d.get("tests") or [] if isinstance(t, Mapping)]
        success = rec.metrics.get("success")
        # What the task's outcome is: "passed" or "failed" when it had tests (``success``),
        # "failed" with a reason, else "untested": a completion task built without tests
        # records its similarity to the original only, which is not part of any score.
        outcome = ("failed" if d.get("reason") or (success is not None and success < 1)
                   else "passed" if success is not None else "untested")
        row.downstream.append({
            "ev": rec.evaluator, "task": _text(d.get("taskId", ""), 200),
            "m": self.index[rec.model_id],
            "metrics": {k: _num(v) for k, v in rec.metrics.items()},
            "outcome": outcome,
            "reason": _text(d.get("reason") or "", 1000), "answer": _text(answer),
            "tests": tests})
        if (success is not None and success < 1) or d.get("reason"):
            self.mark(row, rec.model_id, "downstream")

    # -- scores ---------------------------------------------------------------------
    def flips(self) -> None:
        """Mark the models of each pair whose verdict changed with the order shown."""
        for row in self.rows.values():
            verdicts: dict[tuple[int, int, int], set[int]] = defaultdict(set)
            for judge, first, second, winner, *_ in row.pairwise:
                verdicts[(judge, min(first, second), max(first, second))].add(winner)
            for (_, a, b), winners in verdicts.items():
                if len(winners) > 1:
                    for m in (a, b):
                        row.out[m] |= _BIT["flip"]


def _unit_json(b: _Builder, row: _Unit, overall: Mapping[str, Mapping[str, float]],
               ev_scores: Mapping[tuple[str, str, str], float], evaluators: Sequence[str],
               low: float) -> dict[str, Any]:
    u = row.unit
    # Columns in the ranking's order, whatever order the records came in.
    for part in (*row.contrastive.values(), row.retrieval or {"byModel": []}):
        part["byModel"].sort(key=lambda one: one["m"])
    row.downstream.sort(key=lambda t: (t["ev"], t["task"], t["m"]))
    row.pointwise.sort(key=lambda p: (p[0], p[1]))
    scores = [overall.get(m, {}).get(row.id) for m in b.models]
    for i, s in enumerate(scores):
        if s is not None and s < low:
            row.out[i] |= _BIT["low"]
    summaries = [b.summaries.get((row.id, m)) for m in b.models]
    return {
        "id": row.id,
        "path": _text(u.path, 500) if u else "",
        "name": _text(u.name, 500) if u else row.id,
        "lang": u.language if u else "",
        "type": u.type if u else "",
        "lines": [u.metadata.start_line, u.metadata.end_line] if u else None,
        "code": _text(u.content, CODE_CHARS) if u else "",
        "overall": [_num(s) for s in scores],
        "scores": {e: [_num(ev_scores.get((row.id, m, e))) for m in b.models]
                   for e in evaluators},
        "out": row.out,
        "seen": dict(row.seen),
        "sum": [_text(s.summary) if s is not None else None for s in summaries],
        "errors": row.errors, "pointwise": row.pointwise, "pairwise": row.pairwise,
        "contrastive": list(row.contrastive.values()), "retrieval": row.retrieval,
        "downstream": row.downstream, "other": row.other,
    }


def _ref(unit: CodeUnit, excerpt: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"path": _text(unit.path, 500), "name": _text(unit.name, 500),
                           "lang": unit.language, "type": unit.type}
    if excerpt:
        out["code"] = _text(unit.content, EXCERPT_CHARS)
    return out


def _fooled(b: _Builder) -> list[dict[str, Any]]:
    """Per evaluator, the options picked instead of their target most often: each pick is
    one (unit, model) whose summary was matched to that option (the top pick only, not
    every option ranked above the target), with the picks per model and ``tied`` when
    another option of the evaluator has the same count."""
    out = []
    for evaluator in sorted(b.fooled):
        picks = b.fooled[evaluator]
        counts = Counter({uid: len(p) for uid, p in picks.items()})
        ranked = sorted(counts.items(), key=lambda x: (-x[1], x[0]))
        cut = ranked[FOOLED_SHOWN - 1][1] if len(ranked) >= FOOLED_SHOWN else 0
        same = Counter(counts.values())
        for uid, n in ranked[:FOOLED_TIED]:
            if n < cut:
                break
            per_model = [0] * len(b.models)
            for _, m in picks[uid]:
                per_model[m] += 1
            units = sorted({u for u, _ in picks[uid]})
            out.append({"ev": evaluator, "id": uid, "count": n, "byModel": per_model,
                        "nUnits": len(units), "units": units[:FOOLED_UNITS],
                        "tied": same[n] > 1})
    return out


def explorer_data(report: BenchmarkReport, inputs: ReportInputs) -> dict[str, Any]:
    """The explorer's data for ``report``, from the inputs it was built from."""
    b = _Builder(report, inputs)
    for rec in b.records:
        b.add(rec)
    b.flips()
    evaluators = sorted({r.evaluator for r in b.records})
    ev_scores = evaluator_unit_scores(b.records, b.scoring)
    low = report.failures.low_score_threshold
    rows = sorted(b.rows.values(), key=lambda r: (r.unit.path, r.unit.name, r.id)
                  if r.unit else ("", "", r.id))
    units = [_unit_json(b, r, report.statistics.unit_scores, ev_scores, evaluators, low)
             for r in rows]
    listed = {r.id for r in rows}
    refs = {uid: _ref(b.units[uid], uid in b.excerpts)
            for uid in sorted(b.refs - listed) if uid in b.units}
    meta = report.metadata
    run = meta.run
    return {
        "run": {"name": _text(meta.name, 200), "id": run.id if run else meta.benchmark_id,
                "date": meta.run_date, "complete": bool(run.complete) if run else True,
                "partial": _text(run.describe(), 1000) if run and not run.complete else ""},
        "models": b.models,
        "evaluators": [{"name": e, "scored": bool(b.scoring.of(e)),
                        "label": ", ".join(c.label for c in b.scoring.of(e))}
                       for e in evaluators],
        "judges": list(b.judges),
        "criteria": list(b.criteria),
        "pairCriteria": list(b.pair_criteria),
        "outcomes": [[key, text] for key, text in OUTCOMES],
        "lowScore": low,
        "textChars": TEXT_CHARS,
        "units": units,
        "refs": refs,
        "fooled": _fooled(b),
    }


def embed_json(data: Any) -> str:
    """``data`` as JSON that can sit inside a ``<script type="application/json">``: ASCII
    only, and no ``<``, ``>`` or ``&`` anywhere (written as ``\\u003c``...), so no text in
    it can close the element or open a comment; ``JSON.parse`` reads it back unchanged."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
