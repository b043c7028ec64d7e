"""The persistent response cache, a table in the run's SQLite store (``llm_cache``).

A response is written the moment it arrives (one short transaction), so a run killed
halfway loses nothing it paid for. The key covers everything that can change the answer:
provider, model, endpoint, sampling parameters, the response format, the caller's tag
(e.g. the prompt version) and a hash of the full message text. Keys never include key
material, and failures are never written; nor are answers ``llm/answers.py`` refuses.

An answer that arrived but that its reader could not use (a judge's verdict still
unreadable after the re-asks, helper queries with no JSON) is cached like any other, so
that the session's own readers (the tests, in whichever process) find the answer the
controller fetched and nobody pays for it twice; the reader then marks it unusable by
that session (``cache_reject``). For any later session the entry is a miss: the call is
made again and its answer replaces the entry. (An error is never cached, so a failed call
is asked again too; an unusable answer is no more final than a failure.)
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping
from typing import Any

from ..schemas import ModelConfig
from ..store import Store, dumps
from .answers import answer_problem
from .types import Completion

CACHE_FORMAT = 1


def cache_key(model: ModelConfig, messages: list[dict[str, str]], params: Mapping[str, Any],
              tag: str, endpoint: str | None) -> str:
    """The cache key of a request (a sha256 hex digest)."""
    text_hash = hashlib.sha256(dumps(messages).encode()).hexdigest()
    payload = dumps({"format": CACHE_FORMAT, "provider": model.provider,
                     "model": model.model_name, "endpoint": endpoint, "params": dict(params),
                     "tag": tag, "messages": text_hash})
    return hashlib.sha256(payload.encode()).hexdigest()


def cache_get(store: Store, key: str, *, max_tokens: object = None,
              session: str = "") -> Completion | None:
    """The cached completion for ``key``, marked ``cached``; None on a miss.

    An entry that is not a usable answer is a miss: text no UTF-8 writer accepts, or
    longer than ``max_tokens`` allows (as older versions could cache), or an answer a
    reader of another session than ``session`` could not use (``cache_reject``; with no
    ``session``, one any reader could not use). The call is made again and its answer
    replaces the entry.
    """
    found = store.responses.get(key)
    if found is None:
        return None
    text, unusable_in = found
    if unusable_in is not None and (not session or unusable_in != session):
        return None
    try:
        completion = Completion.from_cache(text)
    except ValueError:
        return None
    if answer_problem(completion.text, max_tokens) is not None:
        return None
    return completion


def cache_reject(store: Store, keys: Iterable[str], *, session: str = "") -> None:
    """Mark the cached answers under ``keys`` as answers their reader could not use:
    ``session`` still reads them (its tests read what its controller read), a later
    session asks again (see the module docstring)."""
    store.responses.mark_unusable(keys, session)


def cache_put(store: Store, key: str, model_id: str, tag: str, completion: Completion) -> None:
    """Write a successful completion at once (replacing an older one for the same key)."""
    store.responses.put(key, model_id, tag, completion.to_json(), time.time())
