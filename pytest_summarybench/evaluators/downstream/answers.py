"""Reading the task model's answers: JSON choices (bug localisation, function selection) and
completed code (completion; docs/methods.md#downstream-family).

Choice answers are matched to a candidate leniently but unambiguously: the exact
candidate, else the one candidate it names up to case, quotes, a leading ``./`` or a
path or qualified-name prefix (``pricing.py`` for ``python/bookshop/pricing.py``,
``reserve_many`` for ``Inventory.reserve_many``). An answer that fits several candidates
or none is wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ...core.errors import RunError

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+#.-]*)[ \t]*\n(.*?)```", re.S)


class AnswerError(RunError, ValueError):
    """The answer could not be read; the message quotes what was wrong."""


@dataclass(frozen=True)
class Choice:
    """A parsed choice answer."""

    answer: str
    """What the model named (``predicted_file`` / ``selected_function``)."""
    confidence: str | None
    reasoning: str


def _json_object(text: str) -> dict:
    candidates = [body for _, body in _FENCE.findall(text)] + [text]
    for chunk in candidates:
        start, end = chunk.find("{"), chunk.rfind("}")
        if start == -1 or end <= start:
            continue
        try:
            data = json.loads(chunk[start:end + 1])
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            return data
    raise AnswerError(f"no JSON object in the answer: {text[:200]!r}")


def parse_choice(text: str, key: str) -> Choice:
    """The ``key`` field (``predicted_file`` or ``selected_function``) of a JSON answer."""
    data = _json_object(text)
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise AnswerError(f"the answer's JSON has no {key!r} string: {json.dumps(data)[:200]}")
    confidence = data.get("confidence")
    return Choice(answer=value.strip(),
                  confidence=str(confidence).lower() if confidence is not None else None,
                  reasoning=str(data.get("reasoning") or "")[:500])


def _norm(text: str) -> str:
    text = text.strip().strip("`'\"").strip()
    text = text.removeprefix("./")
    text = re.sub(r"\(\)$", "", text)
    return text.lower()


def match_candidate(answer: str, candidates: Sequence[str], separators: str = "/") -> str | None:
    """The candidate ``answer`` names (see the module doc), or None."""
    if answer in candidates:
        return answer
    wanted = _norm(answer)
    exact = [c for c in candidates if _norm(c) == wanted]
    if len(exact) == 1:
        return exact[0]
    suffix = [c for c in candidates
              if any(_norm(c).endswith(sep + wanted) for sep in separators)]
    if len(suffix) == 1:
        return suffix[0]
    # The model answered with more than the name (``path::name``, ``Class.method()``).
    longer = [c for c in candidates
              if any(wanted.endswith(sep + _norm(c)) for sep in (*separators, ":"))]
    return longer[0] if len(longer) == 1 else None


def extract_code(text: str, language: str = "") -> str:
    """The code of an answer: its first fenced block (preferring one tagged with
    ``language``), else the whole text."""
    blocks = _FENCE.findall(text)
    if not blocks:
        return text.strip("\n")
    for tag, body in blocks:
        if language and tag.lower() in {language.lower(), _SHORT.get(language, "")}:
            return body.rstrip("\n")
    return blocks[0][1].rstrip("\n")


_SHORT = {"python": "py", "typescript": "ts", "javascript": "js", "csharp": "cs",
          "kotlin": "kt", "ruby": "rb", "rust": "rs"}
