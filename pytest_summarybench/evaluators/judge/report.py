"""The judge family's report section: the details of ``judge/pairwise`` and
``judge/pointwise`` as short tables with plain-language headers (win rates, the judges'
biases and errors, their agreement and which judge judged whom), the layouts the family
declares. The figures are the evaluators' own; nothing is recomputed here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.vocabulary import models_of, split_pair
from ...generate.ladder import is_ladder_model
from ..blocks import NOT_MEASURED, Block, dec


def _pct(value: Any) -> str:
    return f"{value:.0%}" if isinstance(value, (int, float)) else NOT_MEASURED


def _signed(value: Any) -> str:
    return f"{value:+.2f}" if isinstance(value, (int, float)) else NOT_MEASURED


def _ci(low: Any, high: Any, digits: int = 2) -> str:
    if isinstance(low, (int, float)) and isinstance(high, (int, float)):
        return f"[{low:.{digits}f}, {high:.{digits}f}]"
    return NOT_MEASURED


def kappa_meaning(kappa: float) -> str:
    """Landis and Koch's words for a kappa (1977), the usual reading of the scale."""
    if kappa < 0:
        return "worse than chance"
    if kappa < 0.01:
        return "no better than chance"
    for bound, text in ((0.2, "slight"), (0.4, "fair"), (0.6, "moderate"),
                        (0.8, "substantial")):
        if kappa < bound:
            return f"{text} agreement"
    return "almost perfect agreement"


def agreement_sentence(agreement: Mapping[str, Any], what: str) -> str | None:
    """One sentence on how much the judges agree, or None when nothing was measured
    (a single judge)."""
    fleiss = agreement.get("fleiss") or {}
    kappa = fleiss.get("kappa")
    if isinstance(kappa, (int, float)):
        return (f"{what}: Fleiss' kappa {kappa:+.2f} ({kappa_meaning(kappa)}) over "
                f"{fleiss.get('items', 0)} items rated by {fleiss.get('raters', 0)} judges")
    pairs = [p for p in agreement.get("cohen") or [] if isinstance(p.get("kappa"), (int, float))]
    if pairs:
        low = min(pairs, key=lambda p: p["kappa"])
        return (f"{what}: Cohen's kappa as low as {low['kappa']:+.2f} "
                f"({kappa_meaning(low['kappa'])}) between {' and '.join(low['judges'])} "
                f"over {low['items']} items")
    if agreement.get("cohen"):
        return (f"{what}: agreement not measurable (every judge gave the same label, or "
                "they shared no item)")
    return None


def _agreement_block(agreement: Mapping[str, Any], title: str) -> Block | None:
    pairs = agreement.get("cohen") or []
    if not pairs:
        return None
    weights = agreement.get("weights")
    block = Block(title=title, headers=["Judges", "Items both judged", "Cohen's kappa",
                                        "Reading"],
                  note="Kappa is chance-corrected: 1 is perfect agreement, 0 what judges "
                       "guessing with the same label frequencies would reach"
                       + (f"; {weights} weights give partial credit for near misses"
                          if weights and weights != "none" else "") + ".")
    for p in pairs:
        k = p.get("kappa")
        block.rows.append([" and ".join(p.get("judges", [])), str(p.get("items", 0)),
                           _signed(k), kappa_meaning(k) if isinstance(k, (int, float))
                           else "not defined (one label only, or no shared item)"])
    sentence = agreement_sentence(agreement, "All judges together")
    if sentence and (agreement.get("fleiss") or {}).get("kappa") is not None:
        block.note += " " + sentence + "."
    return block


def _selection_block(selection: Mapping[str, Any], title: str, unit: str) -> Block | None:
    assignments = {t: a for t, a in (selection.get("assignments") or {}).items()
                   if not is_ladder_model(t)}
    if not assignments:
        return None
    block = Block(title=title)
    counts = sorted({len(a.get("judges", [])) for a in assignments.values()})
    span = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    block.items.append(("", f"each {unit} judged by {span} judges (asked for at least "
                            f"{selection.get('minJudges', '?')}, at most "
                            f"{selection.get('maxJudges', '?')})"))
    seen: set[str] = set()
    for target, a in assignments.items():
        for judge, reason in (a.get("excluded") or {}).items():
            text = f"{judge} does not judge {' vs '.join(models_of(target))}: {reason}"
            if reason not in seen:
                seen.add(reason)
                block.items.append(("", text))
    for msg in selection.get("shortfalls") or []:
        block.items.append(("", str(msg)))
    return block


