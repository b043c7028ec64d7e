"""What a model call returns, and how it fails."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace

from ..core.errors import RunError
from .redaction import scrub


@dataclass(frozen=True)
class Completion:
    """A model's answer to one request, with what it took and cost."""

    text: str
    """The assistant message."""
    input_tokens: int
    """Prompt tokens reported by the provider."""
    output_tokens: int
    """Completion tokens reported by the provider."""
    latency_ms: float
    """Wall time of the successful attempt (of the original call, for a cached answer)."""
    cost: float | None
    """USD from the price table or the model's override; None when the price is unknown."""
    model_version: str = ""
    """The model (snapshot) the provider says answered."""
    cached: bool = False
    """True when served from the response cache: no call was made, nothing was paid."""
    attempts: int = 1
    """Attempts the call took (retries included); 0 for a cached answer."""

    def to_json(self) -> str:
        data = asdict(self)
        data.pop("cached")
        data.pop("attempts")
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_cache(cls, text: str) -> Completion:
        """The completion a cache row holds; ValueError when the row is not one."""
        try:
            data = json.loads(text)
            completion = replace(cls(**data), cached=True, attempts=0)
        except (TypeError, RecursionError) as exc:  # a row of another shape
            raise ValueError(f"not a cached completion: {exc}") from None
        if not isinstance(completion.text, str):
            raise ValueError(f"not a cached completion: text is {type(completion.text)}")
        return completion


class ModelCallError(RunError, RuntimeError):
    """A model call failed for good (after retries, or at once when retrying cannot help).

    ``str()`` is one line naming the model and the reason, with no key material and no
    control characters, at most ``MAX_REASON_CHARS`` long.
    """

    MAX_REASON_CHARS = 1000

    def __init__(self, model_id: str, reason: str, *, retryable: bool = False,
                 status: int | None = None) -> None:
        self.model_id = model_id
        # Every failure of the model layer ends here, on its way to the terminal, the
        # store and the reports: the one place its text is made safe to write.
        self.reason = scrub(" ".join(reason[:4 * self.MAX_REASON_CHARS].split()),
                            max_chars=self.MAX_REASON_CHARS, one_line=True)
        self.retryable = retryable
        """Whether a later run may succeed (rate limits, outages, timeouts)."""
        self.status = status
        """The HTTP status, when the provider answered with one."""
        super().__init__(f"{model_id}: {self.reason}")
