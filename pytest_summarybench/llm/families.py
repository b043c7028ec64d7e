"""Model families, for the rule that no model is judged (or assisted) by its own family.

A family is inferred from the provider and the model name by ordered patterns; a model's
``family`` field in the config wins, and ``extra`` lets a config add patterns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..schemas import ModelConfig

#: family -> regular expressions matched (case-insensitively) against the model name.
FAMILY_PATTERNS: dict[str, tuple[str, ...]] = {
    "anthropic": (r"claude", r"anthropic"),
    "openai": (r"\bgpt", r"(^|/)o[1-9](-|$)", r"chatgpt", r"davinci", r"text-embedding",
               r"openai"),
    "google": (r"gemini", r"gemma", r"palm", r"bison", r"google"),
    "meta": (r"llama", r"meta-"),
    "mistral": (r"mistral", r"mixtral", r"codestral", r"ministral", r"pixtral",
                r"devstral", r"magistral"),
    "qwen": (r"qwen", r"qwq"),
    "deepseek": (r"deepseek",),
    "xai": (r"grok",),
    "cohere": (r"command-r", r"cohere"),
    "microsoft": (r"\bphi-?\d",),
}

#: Providers whose name alone says the family (they only serve their own models).
PROVIDER_FAMILIES = {"anthropic": "anthropic", "openai": "openai", "google": "google"}


def family_of(model: ModelConfig, extra: Mapping[str, Sequence[str]] | None = None) -> str:
    """The model's family; ``builtin`` models and unknown names are their own family."""
    if model.family:
        return model.family
    if model.provider == "builtin":
        return "builtin"
    name = model.model_name.lower()
    tables: list[Mapping[str, Sequence[str]]] = [extra or {}, FAMILY_PATTERNS]
    for table in tables:
        for family, patterns in table.items():
            if any(re.search(p, name) for p in patterns):
                return family
    if model.provider in PROVIDER_FAMILIES:
        return PROVIDER_FAMILIES[model.provider]
    return f"unknown:{model.id}"


def same_family(a: ModelConfig, b: ModelConfig,
                extra: Mapping[str, Sequence[str]] | None = None) -> bool:
    """True when ``a`` and ``b`` come from the same family (or are the same model)."""
    return a.id == b.id or family_of(a, extra) == family_of(b, extra)
