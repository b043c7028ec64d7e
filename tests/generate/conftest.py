"""Fixtures for the generation tests: a run context over hand-written units in a temp store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.context import RunContext
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.schemas import (
    CodeUnit,
    Parameter,
    UnitMetadata,
    UnitRelationships,
)
from pytest_summarybench.settings import load_settings
from pytest_summarybench.store import Store


def make_units(n_functions: int = 3) -> list[CodeUnit]:
    """A small Python codebase: a file, a class with two methods, and free functions."""
    units = [
        CodeUnit(
            id="u-file", path="shop/cart.py", name="cart.py", type="file", language="python",
            content="import decimal\n\nclass Cart:\n    ...\n\ndef total(cart):\n    ...\n",
            docstring="Shopping cart model and totals.",
            metadata=UnitMetadata(start_line=1, end_line=7, exports=["Cart", "total"]),
            relationships=UnitRelationships(child_ids=["u-class", "u-fn-0"])),
        CodeUnit(
            id="u-class", path="shop/cart.py", name="Cart", type="class", language="python",
            content="class Cart:\n    def add(self, item):\n        self.items.append(item)\n"
                    "    def clear(self):\n        self.items = []\n",
            docstring=None,
            metadata=UnitMetadata(start_line=3, end_line=7, signature="class Cart:"),
            relationships=UnitRelationships(parent_id="u-file",
                                            child_ids=["u-m-add", "u-m-clear"])),
        CodeUnit(
            id="u-m-add", path="shop/cart.py", name="Cart.add", type="method",
            language="python",
            content="def add(self, item):\n    self.items.append(item)\n    self.dirty = True\n",
            docstring="Put an item in the cart.",
            metadata=UnitMetadata(start_line=4, end_line=6, signature="def add(self, item):",
                                  parameters=[Parameter(name="item", type="Item")]),
            relationships=UnitRelationships(parent_id="u-class")),
        CodeUnit(
            id="u-m-clear", path="shop/cart.py", name="Cart.clear", type="method",
            language="python",
            content="def clear(self):\n    self.items = []\n    self.dirty = True\n",
            metadata=UnitMetadata(start_line=7, end_line=9, signature="def clear(self):",
                                  parameters=[]),
            relationships=UnitRelationships(parent_id="u-class")),
    ]
    for i in range(n_functions):
        units.append(CodeUnit(
            id=f"u-fn-{i}", path="shop/cart.py", name=f"totalPrice{i}", type="function",
            language="python",
            content=(f"@cached\ndef totalPrice{i}(cart: Cart, vat_rate: float = 0.2) -> Decimal:\n"
                     f"    subtotal = sum(item.price for item in cart.items)\n"
                     f"    return subtotal * (1 + vat_rate) + {i}\n"),
            docstring=f"Total of the cart including VAT ({i})." if i % 2 == 0 else None,
            metadata=UnitMetadata(
                start_line=10 + i, end_line=13 + i,
                signature=f"def totalPrice{i}(cart: Cart, vat_rate: float = 0.2) -> Decimal:",
                parameters=[Parameter(name="cart", type="Cart"),
                            Parameter(name="vat_rate", type="float", optional=True,
                                      default_value="0.2")],
                return_type="Decimal")))
    return units


MakeCtx = Callable[..., RunContext]


@pytest.fixture
def make_ctx(tmp_path: Path) -> MakeCtx:
    """Build a RunContext over ``units`` (default: ``make_units()``) and ``models``
    (dicts of the YAML model entry), sharing one store file per test."""
    store_path = tmp_path / "store.sqlite"

    def build(models: list[dict[str, Any]], units: list[CodeUnit] | None = None,
              run_id: str = "run-1", **overrides: Any) -> RunContext:
        units = make_units() if units is None else units
        settings = load_settings(None, {"models.test": models,
                                        "output.directory": str(tmp_path / "out"),
                                        **overrides}, base_dir=tmp_path, families=BUILTIN_FAMILIES)
        store = Store(store_path)
        store.save_units(run_id, units, {u.id for u in units})
        return RunContext(settings, store, run_id)

    return build


@pytest.fixture
def builtin_models() -> list[dict[str, Any]]:
    """The five built-in models as YAML model entries."""
    return [{"provider": "builtin", "model": name}
            for name in ("docstring", "signature", "lead", "identifiers", "shuffled")]


@pytest.fixture
def unit_factory() -> Callable[..., list[CodeUnit]]:
    return make_units



@pytest.fixture
def sentinel_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """A fake OpenAI key whose value must never be written anywhere by a run."""
    key = "sk-SENTINEL-3f9c2a7e51d84b06"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    return key


def openai_entry(server: Any, model: str = "gpt-4o", **extra: Any) -> dict[str, Any]:
    """A YAML model entry for an OpenAI model served by the fake server."""
    return {"provider": "openai", "model": model, "apiEndpoint": server.base_url, **extra}


@pytest.fixture
def openai_model() -> Callable[..., dict[str, Any]]:
    return openai_entry
