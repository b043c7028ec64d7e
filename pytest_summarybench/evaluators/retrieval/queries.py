"""Developer search queries for retrieval (docs/methods.md#query-generation): from a file, or from
an LLM.

Where the queries come from, first that applies:

1. ``evaluation.retrieval.queriesFile``, a JSONL file of
   ``{"path", "name", "type", "query"}`` lines (path relative to the codebase root, ``name``
   the unit's qualified name, ``type`` one of the five types below);
2. the query set kept beside a codebase: ``<root>/../queries/<root name>.jsonl``, which is
   how the default run on ``fixtures/sample_codebase`` gets the hand-written
   ``fixtures/queries/sample_codebase.jsonl`` without any model (a fixed, reviewed set
   also keeps scores comparable across runs);
3. generation with the prompt below by the run's helper model (``roles/assign.py``: the first
   judge of none of the families of the models under test), cached in the store like
   every model call.

Queries are matched to units by (path, name); lines naming no extracted unit are counted,
not fatal. Each unit keeps its first ``queriesPerUnit`` queries. The controller resolves
the queries once (``ensure_queries``) and stores them; workers read them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ...core.input_files import InputFileError, clip, json_lines, parse_json_line, read_text
from ...llm.json_answer import parse_json_object

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ...context import Named, RunContext
    from ...llm.requests import ModelRequest
    from ...schemas import CodeUnit, ModelConfig

QUERY_TYPES: tuple[str, ...] = ("vague", "wrong_terminology", "specific_behavior",
                                "integration", "problem_based")

QUERY_GENERATION_PROMPT = """Generate realistic search queries that a developer might use to find this code.

## Code
```{language}
{code}
```

## Context
File: {file_path}
Function/Class: {name}

Generate exactly 5 search queries of varying types:

1. **Vague query**: A partial or imprecise query (e.g., "something with users")
2. **Wrong terminology**: Uses related but not exact terms (e.g., "authenticate" instead of "login")
3. **Specific behavior**: Asks about a particular thing the code does
4. **Integration query**: Asks how to use this with something else
5. **Problem-based**: Describes a problem this code solves

These should be realistic queries a developer would type, NOT perfect descriptions.

Respond with JSON:
```json
{
  "queries": [
    {"type": "vague", "query": "..."},
    {"type": "wrong_terminology", "query": "..."},
    {"type": "specific_behavior", "query": "..."},
    {"type": "integration", "query": "..."},
    {"type": "problem_based", "query": "..."}
  ]
}
```"""  # noqa: E501 - the spec's prompt, verbatim

#: Structured output for providers that support it (a JSON object; the prompt fixes keys).
RESPONSE_FORMAT = {"type": "json_object"}

@dataclass(frozen=True)
class Query:
    """One developer query for one unit."""

    id: str
    unit_id: str
    type: str
    query: str


@dataclass(frozen=True)
class QuerySource:
    """Where a run's queries come from."""

    kind: Literal["file", "llm"]
    path: Path | None = None
    model: ModelConfig | None = None

    @property
    def key(self) -> str:
        """Identifies the query set in the store (a file's contents, or the model)."""
        if self.path is not None:
            return "file:" + hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]
        assert self.model is not None
        return f"llm:{self.model.id}"


#: The fields of a queries-file line, in the order they are read.
_FIELDS = ("path", "name", "type", "query")


class QueryFileError(InputFileError):
    """A queries file cannot be read or has a bad line (named with its line number); it
    stops the run (a benchmark on part of its queries would be quietly wrong)."""


def query_source(ctx: RunContext) -> QuerySource | None:
    """The source of this run's queries (None: no file and no model to write them)."""
    configured = ctx.settings.evaluation.retrieval.queries_file
    if configured:
        return QuerySource("file", path=ctx.settings.resolve(configured))
    root = ctx.settings.codebase_root
    bundled = root.parent / "queries" / f"{root.name}.jsonl"
    if bundled.is_file():
        return QuerySource("file", path=bundled)
    helper = ctx.roles.helper
    if helper is not None:
        return QuerySource("llm", model=helper)
    return None


def read_query_file(path: Path, units: Iterable[Named], per_unit: int
                    ) -> tuple[dict[str, list[Query]], int]:
    """Queries by unit id from a JSONL file, and the number of lines naming no unit
    (``units``: every unit of the run, or just their ids, paths and names:
    ``RunContext.unit_names``).

    A bad line raises ``QueryFileError`` as ``FILE:LINE: field 'F': problem``.
    """
    try:
        text = read_text(path, "queries file")
    except InputFileError as exc:
        raise QueryFileError(str(exc)) from None
    by_key = {(u.path, u.name): u.id for u in units}
    out: dict[str, list[Query]] = {}
    unmatched = 0
    for number, line in json_lines(text):
        try:
            row = parse_json_line(line)
        except ValueError as exc:
            raise QueryFileError(f"{path}:{number}: {exc}") from None
        if not isinstance(row, dict):
            raise QueryFileError(f"{path}:{number}: expected a JSON object with path, name, "
                                 f"type and query, found {type(row).__name__}")
        for key in _FIELDS:
            if key not in row:
                raise QueryFileError(f"{path}:{number}: field {key!r}: missing (each line "
                                     "has path, name, type and query)")
            if not isinstance(row[key], str) or not row[key].strip():
                raise QueryFileError(f"{path}:{number}: field {key!r}: expected a non-empty "
                                     f"string, found {clip(row[key])}")
        path_, name, qtype, text_ = (row[k] for k in _FIELDS)
        if qtype not in QUERY_TYPES:
            raise QueryFileError(f"{path}:{number}: field 'type': {clip(qtype, 80)} is not one "
                                 f"of {', '.join(QUERY_TYPES)}")
        unit_id = by_key.get((path_, name))
        if unit_id is None:
            unmatched += 1
            continue
        found = out.setdefault(unit_id, [])
        if len(found) < per_unit:
            found.append(Query(f"{unit_id}:q{len(found) + 1}", unit_id, qtype, text_))
    return out, unmatched


