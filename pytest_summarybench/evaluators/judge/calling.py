"""Asking a judge: temperature 0, structured output where the provider has it, a bounded
retry on an answer that cannot be read, and one error type that names the judge.

A ``JudgeQuestion`` is the conversation with a judge as a chain of ``ModelRequest``s: the
first ask, the same without ``response_format`` when the server refuses it (HTTP 400),
and a re-ask after an answer that cannot be read. ``walk`` says, from the answers so far,
which request comes next or how the question ended, so the controller's scheduler makes
the calls ahead of the tests and the test reads the same chain from the response cache
(``JudgeClient`` does both at once, for direct use). An answer that stays invalid after
the retries is a ``JudgeError`` carrying the raw text; the evaluators turn it into a
failed test whose recorded reason starts with ``judge <id> <kind>:``
(``parse_judge_error`` reads it back for the per-judge error rates), and mark the
unreadable answers unusable, so that a later session asks the question again instead of
reading them back from the response cache.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from ...core.errors import RunError
from ...llm.endpoints import Endpoints
from ...llm.requests import ModelRequest
from ...llm.structured import StructuredMode, response_format
from ...llm.types import Completion, ModelCallError
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


class JudgeError(RunError):
    """A judge gave no usable verdict: its output stayed invalid, or the call failed."""

    def __init__(self, judge_id: str, kind: ErrorKind, reason: str, *, raw: str = "",
                 attempts: int = 0, unusable: tuple[str, ...] = ()) -> None:
        self.judge_id = judge_id
        self.kind: ErrorKind = kind
        self.reason = reason
        self.raw = raw
        """The last answer as the judge wrote it ("" when no answer came back)."""
        self.attempts = attempts
        self.unusable = unusable
        """The request keys of the answers that could not be read (``invalid_output``):
        a later session asks them again (``evaluators.base.reject_answers``)."""
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


#: Typical output tokens of a verdict (reasoning included), for the dry run.
VERDICT_TOKENS = 250


@dataclass(frozen=True)
class JudgeQuestion(Generic[V]):
    """One question to a judge (see the module docstring)."""

    first: ModelRequest
    parse: Callable[[str], V]
    retries: int
    """Re-asks after an answer that cannot be read."""

    def walk(self, answers: Mapping[str, Completion | ModelCallError]
             ) -> tuple[ModelRequest | None, Answer[V] | JudgeError | None]:
        """(the request the question needs next, None once it ended; how it ended)."""
        request = self.first
        judge = request.model.id
        problems: list[str] = []
        unreadable: list[str] = []
        costs: list[float | None] = []
        cached = True
        while True:
            got = answers.get(request.key)
            if got is None:
                return request, None
            if isinstance(got, ModelCallError):
                if got.status == 400 and request.response_format is not None:
                    # Some servers refuse response_format; the prompt asks for JSON anyway.
                    request = request.without_format()
                    continue
                return None, JudgeError(judge, "call_failed", got.reason,
                                        attempts=len(problems))
            costs.append(got.cost)
            cached = cached and got.cached
            try:
                verdict = self.parse(got.text)
            except InvalidVerdict as exc:
                problems.append(str(exc))
                unreadable.append(request.key)
                if len(problems) > self.retries:
                    tries = len(problems)
                    return None, JudgeError(
                        judge, "invalid_output",
                        f"no valid verdict in {tries} answer{'s' if tries != 1 else ''} "
                        f"({' | '.join(problems)})", raw=got.text, attempts=tries,
                        unusable=tuple(unreadable))
                request = request.followed_by(got.text, RETRY_PROMPT.format(error=exc))
                continue
            known = [c for c in costs if c is not None]
            return None, Answer(verdict=verdict, raw=got.text, answers=len(costs),
                                cost=sum(known) if len(known) == len(costs) else None,
                                cached=cached, response_format=_format_name(request.format))

    def next_request(self, answers: Mapping[str, Completion | ModelCallError]
                     ) -> list[ModelRequest]:
        request, _ = self.walk(answers)
        return [] if request is None else [request]

    def outcome(self, answers: Mapping[str, Completion | ModelCallError]) -> Answer[V]:
        """The verdict once the chain ended; raises its ``JudgeError`` otherwise."""
        request, ended = self.walk(answers)
        if isinstance(ended, Answer):
            return ended
        if ended is None:
            raise JudgeError(self.first.model.id, "call_failed",
                             "the judge was not asked (no answer for its request)")
        raise ended


def question(judge: ModelConfig, messages: list[dict[str, str]], parse: Callable[[str], V],
             *, tag: str, phase: str, schema_name: str, schema: dict[str, Any],
             structured: StructuredMode = "auto", retries: int = 1) -> JudgeQuestion[V]:
    """The question ``messages`` put to ``judge``, its answers read by ``parse``."""
    fmt = response_format(judge, structured, schema_name, schema)
    first = ModelRequest.chat(judge, messages, role="judge", phase=phase, tag=tag,
                              response_format=fmt, temperature=0.0,
                              output_tokens=VERDICT_TOKENS)
    return JudgeQuestion(first=first, parse=parse, retries=retries)


class JudgeClient:
    """Asks judges for verdicts directly, one call after another (the benchmark's
    evaluators declare their questions to the scheduler instead)."""

    def __init__(self, store: Store | None, *, structured: StructuredMode = "auto",
                 parse_retries: int = 1, endpoints: Endpoints | None = None) -> None:
        self.store = store
        self.endpoints = endpoints or Endpoints()
        """The rate limiters and breakers its calls share (its own when given none)."""
        self.structured: StructuredMode = structured
        self.parse_retries = parse_retries

    def ask(self, judge: ModelConfig, messages: list[dict[str, str]],
            parse: Callable[[str], V], *, tag: str, schema_name: str,
            schema: dict[str, Any]) -> Answer[V]:
        """The judge's verdict on ``messages``, read by ``parse``.

        Raises ``JudgeError`` when the call fails or no answer can be read after
        ``parse_retries`` further tries.
        """
        from ...llm.scheduler import fetch

        asked = question(judge, messages, parse, tag=tag, phase="judge", structured=self.structured,
                         schema_name=schema_name, schema=schema, retries=self.parse_retries)
        answers: dict[str, Completion | ModelCallError] = {}
        while True:
            request, ended = asked.walk(answers)
            if request is None:
                if isinstance(ended, JudgeError) and ended.unusable and self.store is not None:
                    # asked afresh next time rather than read back from the cache
                    from ...llm.cache import cache_reject

                    cache_reject(self.store, ended.unusable)
                return asked.outcome(answers)
            try:
                answers[request.key] = fetch(request, self.store, endpoints=self.endpoints)
            except ModelCallError as exc:
                answers[request.key] = exc


def _format_name(fmt: dict[str, Any] | None) -> str:
    return "none" if fmt is None else str(fmt.get("type", "none"))
