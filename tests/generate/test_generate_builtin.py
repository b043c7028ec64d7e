"""The offline summarizers and the generation phase for built-in models."""

from __future__ import annotations

import random

import pytest

from pytest_summarybench.generate import BUILTIN_VERSION, run_generation
from pytest_summarybench.generate.builtin import (
    BuiltinError,
    derangement,
    docstring_summary,
    identifiers_summary,
    lead_summary,
    signature_summary,
    split_words,
)
from pytest_summarybench.schemas import GeneratedSummary


def test_split_words() -> None:
    assert split_words("parseHTTPResponse_v2") == ["parse", "http", "response", "v", "2"]
    assert split_words("total_price") == ["total", "price"]


def test_signature_template(unit_factory) -> None:
    units = {u.id: u for u in unit_factory()}
    assert signature_summary(units["u-fn-0"]) == (
        "Function totalPrice0 (total price 0) taking cart (Cart) and vat_rate (float, "
        "optional) and returning Decimal.")
    assert signature_summary(units["u-m-clear"]) == (
        "Method clear (clear) of Cart taking no parameters.")
    assert signature_summary(units["u-class"], ["add", "clear"]) == (
        "Class Cart (cart) with methods add and clear.")
    assert signature_summary(units["u-file"]) == (
        "Python file shop/cart.py exporting Cart and total.")


def test_docstring_and_its_fallback(unit_factory) -> None:
    units = {u.id: u for u in unit_factory()}
    with_doc = docstring_summary(units["u-fn-0"])
    assert (with_doc.text, with_doc.source) == ("Total of the cart including VAT (0).",
                                                "docstring")
    without = docstring_summary(units["u-fn-1"])
    assert without.source == "fallback-signature"
    assert without.text == signature_summary(units["u-fn-1"])
    assert without.model_version == f"{BUILTIN_VERSION}:fallback-signature"


def test_lead_skips_decorators_and_declaration(unit_factory) -> None:
    fn = {u.id: u for u in unit_factory()}["u-fn-0"]
    assert lead_summary(fn) == ("subtotal = sum(item.price for item in cart.items) "
                                "return subtotal * (1 + vat_rate) + 0")


def test_identifiers_are_words_without_keywords(unit_factory) -> None:
    fn = {u.id: u for u in unit_factory()}["u-fn-0"]
    words = identifiers_summary(fn).split()
    assert words[:3] == ["total", "price", "cached"]
    assert {"cart", "vat", "rate", "subtotal", "items", "decimal"} <= set(words)
    assert not {"def", "return", "for", "in"} & set(words)
    assert len(words) == len(set(words))


def test_identifiers_skip_comments_and_strings(unit_factory) -> None:
    fn = unit_factory()[4].model_copy(update={
        "content": 'def f(order_id):\n    # look up the warehouse\n'
                   '    log("shipping label printed")\n    return order_id\n'})
    assert identifiers_summary(fn) == "total price order id log"
    rust = fn.model_copy(update={"language": "rust", "content":
                                 "fn pick<'a>(items: &'a [Item]) -> &'a Item { &items[0] }"})
    assert identifiers_summary(rust).split()[2:] == ["pick", "items", "item"]


def test_csharp_doc_markup_is_dropped(unit_factory) -> None:
    fn = unit_factory()[4].model_copy(update={
        "language": "csharp",
        "docstring": "<summary>Adds VAT to {@code price}.</summary>\n<param name=\"p\">x</param>"})
    assert docstring_summary(fn).text == "Adds VAT to price. x"


def test_derangement_has_no_fixed_point_and_is_seeded() -> None:
    ids = [f"u{i}" for i in range(50)]
    for seed in range(20):
        mapping = derangement(ids, random.Random(seed))
        assert sorted(mapping) == sorted(mapping.values()) == sorted(ids)
        assert all(k != v for k, v in mapping.items())
    assert derangement(ids, random.Random(1)) == derangement(ids, random.Random(1))
    with pytest.raises(BuiltinError, match="at least two sampled units"):
        derangement(["only"], random.Random(0))


def test_run_generation_for_builtins(make_ctx, builtin_models) -> None:
    ctx = make_ctx(builtin_models)
    report = run_generation(ctx, progress=False)
    n = len(ctx.units)
    assert report.generated == 5 * n and report.errors == 0 and report.calls == 0
    assert all(s.cost == 0.0 for s in report.models.values())
    assert report.models["builtin/docstring"].fallbacks == 3  # class, clear, totalPrice1
    ctx = ctx.refreshed()
    for unit in ctx.units:
        for model in ctx.models:
            summary = ctx.summary(unit.id, model.id)
            assert isinstance(summary, GeneratedSummary), (unit.id, model.id)
            meta = summary.generation_metadata
            assert summary.summary.strip()
            assert meta.cost == 0.0 and meta.prompt_version == BUILTIN_VERSION
            assert meta.input_tokens > 0 and meta.output_tokens > 0
    # The negative control is always another unit's docstring-model summary.
    docs = {u.id: ctx.summary(u.id, "builtin/docstring").summary for u in ctx.units}
    donors = []
    for unit in ctx.units:
        shuffled = ctx.summary(unit.id, "builtin/shuffled")
        donor = shuffled.generation_metadata.model_version.split(":from:")[1]
        assert donor != unit.id
        assert shuffled.summary == docs[donor]
        donors.append(donor)
    assert sorted(donors) == sorted(u.id for u in ctx.units)


def test_second_run_reuses_everything_and_ids_are_stable(make_ctx, builtin_models) -> None:
    ctx = make_ctx(builtin_models)
    run_generation(ctx, progress=False)
    first = {k: v.id for k, v in ctx.store.run_summaries(ctx.run_id).items()
             if isinstance(v, GeneratedSummary)}
    again = run_generation(ctx, progress=False)
    assert again.generated == 0 and again.reused == 5 * len(ctx.units)
    other = make_ctx(builtin_models, run_id="run-2")
    run_generation(other, progress=False)
    second = {k: v.id for k, v in other.store.run_summaries("run-2").items()
              if isinstance(v, GeneratedSummary)}
    assert first == second


def test_shuffled_with_one_unit_is_an_error_not_a_crash(make_ctx, unit_factory) -> None:
    ctx = make_ctx([{"provider": "builtin", "model": "shuffled"}], units=unit_factory()[:1])
    report = run_generation(ctx, progress=False)
    assert report.errors == 1
    ctx = ctx.refreshed()
    assert "at least two sampled units" in ctx.summary_error("u-file", "builtin/shuffled")


def test_unknown_builtin_is_reported(make_ctx) -> None:
    ctx = make_ctx([{"provider": "builtin", "model": "nope"}])
    report = run_generation(ctx, progress=False)
    assert report.errors == len(ctx.units)
    assert "unknown built-in model builtin/nope" in report.models["builtin/nope"].error_samples[0]