def generation_prompt(unit: CodeUnit) -> str:
    """The prompt of docs/methods.md#query-generation for ``unit`` (placeholders replaced one by
    one: the JSON example's braces stay as they are)."""
    return (QUERY_GENERATION_PROMPT.replace("{language}", unit.language)
            .replace("{code}", unit.content).replace("{file_path}", unit.path)
            .replace("{name}", unit.name))


def parse_generated(text: str, unit_id: str, per_unit: int) -> list[Query]:
    """The queries of a model's answer; ValueError naming what is wrong."""
    data = parse_json_object(text)
    items = data.get("queries")
    if not isinstance(items, list) or not items:
        raise ValueError("the answer has no non-empty 'queries' list")
    queries: list[Query] = []
    for item in items:
        if not isinstance(item, dict) or not str(item.get("query", "")).strip():
            raise ValueError(f"query entry {item!r} has no query text")
        qtype = str(item.get("type", ""))
        if qtype not in QUERY_TYPES:
            raise ValueError(f"query type {qtype!r} is not one of {', '.join(QUERY_TYPES)}")
        queries.append(Query(f"{unit_id}:q{len(queries) + 1}", unit_id, qtype,
                             str(item["query"]).strip()))
    return queries[:per_unit]


QUERY_PHASE = "retrieval/queries"


def query_request(unit: CodeUnit, model: ModelConfig) -> ModelRequest:
    """The helper model's call that writes ``unit``'s queries (docs/methods.md#query-generation)."""
    from ...llm.requests import ModelRequest

    return ModelRequest.chat(model, [{"role": "user", "content": generation_prompt(unit)}],
                             role="helper", phase=QUERY_PHASE, tag="retrieval-queries",
                             response_format=RESPONSE_FORMAT, temperature=model.temperature,
                             max_tokens=max(model.max_tokens, 500), output_tokens=150)


def query_requests(ctx: RunContext) -> list[ModelRequest]:
    """The calls that write the queries the run does not have yet (none when queries come
    from a file)."""
    source = query_source(ctx)
    if source is None or source.model is None:
        return []
    existing = load_queries(ctx, source)
    return [query_request(u, source.model) for u in ctx.units
            if not isinstance(existing.get(u.id), list)]


def generate_queries(unit: CodeUnit, model: ModelConfig, ctx: RunContext, per_unit: int
                     ) -> list[Query]:
    """The unit's queries from ``model`` (the answer the controller fetched, from the
    cache). Raises ModelCallError or ValueError (the answer, which a later session asks
    for again, has no queries)."""
    from ...llm.scheduler import fetch
    from ..base import reject_answers

    request = query_request(unit, model)
    completion = fetch(request, ctx.store, ctx.session, endpoints=ctx.endpoints)
    try:
        return parse_generated(completion.text, unit.id, per_unit)
    except ValueError:
        reject_answers(ctx, [request.key])
        raise


def ensure_queries(ctx: RunContext) -> dict[str, list[Query] | str]:
    """Resolve and store the queries of every sampled unit (controller): unit id -> its
    queries, or the reason it has none."""
    source = query_source(ctx)
    if source is None:
        return {}
    existing = load_queries(ctx, source)
    per_unit = ctx.settings.evaluation.retrieval.queries_per_unit
    fresh: dict[str, list[Query] | str] = {}
    if source.path is not None:
        from_file, _ = read_query_file(source.path, ctx.unit_names, per_unit)
        for unit in ctx.units:
            if unit.id not in existing:
                fresh[unit.id] = from_file.get(unit.id) or (
                    f"the queries file {source.path} has no query for {unit.path} {unit.name}")
    else:
        from ...llm import ModelCallError

        model = source.model
        assert model is not None
        # The controller made the calls ahead (``query_requests``): these are cache hits.
        for unit in ctx.units:
            if isinstance(existing.get(unit.id), list):
                continue
            try:
                fresh[unit.id] = generate_queries(unit, model, ctx, per_unit)
            except (ModelCallError, ValueError) as exc:
                fresh[unit.id] = f"query generation by {model.id} failed: {exc}"
    if fresh:
        ctx.store.queries.save(ctx.run_id, source.key, {
            uid: json.dumps([asdict(q) for q in v] if isinstance(v, list) else {"error": v})
            for uid, v in fresh.items()})
    return {**existing, **fresh}


def load_queries(ctx: RunContext, source: QuerySource | None = None
                 ) -> dict[str, list[Query] | str]:
    """The stored queries of this run (what workers read)."""
    source = source or query_source(ctx)
    if source is None:
        return {}
    out: dict[str, list[Query] | str] = {}
    for uid, text in ctx.store.queries.load(ctx.run_id, source.key).items():
        data = json.loads(text)
        out[uid] = [Query(**q) for q in data] if isinstance(data, list) else data["error"]
    return out
