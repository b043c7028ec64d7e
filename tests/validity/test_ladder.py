"""The known-answer ladder: its levels, the domain-term rule of level 2, level 4's donors,
the built-in registration and how the ladder enters a run's settings and matrix."""

from __future__ import annotations

from pathlib import Path
from random import Random
from typing import Literal

import pytest

from pytest_summarybench.evaluators import MatrixItem
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.generate.builtin import summarize_builtin
from pytest_summarybench.generate.ladder import (
    GENERIC_WORDS,
    LADDER_NAMES,
    boilerplate_summary,
    domain_terms,
    donors,
    generic_summary,
    ladder_doc,
    ladder_summaries,
)
from pytest_summarybench.schemas import CodeUnit, UnitMetadata
from pytest_summarybench.settings import DEFAULT_MODELS, load_settings
from pytest_summarybench.validity import LADDER_MODEL_IDS, LEVEL_IDS, TWIN, is_ladder_model
from pytest_summarybench.validity.wiring import documented_ids, keep_item, with_ladder


def unit(uid: str, path: str, name: str, code: str, doc: str | None,
         kind: Literal["function", "method"] = "function") -> CodeUnit:
    return CodeUnit(id=uid, path=path, name=name, type=kind, language="python",
                    content=code, docstring=doc,
                    metadata=UnitMetadata(start_line=1, end_line=code.count("\n") + 1))


DISCOUNT = unit("u1", "shop/pricing.py", "apply_discount",
                "def apply_discount(price, percent):\n"
                "    return price * (1 - percent / 100)\n",
                "Apply a percentage discount to the price, never below zero.")
TAX = unit("u2", "shop/pricing.py", "add_sales_tax",
           "def add_sales_tax(price, rate):\n    return round(price * (1 + rate), 2)\n",
           "Add sales tax at the given rate and round to cents.")
EMAIL = unit("u3", "shop/users.py", "validate_email",
             "def validate_email(email):\n    return PATTERN.match(email) is not None\n",
             "Check that an email address looks valid.")
BARE = unit("u4", "shop/users.py", "lock", "def lock(user):\n    user.locked = True\n", None)
SHORT = unit("u5", "shop/users.py", "unlock", "def unlock(user):\n    user.locked = False\n",
             "Unlock.")
UNITS = [DISCOUNT, TAX, EMAIL, BARE, SHORT]


def test_ladder_units_are_those_with_a_docstring_of_a_few_words() -> None:
    assert ladder_doc(DISCOUNT) == DISCOUNT.docstring
    assert ladder_doc(BARE) is None
    assert ladder_doc(SHORT) is None  # "Unlock." says too little to degrade in steps
    assert documented_ids(UNITS) == {"u1", "u2", "u3"}


def test_domain_terms_are_identifier_words_and_code_like_words() -> None:
    # apply, discount, price (identifiers) and nothing else of this sentence
    assert domain_terms(DISCOUNT.docstring or "", DISCOUNT) == ["apply", "discount", "price"]
    doc = "Reads BOOKSHOP_URL and parseHTTP output from the price list."
    assert domain_terms(doc, DISCOUNT) == ["bookshop_url", "parsehttp", "price"]


def test_level_two_replaces_each_domain_term_consistently() -> None:
    doc = "Apply the discount; a discount never applies twice. Price first."
    text = generic_summary(doc, DISCOUNT)
    first, second, third = GENERIC_WORDS[:3]
    assert text == (f"{first.capitalize()} the {second}; a {second} never applies twice. "
                    f"{third.capitalize()} first.")


def test_level_three_is_the_same_sentence_for_every_unit_of_a_type() -> None:
    assert boilerplate_summary(DISCOUNT) == boilerplate_summary(EMAIL)
    method = unit("m", "a.py", "A.run", "def run(self):\n    pass\n", "Run it now.", "method")
    assert boilerplate_summary(method) != boilerplate_summary(DISCOUNT)


def test_level_four_donor_shares_the_fewest_words_from_another_file() -> None:
    docs = {u.id: d for u in UNITS if (d := ladder_doc(u)) is not None}
    for seed in range(5):
        pick = donors(UNITS, docs, Random(seed))
        assert pick["u1"] == "u3" and pick["u2"] == "u3"  # never the sibling in pricing.py
        assert pick["u3"] in {"u1", "u2"}  # neither shares a word with it: the seed decides
    # a unit of another file that talks about prices is passed over for one that does not
    prices = unit("u6", "shop/report.py", "price_report",
                  "def price_report(prices):\n    return sorted(prices)\n",
                  "Report the price of every discount applied.")
    docs["u6"] = prices.docstring or ""
    assert all(donors([*UNITS, prices], docs, Random(s))["u1"] == "u3" for s in range(5))
    same_text = {"u1": "Same words here.", "u2": "Same words here."}
    assert donors([DISCOUNT, TAX], same_text, Random(0)) == {}


