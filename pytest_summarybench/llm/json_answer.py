"""The first JSON object in a model's answer, read in linear time with bounded depth, size
and numbers: the safe way to parse model output as JSON.

Models wrap their JSON in code fences and prose, so the object has to be found before it
is decoded; trying ``json.JSONDecoder.raw_decode`` at every ``{`` is quadratic (200 KB of
``{`` took 16.7 s), Python's json module recurses (JSON nested 100,000 deep raised
RecursionError) and turns a 5,000-digit integer into a ValueError of its own. Here one
scan over the text finds every balanced ``{...}`` (brackets inside JSON strings do not
count), refuses nesting deeper than ``max_depth`` before anything is decoded, and decodes
the candidates in order within a budget proportional to the text, with numbers of at most
``MAX_NUMBER_CHARS`` characters and no NaN or Infinity. Every refusal is a
``JSONAnswerError`` saying why.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..core.errors import RunError

#: Longest answer read (characters); a verdict or a JSON reply is far shorter.
MAX_ANSWER_CHARS = 100_000
#: Deepest nesting of objects and arrays accepted.
MAX_DEPTH = 64
#: Longest number literal accepted (sign, digits, point and exponent).
MAX_NUMBER_CHARS = 100

_SIGNIFICANT = re.compile(r'[{}\[\]"\\]')
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_FENCE = "```"


class JSONAnswerError(RunError, ValueError):
    """The answer holds no JSON object we are willing to read; says why."""


def _number(kind: type[int] | type[float]) -> Any:
    def parse(literal: str) -> int | float:
        if len(literal) > MAX_NUMBER_CHARS:
            raise JSONAnswerError(f"a number in the JSON has {len(literal):,} characters "
                                  f"(at most {MAX_NUMBER_CHARS})")
        return kind(literal)
    return parse


def _constant(name: str) -> float:
    raise JSONAnswerError(f"the JSON holds {name}, which is not a number")


_DECODER = json.JSONDecoder(parse_int=_number(int), parse_float=_number(float),
                            parse_constant=_constant)


def _fenced(text: str) -> list[str]:
    """The contents of the text's code fences (```json ... ```), found with ``str.find``
    (a regular expression with a lazy ``.*?`` is quadratic on unclosed fences)."""
    chunks = []
    at = text.find(_FENCE)
    while at != -1:
        line_end = text.find("\n", at + len(_FENCE))
        if line_end == -1:
            break
        label = text[at + len(_FENCE):line_end].strip()
        close = text.find(_FENCE, line_end + 1)
        if close == -1:
            break
        if label in ("", "json", "JSON"):
            chunks.append(text[line_end + 1:close])
        at = text.find(_FENCE, close + len(_FENCE))
    return chunks


def _objects(text: str, max_depth: int) -> list[tuple[int, int]]:
    """(start, end) of every balanced ``{...}`` in ``text``, by start; one pass."""
    spans: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    in_string = False
    skip_to = 0
    for m in _SIGNIFICANT.finditer(text):
        pos = m.start()
        if pos < skip_to:
            continue  # the character after a backslash in a string
        char = m.group()
        if in_string:
            if char == "\\":
                skip_to = pos + 2
            elif char == '"':
                in_string = False
            continue
        if not stack:
            # Prose: only an opening brace matters (quotes and brackets are just text).
            if char == "{":
                stack.append((char, pos))
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            stack.append((char, pos))
            if len(stack) > max_depth:
                raise JSONAnswerError(f"the JSON nests deeper than {max_depth} levels")
        elif char in "}]":
            opener, start = stack.pop()
            if opener == "{" and char == "}":
                spans.append((start, pos + 1))
    spans.sort()
    return spans


def _decode(chunk: str) -> Any:
    try:
        return _DECODER.decode(chunk)
    except JSONAnswerError:
        raise
    except (ValueError, RecursionError):
        fixed = _TRAILING_COMMA.sub(r"\1", chunk)
        if fixed == chunk:
            raise
        return _DECODER.decode(fixed)


def extract_json_object(text: str, *, max_chars: int = MAX_ANSWER_CHARS,
                        max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """The first JSON object in ``text``: inside a code fence, or amid prose (trailing
    commas forgiven). Raises ``JSONAnswerError`` when there is none, or when the text is
    longer than ``max_chars``, nests deeper than ``max_depth`` or holds absurd numbers."""
    if len(text) > max_chars:
        raise JSONAnswerError(f"the reply is {len(text):,} characters, more than the "
                              f"{max_chars:,} read")
    refusal: JSONAnswerError | None = None
    budget = 8 * len(text) + 4096  # characters decoded, all candidates together
    for chunk in [*_fenced(text), text]:
        for start, end in _objects(chunk, max_depth):
            if budget <= 0:
                break
            budget -= end - start
            try:
                obj = _decode(chunk[start:end])
            except JSONAnswerError as exc:
                refusal = refusal or exc
                continue
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict):
                return obj
    if refusal is not None:
        raise refusal
    if not text.strip():
        raise JSONAnswerError("the reply is empty")
    raise JSONAnswerError("the reply contains no JSON object")


def parse_json_object(text: str) -> dict:
    """The JSON object in a model's answer: bare, or in a fenced block, or the outermost
    braces of a chattier answer. ValueError when there is none.

    How query writing (retrieval) and ``contrastive/llm`` read their answers. It is not
    bounded as ``extract_json_object`` is; moving them to that changes which object a
    chatty answer yields and the error text, so it is a change of its own."""
    candidates = [text.strip()]
    fenced = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.DOTALL)
    if fenced:
        candidates.append(fenced.group(1))
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            return data
    raise ValueError(f"no JSON object in the answer: {text[:200]!r}")
