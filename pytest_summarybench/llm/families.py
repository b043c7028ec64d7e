"""Model families, for the rule that no model is judged (or assisted) by its own family.

A family is inferred from the provider and the model name by ordered patterns; a model's
``family`` field in the config wins, and ``extra`` lets a config add patterns. A name may
match several families (``deepseek-r1-distill-llama-70b`` is DeepSeek's distillation into
a Llama): ``families_of`` returns them all, and two models are of the same family when
their sets meet, as in docs/methods.md#judge-selection where a name is checked against every
family's list.
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
    "cohere": (r"command-r", r"command-a", r"cohere", r"\baya\b"),
    "microsoft": (r"\bphi-?\d",),
    "moonshot": (r"kimi", r"moonshot"),
    "zhipu": (r"chatglm", r"(^|/|-)glm-?\d", r"zhipu"),
    "nvidia": (r"nemotron", r"nvidia"),
    "ibm": (r"granite",),
    "amazon": (r"(^|/|\.)nova-", r"titan", r"amazon"),
    "01-ai": (r"(^|/)yi-",),
    "ai21": (r"jamba",),
}

#: Providers whose name alone says the family (they only serve their own models).
PROVIDER_FAMILIES = {"anthropic": "anthropic", "openai": "openai", "google": "google"}


def families_of(model: ModelConfig,
                extra: Mapping[str, Sequence[str]] | None = None) -> frozenset[str]:
    """Every family ``model`` belongs to (``extra`` patterns count as much as the table).

    A configured ``family`` (in any case) is the only one; ``builtin`` models are their
    own family; a name no pattern matches falls back to its provider's family, else to a
    family of its own (``unknown:<id>``), which shares nothing with any other model.
    """
    if model.family:
        # Compared with the table's lower-case names: ``family: OpenAI`` is openai.
        return frozenset({model.family.lower()})
    if model.provider == "builtin":
        return frozenset({"builtin"})
    name = model.model_name.lower()
    found: list[str] = []
    for table in (extra or {}, FAMILY_PATTERNS):
        for family, patterns in table.items():
            if family not in found and any(re.search(p, name, re.IGNORECASE)
                                           for p in patterns):
                found.append(family)
    if not found and model.provider in PROVIDER_FAMILIES:
        found.append(PROVIDER_FAMILIES[model.provider])
    return frozenset(found or [f"unknown:{model.id}"])


def family_of(model: ModelConfig, extra: Mapping[str, Sequence[str]] | None = None) -> str:
    """The model's main family: the first that matches (``extra`` first, then the table)."""
    if model.family:
        return model.family.lower()
    if model.provider == "builtin":
        return "builtin"
    name = model.model_name.lower()
    for table in (extra or {}, FAMILY_PATTERNS):
        for family, patterns in table.items():
            if any(re.search(p, name, re.IGNORECASE) for p in patterns):
                return family
    if model.provider in PROVIDER_FAMILIES:
        return PROVIDER_FAMILIES[model.provider]
    return f"unknown:{model.id}"


def same_family(a: ModelConfig, b: ModelConfig,
                extra: Mapping[str, Sequence[str]] | None = None) -> bool:
    """True when ``a`` and ``b`` are the same model or share any family."""
    return a.id == b.id or bool(families_of(a, extra) & families_of(b, extra))
