"""``ModelRequest``: one model call described before it is made.

Every phase that calls models (generation, judges, contrastive matching, query writing,
downstream tasks, a hosted benchmark's calls) describes its calls with these, so that one
scheduler can run them concurrently at each provider's limit, the dry run can count and
price them from the very same descriptions, and a test can find the answer the scheduler
already fetched (by ``key``, the response cache's key).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..core.vocabulary import ROLES, Role
from ..schemas import ModelConfig

__all__ = ["ROLES", "ModelRequest", "Role"]


@dataclass(frozen=True)
class ModelRequest:
    """A model call: who is asked, what, with which parameters, and for what."""

    model: ModelConfig
    messages: tuple[tuple[str, str], ...]
    """(role, content) pairs of the chat."""
    role: Role
    phase: str
    """What the call is for, as progress and the dry run group it: ``generation``,
    ``judge/pointwise``, ``retrieval/queries``..."""
    tag: str = ""
    """Cache tag (the prompt version): a new prompt never reuses old answers."""
    params: tuple[tuple[str, Any], ...] = ()
    """Overrides of the model's sampling parameters (``temperature``, ``max_tokens``)."""
    response_format: str | None = None
    """The ``response_format`` asked of the provider, as JSON text (None: prompt only)."""
    output_tokens: int | None = field(default=None, compare=False)
    """Typical output tokens, for the dry run (default: the call's ``max_tokens``)."""
    timeout_s: float | None = field(default=None, compare=False)
    """Per-attempt timeout (None: the model's ``timeout_s``); not part of the request's
    identity: the answer is the same however long one may wait for it."""

    @classmethod
    def chat(cls, model: ModelConfig, messages: list[dict[str, str]], *, role: Role,
             phase: str, tag: str = "", response_format: dict[str, Any] | None = None,
             output_tokens: int | None = None, timeout_s: float | None = None,
             **params: Any) -> ModelRequest:
        """Build from chat messages (``[{"role": ..., "content": ...}]``)."""
        return cls(model=model, messages=tuple((m["role"], m["content"]) for m in messages),
                   role=role, phase=phase, tag=tag, params=tuple(sorted(params.items())),
                   response_format=None if response_format is None
                   else json.dumps(response_format, sort_keys=True),
                   output_tokens=output_tokens, timeout_s=timeout_s)

    @property
    def chat_messages(self) -> list[dict[str, str]]:
        return [{"role": r, "content": c} for r, c in self.messages]

    @property
    def format(self) -> dict[str, Any] | None:
        return None if self.response_format is None else json.loads(self.response_format)

    @property
    def overrides(self) -> dict[str, Any]:
        return dict(self.params)

    @cached_property
    def key(self) -> str:
        """The response cache's key of this call (what the model layer computes)."""
        from .client import request_key

        return request_key(self.model, self.chat_messages, response_format=self.format,
                           cache_tag=self.tag, **self.overrides)

    def followed_by(self, answer: str, message: str) -> ModelRequest:
        """This conversation continued: ``answer`` from the model, then ``message``."""
        return dataclasses.replace(self, messages=(
            *self.messages, ("assistant", answer or "(empty reply)"), ("user", message)))

    def without_format(self) -> ModelRequest:
        """The same call asking for no ``response_format`` (for a server refusing it)."""
        return dataclasses.replace(self, response_format=None)