def _notes_block(details: Mapping[str, Any], title: str) -> Block | None:
    notes = [str(n) for n in details.get("notes") or []]
    other = [e for e in details.get("otherErrors") or [] if isinstance(e, Mapping)]
    if other:
        # Not the judges' fault (a summary that was never generated): counted, and the
        # first one quoted; the full list is in results.json.
        first = other[0]
        notes.append(f"{len(other)} items could not be judged for another reason, e.g. "
                     f"{first.get('modelId', '?')} on unit {first.get('unitId', '?')}: "
                     f"{str(first.get('error', ''))[:200]}")
    if details.get("promptVersion"):
        notes.append(f"prompt version {details['promptVersion']}")
    return Block(title=title, items=[("", n) for n in notes]) if notes else None


def _by_judge(table: Mapping[str, Mapping[str, Any]], title: str, note: str,
              fmt: Any = dec) -> Block | None:
    judges = list(dict.fromkeys(j for row in table.values() for j in row))
    if not judges:
        return None
    block = Block(title=title, headers=["Model", *judges], note=note)
    for model, row in table.items():
        block.rows.append([model, *(fmt(row[j]) if j in row else "not judged by it"
                                    for j in judges)])
    return block


def _criteria_pivot(rows: list[Mapping[str, Any]], value: str, title: str,
                    note: str) -> Block | None:
    criteria = list(dict.fromkeys(str(r.get("criterion")) for r in rows))
    models = list(dict.fromkeys(str(r.get("model")) for r in rows))
    if not criteria or not models:
        return None
    cells = {(str(r.get("model")), str(r.get("criterion"))): r.get(value) for r in rows}
    block = Block(title=title, headers=["Model", *(c.replace("_", " ") for c in criteria)],
                  note=note)
    for m in models:
        block.rows.append([m, *(dec(cells.get((m, c)), 2) for c in criteria)])
    return block


