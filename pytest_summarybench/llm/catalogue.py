"""Whether a hosted model's name is one litellm knows, with the nearest names when not.

A misspelt name (``openai/gtp-4o``) is otherwise found only when its first call fails,
after the other models have been paid for. It is a warning, never a refusal: providers
publish models before litellm's bundled list has them. The list is litellm's own model
catalogue, the JSON file it ships and reads offline (``LITELLM_LOCAL_MODEL_COST_MAP``),
read here once and lazily, without importing litellm: the import took 12-20 s, and every
``summarybench add-model`` of a hosted name paid it for a dictionary look-up.
"""

from __future__ import annotations

import difflib
import json
from functools import lru_cache
from typing import Any

from ..schemas import ModelConfig
from .providers import LITELLM_PREFIX

#: Providers whose models litellm lists; ``local``, ``ollama`` and ``builtin`` serve
#: whatever their owner installed, so there is nothing to check them against.
HOSTED: tuple[str, ...] = ("anthropic", "openai", "google", "openrouter")
#: The catalogue litellm ships in its package (what ``litellm.model_cost`` is read from).
CATALOGUE_FILE = "model_prices_and_context_window_backup.json"
#: litellm lists some of a provider's models under a second provider name.
ALSO_LISTED_AS: dict[str, tuple[str, ...]] = {"openai": ("text-completion-openai",)}
#: A larger file is not the catalogue this module expects.
MAX_BYTES = 50_000_000


@lru_cache(maxsize=1)
def catalogue() -> dict[str, Any]:
    """litellm's model catalogue, read once from its package without importing it (empty
    when the file is not where litellm keeps it: the check is then skipped)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("litellm")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / CATALOGUE_FILE
        try:
            if path.stat().st_size > MAX_BYTES:
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return {}


@lru_cache(maxsize=8)
def known_names(prefix: str) -> frozenset[str]:
    """The model names litellm lists under its provider ``prefix``, without the prefix."""
    providers = {prefix, *ALSO_LISTED_AS.get(prefix, ())}
    names = {key for key, info in catalogue().items()
             if isinstance(info, dict) and info.get("litellm_provider") in providers}
    lead = prefix + "/"
    return frozenset(n[len(lead):] if n.startswith(lead) else n for n in names)


def unlisted_warning(model: ModelConfig) -> str | None:
    """A warning when ``model`` is served by a hosted provider's own endpoint and litellm
    does not list its name, with "did you mean" for the closest listed names; None when
    the name is listed or cannot be checked (a custom endpoint, several deployments, a
    fine-tuned model, a provider litellm lists nothing for)."""
    if model.provider not in HOSTED or model.api_endpoint:
        return None
    if getattr(model, "deployments", None):
        return None
    prefix = LITELLM_PREFIX[model.provider]
    name = model.model_name
    if name.startswith(prefix + "/"):
        name = name[len(prefix) + 1:]
    if name.startswith("ft:"):  # a fine-tuned model is never in a public list
        return None
    known = known_names(prefix)
    if not known or name in known:
        return None
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    hint = f"; did you mean {model.provider}/{close[0]}?" if close else "."
    return (f"{model.provider}/{model.model_name} is not in litellm's model list for "
            f"{model.provider}{hint} It is kept, as a new model may not be listed yet; a "
            f"wrong name fails at its first call.")