def test_every_level_through_the_builtin_registry() -> None:
    out = {name: summarize_builtin(name, UNITS, lambda u: [], Random(0))
           for name in LADDER_NAMES}
    l1, l2, l3, l4, twin = (out[n] for n in LADDER_NAMES)
    assert {u: r.text for u, r in l1.items()} == {u: r.text for u, r in twin.items()}
    assert l1["u1"].text == DISCOUNT.docstring
    assert l2["u1"].text != l1["u1"].text and l2["u1"].text.endswith("never below zero.")
    assert l3["u1"].text == boilerplate_summary(DISCOUNT)
    assert l4["u1"].text == EMAIL.docstring and l4["u1"].source == "ladder-from:u3"
    # units outside the ladder get the same background text at every level
    assert len({out[n]["u4"].text for n in LADDER_NAMES}) == 1
    assert out[LADDER_NAMES[0]]["u4"].source == "ladder-undocumented"


def test_ladder_summaries_are_deterministic() -> None:
    a = ladder_summaries(LADDER_NAMES[3], UNITS, lambda u: [], Random(7))
    b = ladder_summaries(LADDER_NAMES[3], UNITS, lambda u: [], Random(7))
    assert a == b


def test_ladder_model_ids() -> None:
    assert LADDER_MODEL_IDS == (*LEVEL_IDS, TWIN[0])
    assert is_ladder_model("validate/l2-generic")
    assert is_ladder_model("builtin/docstring~validate/l1-twin")
    assert not is_ladder_model("builtin/docstring")


def test_with_ladder_keeps_the_configured_or_default_models(tmp_path: Path) -> None:
    settings = load_settings(None, base_dir=tmp_path, families=BUILTIN_FAMILIES)
    ids = [m.id for m in with_ladder(settings).test_models()]
    assert set(ids) == set(DEFAULT_MODELS) | set(LADDER_MODEL_IDS)
    chosen = load_settings(None, {"models.test": [{"provider": "openai", "model": "gpt-4o"}]},
                           base_dir=tmp_path, families=BUILTIN_FAMILIES)
    ids = [m.id for m in with_ladder(with_ladder(chosen)).test_models()]
    assert sorted(ids) == sorted(["openai/gpt-4o", *LADDER_MODEL_IDS])
    ladder = {m.id: m for m in with_ladder(chosen).test_models()}
    assert ladder["validate/l1-twin"].provider == "builtin"
    assert ladder["validate/l1-twin"].model_name == "validate-l1-twin"


class _Ctx:
    all_units = UNITS
    unit_ids = frozenset(u.id for u in UNITS)


@pytest.mark.parametrize(("models", "unit_id", "kept"), [
    (("builtin/docstring",), "u4", True),
    (("validate/l1-docstring",), "u1", True),
    (("validate/l1-docstring",), "u4", False),  # no docstring: not a ladder unit
    (("validate/l1-docstring", "validate/l3-boilerplate"), "u2", True),
    (("builtin/docstring", "validate/l3-boilerplate"), "u2", False),  # never against a real model
    (("validate/l2-generic",), "task-17", True),  # task items are not narrowed
])
def test_keep_item(models: tuple[str, ...], unit_id: str, kept: bool) -> None:
    item = MatrixItem(evaluator="contrastive/embedding", family="contrastive", unit_id=unit_id,
                      models=models)
    # a ladder item is known by its models' ids (the ladder's set), not by a prefix
    assert item.ladder is any(m.startswith("validate/") for m in models)
    assert keep_item(item, _Ctx(), documented_ids(UNITS)) is kept  # type: ignore[arg-type]


def test_a_model_named_like_the_ladder_is_not_the_ladder() -> None:
    item = MatrixItem(evaluator="contrastive/embedding", family="contrastive", unit_id="u1",
                      models=("validate/my-model",))
    assert not item.ladder and not is_ladder_model("validate/my-model")
    assert item.model_id == "validate/my-model"
    pair = MatrixItem(evaluator="judge/pairwise", family="judge", unit_id="u1",
                      models=("a/x", "b/y"), variant="j")
    assert pair.model_id == "a/x~b/y" and pair.test_id == "u1-a/x~b/y-judge/pairwise-j"