def pairwise_blocks(d: Mapping[str, Any]) -> list[Block]:
    """``judge/pairwise``: win rates, head to head, the judges, agreement, assignment."""
    wins = Block(title="Pairwise judging: win rate per model",
                 headers=["Model", "Wins", "Losses", "Ties", "Win rate",
                          "Length-controlled win rate", "Strength (95% CI)"],
                 note="Every pair of summaries is judged in both orders. Win rate counts a "
                      "tie as half a win; the length-controlled win rate is what it would be "
                      "if the judges did not favour longer summaries or the position shown "
                      "first; strength is the Bradley-Terry fit (0 is average).")
    lc = d.get("lengthControlled") or {}
    bt = d.get("bradleyTerry") or {}
    for model, row in d["table"].items():
        s = bt.get(model) or {}
        strength = (f"{s['strength']:+.2f} {_ci(s.get('ciLow'), s.get('ciHigh'))}"
                    if isinstance(s.get("strength"), (int, float)) else NOT_MEASURED)
        wins.rows.append([model, str(row.get("wins", 0)), str(row.get("losses", 0)),
                          str(row.get("ties", 0)), _pct(row.get("winRate")),
                          _pct((lc.get(model) or {}).get("lengthControlledWinRate")),
                          strength])
    blocks = [wins]
    h2h = Block(title="Pairwise judging: head to head", headers=["Pair", "Verdicts"])
    for pair, row in (d.get("headToHead") or {}).items():
        a, b = split_pair(pair)
        h2h.rows.append([f"{a} vs {b}", f"{a} {row.get(a, 0)} wins, {b} {row.get(b, 0)} "
                                        f"wins, {row.get('ties', 0)} ties"])
    if h2h.rows:
        blocks.append(h2h)
    judges = Block(title="Pairwise judges: errors and biases",
                   headers=["Judge", "Items", "No usable verdict", "Changed verdict when "
                            "swapped", "Shown-first won", "Longer summary won",
                            "Length-verdict correlation"],
                   note="An unbiased judge changes no verdict when the summaries swap "
                        "places, picks the one shown first half the time, and its verdicts "
                        "do not follow length (correlation near 0).")
    for judge, row in d["judges"].items():
        position, length = row.get("position") or {}, row.get("length") or {}
        flips = (f"{_pct(position.get('flipRate'))} ({position.get('flips', 0)} of "
                 f"{position.get('swappedPairs', 0)} pairs)"
                 if position.get("flipRate") is not None else NOT_MEASURED)
        judges.rows.append([judge, str(row.get("items", 0)),
                            f"{_pct(row.get('errorRate'))} ({row.get('errors', 0)})",
                            flips, _pct(position.get("firstPositionWinRate")),
                            _pct(length.get("longerWinRate")),
                            _signed(length.get("lengthVerdictCorrelation"))])
    blocks.append(judges)
    blocks.extend(block for block in (
            _by_judge(d.get("winRateByJudge") or {}, "Pairwise judging: win rate by judge",
                      "Each judge's own win rate per model; a model is not judged by a judge "
                      "of its own family.", _pct),
            _criteria_pivot(d.get("criteria") or [], "winRate",
                            "Pairwise judging: win rate per criterion",
                            "Win rate on each criterion of the verdicts that named a winner "
                            "for it."),
            _agreement_block(d.get("agreement") or {}, "Pairwise judges: agreement"),
            _selection_block(d.get("selection") or {}, "Pairwise judges: who judged whom",
                             "pair"),
            _notes_block(d, "Pairwise judging: notes")) if block is not None)
    return blocks


def pointwise_blocks(d: Mapping[str, Any]) -> list[Block]:
    """``judge/pointwise``: rubric scores, the judges, agreement, assignment."""
    weights = d.get("weights") or {}
    scores = Block(title="Rubric judging: score per model (1-5)",
                   headers=["Model", "Mean score", "95% CI", "Scores", "Units"],
                   note="Weighted average of the rubric criteria"
                        + (" (" + ", ".join(f"{k.replace('_', ' ')} {v:.0%}"
                                            for k, v in weights.items()) + ")"
                           if isinstance(weights, Mapping) and weights else "")
                        + "; the interval resamples units.")
    for model, row in d["models"].items():
        scores.rows.append([model, dec(row.get("mean"), 2),
                            _ci(row.get("ciLow"), row.get("ciHigh")),
                            str(row.get("n", "-")), str(row.get("units", "-"))])
    blocks = [scores]
    judges = Block(title="Rubric judges: errors and biases",
                   headers=["Judge", "Items", "No usable verdict", "Mean score given",
                            "Length-score correlation"],
                   note="Length-score correlation is Spearman's rho of summary length with "
                        "the score; near 0 for a judge that does not reward length.")
    for judge, row in d["judges"].items():
        length = row.get("length") or {}
        judges.rows.append([judge, str(row.get("items", 0)),
                            f"{_pct(row.get('errorRate'))} ({row.get('errors', 0)})",
                            dec(row.get("meanScore"), 2),
                            _signed(length.get("lengthScoreSpearman"))])
    blocks.append(judges)
    blocks.extend(block for block in (
            _criteria_pivot(d.get("criteria") or [], "mean",
                            "Rubric judging: mean score per criterion (1-5)", ""),
            _by_judge(d.get("byJudge") or {}, "Rubric judging: mean score by judge",
                      "Each judge's mean rubric score per model; a model is not judged by a "
                      "judge of its own family.", lambda v: dec(v, 2)),
            _agreement_block(d.get("agreement") or {}, "Rubric judges: agreement"),
            _selection_block(d.get("selection") or {}, "Rubric judges: who judged whom",
                             "model"),
            _notes_block(d, "Rubric judging: notes")) if block is not None)
    return blocks
