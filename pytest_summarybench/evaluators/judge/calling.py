"""Asking a judge: temperature 0, structured output where the provider has it, a bounded
retry on an answer that cannot be read, and one error type that names the judge.

Every call goes through ``llm.complete`` with the run's store as cache and the prompt
version as tag, so a re-run pays nothing. An answer that stays invalid after the retries
raises ``JudgeError`` carrying the raw text; the evaluators turn it into a failed test
whose recorded reason starts with ``judge <id> <kind>:`` (``parse_judge_error`` reads it
back for the per-judge error rates).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from ...llm.structured import StructuredMode, response_format
from ...schemas import ModelConfig
from ...store import Store
from .verdicts import InvalidVerdict

V = TypeVar("V")
ErrorKind = Literal["invalid_output", "call_failed"]

#: Sent after an answer that could not be read (not a spec prompt: the spec has none).
RETRY_PROMPT = ("Your previous reply could not be used: {error}. Reply again with only the "
                "JSON object described under Response Format, and nothing else.")
#: How much of a raw answer an error message keeps.
MAX_RAW_CHARS = 2000
_ERROR_RE = re.compile(r"^judge (\S+) (invalid_output|call_failed): ")


class JudgeError(Exception):
    """A judge gave no usable verdict: its output stayed invalid, or the call failed."""

    def __init__(self, judge_id: str, kind: ErrorKind, reason: str, *, raw: str = "",
                 attempts: int = 0) -> None:
        self.judge_id = judge_id
        self.kind: ErrorKind = kind
        self.reason = reason
        self.raw = raw
        """The last answer as the judge wrote it ("" when no answer came back)."""
        self.attempts = attempts
        message = f"judge {judge_id} {kind}: {reason}"
        if raw:
            message += f"; raw output: {raw[:MAX_RAW_CHARS]!r}"
        super().__init__(message)


def parse_judge_error(message: str | None) -> tuple[str, ErrorKind] | None:
    """(judge id, kind) from a recorded error made from a ``JudgeError``; None otherwise
    (a missing summary, say, is nobody's judge error)."""
    m = _ERROR_RE.match(message or "")
    return (m.group(1), m.group(2)) if m else None  # type: ignore[return-value]


@dataclass(frozen=True)
class Answer(Generic[V]):
    """A judge's usable verdict and what it took to get it."""

    verdict: V
    raw: str
    """The answer the verdict was read from."""
    answers: int
    """Answers read (1 unless the first could not be read)."""
    cost: float | None
    cached: bool
    """True when every answer came from the response cache."""
    response_format: str
    """``json_schema``, ``json_object`` or ``none``: what was asked of the provider."""


class JudgeClient:
    """Asks judges for verdicts; one per evaluator instance (so per process).

    Remembers which judges refused a ``response_format`` so that they are not asked with
    one again in this process.
    """

    def __init__(self, store: Store | None, *, structured: StructuredMode = "auto",
                 parse_retries: int = 1) -> None:
        self.store = store
        self.structured: StructuredMode = structured
        self.parse_retries = parse_retries
        self._refused_format: set[str] = set()

    def ask(self, judge: ModelConfig, messages: list[dict[str, str]],
            parse: Callable[[str], V], *, tag: str, schema_name: str,
            schema: dict[str, Any]) -> Answer[V]:
        """The judge's verdict on ``messages``, read by ``parse``.

        Raises ``JudgeError`` when the call fails or no answer can be read after
        ``parse_retries`` further tries.
        """
        fmt = None if judge.id in self._refused_format else response_format(
            judge, self.structured, schema_name, schema)
        convo = list(messages)
        problems: list[str] = []
        costs: list[float | None] = []
        cached = True
        raw = ""
        for _ in range(self.parse_retries + 1):
            completion, fmt = self._complete(judge, convo, fmt, tag, len(problems))
            costs.append(completion.cost)
            cached = cached and completion.cached
            raw = completion.text
            try:
                verdict = parse(raw)
            except InvalidVerdict as exc:
                problems.append(str(exc))
                convo = [*convo, {"role": "assistant", "content": raw or "(empty reply)"},
                         {"role": "user", "content": RETRY_PROMPT.format(error=exc)}]
                continue
            known = [c for c in costs if c is not None]
            return Answer(verdict=verdict, raw=raw, answers=len(costs),
                          cost=sum(known) if len(known) == len(costs) else None,
                          cached=cached, response_format=_format_name(fmt))
        tries = len(problems)
        raise JudgeError(judge.id, "invalid_output",
                         f"no valid verdict in {tries} answer{'s' if tries != 1 else ''} "
                         f"({' | '.join(problems)})", raw=raw, attempts=tries)

    def _complete(self, judge: ModelConfig, convo: list[dict[str, str]],
                  fmt: dict[str, Any] | None, tag: str, answered: int
                  ) -> tuple[Any, dict[str, Any] | None]:
        from ...llm import ModelCallError, complete

        try:
            return complete(judge, convo, response_format=fmt, cache=self.store,
                            cache_tag=tag, temperature=0.0), fmt
        except ModelCallError as exc:
            if fmt is not None and exc.status == 400:
                # Some servers refuse response_format; the prompt asks for JSON anyway.
                self._refused_format.add(judge.id)
                try:
                    return complete(judge, convo, response_format=None, cache=self.store,
                                    cache_tag=tag, temperature=0.0), None
                except ModelCallError as again:
                    exc = again
            raise JudgeError(judge.id, "call_failed", exc.reason,
                             attempts=answered) from None


def _format_name(fmt: dict[str, Any] | None) -> str:
    return "none" if fmt is None else str(fmt.get("type", "none"))
