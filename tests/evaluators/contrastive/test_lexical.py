"""contrastive/lexical: distractors that share the target's identifiers, so that a bag of
copied identifiers must lose to a summary that says what the code does."""

from __future__ import annotations

from random import Random

import numpy as np

from pytest_summarybench.context import RunContext
from pytest_summarybench.evaluators import load_builtin
from pytest_summarybench.evaluators.contrastive.lexical import (
    SHARED_IDENTIFIERS_TIER,
    select_lexical,
)
from pytest_summarybench.generate.builtin import identifier_words
from pytest_summarybench.schemas import CodeUnit
from pytest_summarybench.schemas.units import Parameter, UnitMetadata
from tests.evaluators.synthetic import ContextFactory

#: Twelve checks over the same identifiers; only the message says what each rejects.
MESSAGES = ["discount too large", "password too short", "email address malformed",
            "cart is empty", "coupon has expired", "stock is exhausted",
            "shipping country unsupported", "payment was declined", "refund already issued",
            "invoice not signed", "account is locked", "quantity must be positive"]


def _check_units() -> list[CodeUnit]:
    units = []
    for i, message in enumerate(MESSAGES):
        signature = "def check(value, limit):"
        units.append(CodeUnit(
            id=f"c{i:02d}", path=f"rules/rule{i:02d}.py", name="check", type="function",
            language="python",
            content=(f"{signature}\n    if value > limit:\n"
                     f"        raise ValueError(\"{message}\")\n    return value\n"),
            metadata=UnitMetadata(start_line=1, end_line=4, signature=signature,
                                  parameters=[Parameter(name="value"),
                                              Parameter(name="limit")])))
    return units


def test_lexical_sets_share_the_targets_identifiers() -> None:
    units = _check_units()
    other = units[0].model_copy(update={
        "id": "zz", "path": "other.py", "name": "render_page",
        "content": "def render_page(template, context):\n    return template.render(context)\n"})
    sets = select_lexical(units[:1], [*units, other], 9, Random)
    chosen = sets["c00"]
    assert len(chosen.distractor_ids) == 9 and "zz" not in chosen.distractor_ids
    assert set(chosen.tiers) == {SHARED_IDENTIFIERS_TIER}
    assert identifier_words(units[0]) == ["check", "value", "limit", "error"]


#: Functions over other identifiers, which the tiers of docs/methods.md#distractor-tiers draw from
#: as well.
OTHERS = ["render_page(template, context)", "parse_header(line, strict)",
          "merge_totals(left, right)", "send_mail(recipient, body)",
          "resize_image(picture, width)", "open_socket(host, port)",
          "store_blob(bucket, payload)", "score_match(player, opponent)"] * 4


def _others() -> list[CodeUnit]:
    units = []
    for i, call in enumerate(OTHERS):
        name, params = call.split("(")
        a, b = params.rstrip(")").split(", ")
        signature = f"def {name}_{i}({a}, {b}):"
        units.append(CodeUnit(
            id=f"o{i:02d}", path=f"misc/m{i:02d}.py", name=f"{name}_{i}", type="function",
            language="python", content=f"{signature}\n    return {a}.{name}({b})\n",
            metadata=UnitMetadata(start_line=1, end_line=2, signature=signature,
                                  parameters=[Parameter(name=a), Parameter(name=b)])))
    return units


def _accuracy(ctx: RunContext, name: str) -> dict[str, float]:
    ev = load_builtin(name)
    ev.prepare(ctx)
    scores: dict[str, list[float]] = {}
    for item in ev.items(ctx):
        if not item.unit_id.startswith("c"):
            continue
        (rec,) = ev.evaluate(item, ctx)
        assert rec.details["method"] == name.split("/")[1] and rec.evaluator == name
        scores.setdefault(item.model_id, []).append(rec.metrics["correct"])
    return {model: float(np.mean(v)) for model, v in scores.items()}


def test_a_copied_identifier_bag_loses_to_a_meaningful_summary(
        make_context: ContextFactory) -> None:
    """Twelve checks that differ only in what they reject, among unrelated functions: the
    lexical sets are the other checks, which the bag of the check's identifiers cannot
    tell apart (its words are all theirs too), while the summary that says what the check
    rejects still can. (Here the spec's semantic tier draws the other checks as well, so
    contrastive/embedding agrees; on CoSQA the two differ, docs/validity.md.)"""
    units = [*_check_units(), *_others()]
    bag = {u.id: " ".join(identifier_words(u)) for u in units}
    meaning = {u.id: f"Rejects the value when the {m}." for u, m in zip(units, MESSAGES,
                                                                         strict=False)}
    meaning.update({u.id: u.name.replace("_", " ") for u in units[len(MESSAGES):]})
    ctx = make_context(units=units, summaries={"builtin/bag": bag, "builtin/meaning": meaning},
                       overrides={"evaluation.contrastive.methods": ["lexical"],
                                  "evaluation.sampleSize": len(units)})
    assert load_builtin("contrastive/lexical").skip_reason(ctx) is None
    lexical = _accuracy(ctx, "contrastive/lexical")
    assert lexical["builtin/meaning"] == 1.0
    assert lexical["builtin/bag"] < 0.2, lexical


def test_lexical_is_skipped_unless_selected(make_context: ContextFactory) -> None:
    ctx = make_context()
    reason = load_builtin("contrastive/lexical").skip_reason(ctx)
    assert reason is not None and "'lexical'" in reason
