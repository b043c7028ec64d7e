"""Several deployments (endpoints or keys) of one model behind litellm's Router.

A model entry with ``deployments:`` in ``summarybench.yaml`` is served by a
``litellm.Router`` of the session (``endpoints.py``) whose model group is the model's id:
each call goes to one deployment, the Router spreads calls over them (weighted by their
``requestsPerMinute``) and, when any deployment has a limit, keeps each within its own
requests and tokens per minute. The Router's own retries are off, as for a plain call: a
failed attempt comes back to ``client.py``, which classifies it and retries, and the Router
cools the failing deployment down so the retry goes elsewhere. The response cache does not
depend on the deployment that answered (the same model answers the same request), and
keys are read from environment variables named in the configuration, never written in it.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import Field, field_validator, model_validator

from ..schemas import ModelConfig
from ..schemas._base import SBModel
from ..schemas.config import check_endpoint
from .providers import PLACEHOLDER_KEY, api_key, endpoint, litellm, litellm_model_name
from .redaction import register_secret_env


class Deployment(SBModel):
    """One place a model is served: an endpoint, a key, and that deployment's limits."""

    api_endpoint: str | None = None
    """Base URL of this deployment (default: the model's ``apiEndpoint`` or the provider's)."""
    api_key_env: str | None = None
    """Environment variable holding this deployment's key (default: the provider's)."""
    model: str | None = None
    """The provider's model name at this deployment, when it differs (an Azure deployment
    name, say); default: the model entry's ``model``."""
    requests_per_minute: float | None = Field(default=None, gt=0)
    """This deployment's request limit, kept by the Router."""
    tokens_per_minute: float | None = Field(default=None, gt=0)
    """This deployment's token limit, kept by the Router."""

    @field_validator("api_endpoint")
    @classmethod
    def _endpoint(cls, v: str | None) -> str | None:
        return check_endpoint(v)

    @field_validator("api_key_env")
    @classmethod
    def _secret(cls, name: str | None) -> str | None:
        # Reading the configuration is when we learn which variables hold keys: from now
        # on their values are masked in everything this process writes, whatever the name.
        register_secret_env(name)
        return name


class RoutedModelConfig(ModelConfig):
    """A ``ModelConfig`` served by several deployments (see the module docstring).

    Stored and reported as its ``ModelConfig`` fields: deployments are how a model is
    reached, not which model it is.
    """

    deployments: list[Deployment] = Field(min_length=1)

    @model_validator(mode="after")
    def _routable(self) -> RoutedModelConfig:
        if self.provider == "builtin":
            raise ValueError("built-in summarizers have no deployments")
        return self


def model_list(model: RoutedModelConfig) -> list[dict[str, Any]]:
    """The Router's ``model_list`` for ``model``: one entry per deployment.

    Raises ValueError naming a key variable that is not set.
    """
    entries = []
    for i, dep in enumerate(model.deployments):
        target = model.model_copy(update={"model_name": dep.model or model.model_name,
                                          "api_endpoint": dep.api_endpoint
                                          or model.api_endpoint})
        params: dict[str, Any] = {"model": litellm_model_name(target),
                                  "timeout": model.timeout_s, "max_retries": 0}
        base = endpoint(target)
        if base is not None:
            params["api_base"] = base
        if dep.api_key_env is not None:
            key = os.environ.get(dep.api_key_env)
            if not key:
                raise ValueError(f"{dep.api_key_env} is not set; export it to call "
                                 f"deployment {i + 1} of {model.id}")
            params["api_key"] = key
        else:
            key = api_key(target)
            if key is not None:
                params["api_key"] = key
            elif model.provider == "local":
                params["api_key"] = PLACEHOLDER_KEY
        if dep.requests_per_minute is not None:
            params["rpm"] = dep.requests_per_minute
        if dep.tokens_per_minute is not None:
            params["tpm"] = dep.tokens_per_minute
        entries.append({"model_name": model.id, "litellm_params": params,
                        "model_info": {"id": f"{model.id}#{i + 1}"}})
    return entries


def make_router(model: RoutedModelConfig, entries: list[dict[str, Any]]) -> Any:
    """A new Router of ``model`` over ``entries`` (its ``model_list``); a session keeps one
    per model and set of deployments (``Endpoints.router``)."""
    limited = any(d.requests_per_minute or d.tokens_per_minute for d in model.deployments)
    return litellm().Router(
        model_list=entries, num_retries=0, max_fallbacks=0,
        timeout=model.timeout_s, allowed_fails=1, cooldown_time=5.0,
        routing_strategy="usage-based-routing-v2" if limited else "simple-shuffle")


def routed_request(model: RoutedModelConfig, messages: list[dict[str, str]],
                   sent: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """The keyword arguments of ``router.completion`` / ``acompletion``: the model group,
    the messages and the parameters; endpoints and keys are the deployments'."""
    return {"model": model.id, "messages": messages, "timeout": timeout_s, **sent}
