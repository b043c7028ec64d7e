"""Prices per token: the model's override in the config, else litellm's price table.

A price that is unknown (a model the table does not map, or one it prices at 0.0, which
for a paid API means "not recorded") is ``None`` and shows as "unknown", never as $0.
Built-in summarizers are free and known: exactly 0. A price set explicitly in the config
is trusted, 0.0 included (a self-hosted model).
"""

from __future__ import annotations

from functools import lru_cache

from ..schemas import ModelConfig
from .providers import litellm, litellm_model_name

PER_MILLION = 1_000_000


@lru_cache(maxsize=256)
def _table_prices(name: str) -> tuple[float | None, float | None]:
    try:
        info = litellm().get_model_info(model=name)
    except Exception:  # litellm raises its own "not mapped" errors and plain ones
        return None, None
    inp = info.get("input_cost_per_token")
    out = info.get("output_cost_per_token")
    if not inp and not out:  # mapped without prices: unknown, not free
        return None, None
    return (float(inp) if inp is not None else None,
            float(out) if out is not None else None)


def token_prices(model: ModelConfig) -> tuple[float | None, float | None]:
    """USD per input token and per output token (each None when unknown)."""
    if model.provider == "builtin":
        return 0.0, 0.0
    inp = out = None
    if model.input_cost_per_million is None or model.output_cost_per_million is None:
        inp, out = _table_prices(litellm_model_name(model))
    if model.input_cost_per_million is not None:
        inp = model.input_cost_per_million / PER_MILLION
    if model.output_cost_per_million is not None:
        out = model.output_cost_per_million / PER_MILLION
    return inp, out


def call_cost(model: ModelConfig, input_tokens: int, output_tokens: int) -> float | None:
    """USD for a call with these token counts; None when either price is unknown."""
    inp, out = token_prices(model)
    if inp is None or out is None:
        return None
    return input_tokens * inp + output_tokens * out


def price_known(model: ModelConfig) -> bool:
    inp, out = token_prices(model)
    return inp is not None and out is not None
