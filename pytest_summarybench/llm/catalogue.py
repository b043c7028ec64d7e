"""Whether a hosted model's name is one litellm knows, with the nearest names when not.

A misspelt name (``openai/gtp-4o``) is otherwise found only when its first call fails,
after the other models have been paid for. It is a warning, never a refusal: providers
publish models before litellm's bundled list has them. The list is litellm's own
(``model_cost`` and ``models_by_provider``), read offline from the copy bundled with the
package (``providers.litellm`` sets ``LITELLM_LOCAL_MODEL_COST_MAP``).
"""

from __future__ import annotations

import difflib
from functools import lru_cache

from ..schemas import ModelConfig
from .providers import LITELLM_PREFIX, litellm

#: Providers whose models litellm lists; ``local``, ``ollama`` and ``builtin`` serve
#: whatever their owner installed, so there is nothing to check them against.
HOSTED: tuple[str, ...] = ("anthropic", "openai", "google", "openrouter")

@lru_cache(maxsize=8)
def known_names(prefix: str) -> frozenset[str]:
    """The model names litellm lists under its provider ``prefix``, without the prefix."""
    module = litellm()
    names = set(module.models_by_provider.get(prefix, ()))
    names.update(key for key, info in module.model_cost.items()
                 if isinstance(info, dict) and info.get("litellm_provider") == prefix)
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
