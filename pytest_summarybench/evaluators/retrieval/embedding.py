"""``retrieval/embedding`` (docs/methods.md#retrieval-metrics): do developer queries find the code
through this model's summaries?

``prepare`` (controller, the only writer) resolves the queries, embeds queries and summaries
into the store's cache, and writes one chromadb collection per model under
``<work_dir>/chroma``: that model's summaries of the sampled units, embedded with
``evaluation.retrieval.embeddingModel``, in cosine space. A unit the model failed to
summarise is in the index too, as an empty document, so that every model is searched
against the same number of units (its own item for that unit is an error). ``evaluate``
(any worker) only reads: it searches the model's collection with each of the unit's queries.
``prepare`` also indexes the reference documents of ``references.py`` (the code alone; each
model's summary fused with the code), and ``evaluate`` searches them with the same queries into
``details["references"]``: reported beside the models, never scored.

One record per unit x model: ``hit@K`` for every K of ``kValues`` and ``reciprocal_rank``
(0 beyond the largest K, as the spec has it), each the mean over the unit's queries; every
query's type, rank and hits are in ``details``. Tied scores follow ``stats/ir.py``
(expected value over tie orders; cosines within 1e-6 are tied). ``summarize`` gives the
spec's aggregate per model: precision (hit rate) at each K and MRR over all queries, and
the same by query type, then the reference rows (``references``).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, ClassVar

from ..base import Component, EvaluationError, Evaluator, MatrixItem, unit_items
from . import references
from .queries import (
    Query,
    ensure_queries,
    load_queries,
    query_requests,
    query_source,
    read_query_file,
)

if TYPE_CHECKING:
    from ...context import RunContext
    from ...embeddings import Embedder
    from ...embeddings.base import Matrix
    from ...llm.requests import ModelRequest
    from ...schemas import CodeUnit, ScoreRecord

TIE_TOLERANCE = 1e-6
#: HNSW parameters: with ``ef_search`` of 200 the search finds the true nearest summaries
#: in practice for the indexes a run builds (hundreds of summaries), and nearly so beyond;
#: one insert thread keeps the graph, and so the results, the same from run to run.
HNSW = {"space": "cosine", "ef_construction": 200, "ef_search": 200, "max_neighbors": 32,
        "num_threads": 1}
#: What stands in the index for a unit the model has no summary of (a failed generation).
MISSING_TEXT = ""
#: Summaries per ``collection.add`` (chroma refuses batches above its maximum).
ADD_BATCH = 1000


def collection_name(ctx: RunContext, model_id: str, embedder_key: str) -> str:
    """A valid chroma name, unique per run, model and embedding model."""
    digest = hashlib.sha256(f"{ctx.run_id}|{model_id}|{embedder_key}".encode()).hexdigest()
    return f"summaries-{digest[:24]}"


def chroma_client(ctx: RunContext) -> Any:
    """A persistent chroma client on this run's index directory, with telemetry off."""
    import chromadb

    path = ctx.work_dir / "chroma"
    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(
        path=str(path), settings=chromadb.Settings(anonymized_telemetry=False))


class RetrievalEmbedding(Evaluator):
    """Search each model's summary index with each unit's developer queries."""

    name: ClassVar[str] = "retrieval/embedding"
    family: ClassVar[str] = "retrieval"
    components: ClassVar[tuple[Component, ...]] = (
        Component("hit@1", "precision1", "retrieval P@1"),
        Component("hit@5", "precision5", "retrieval P@5"),
        Component("reciprocal_rank", "mrr", "retrieval MRR"))

    def __init__(self) -> None:
        self._embedder: Embedder | None = None
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self._queries: dict[str, list[Query] | str] | None = None
        #: (code index's name, unit id) -> the unit's queries against the code index: the
        #: same for every model, so each process searches it once per unit.
        self._code_rows: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def skip_reason(self, ctx: RunContext) -> str | None:
        if query_source(ctx) is None:
            # With judges configured, none could write queries (the helper is a judge of a
            # family no model under test has): say why rather than ask for a judge.
            why = ctx.roles.helper_reason if ctx.settings.models.judge else None
            return ("no developer queries: set evaluation.retrieval.queriesFile to a JSONL "
                    "file of {path, name, type, query} lines, or "
                    + (f"a judge writes them, but {why}" if why else
                       "configure a judge model under models.judge to generate them"))
        return None

    def items(self, ctx: RunContext) -> list[MatrixItem]:
        items = unit_items(self, ctx)
        source = query_source(ctx)
        if source is not None and source.path is not None:
            # A hand-written set may not cover every unit: only units with queries are
            # retrieval items (an LLM writes queries for every unit).
            covered, _ = read_query_file(source.path, ctx.unit_names, 1)
            items = [it for it in items if it.unit_id in covered]
        return items

    def embedder(self, ctx: RunContext) -> Embedder:
        if self._embedder is None:
            from ...embeddings import get_embedder

            self._embedder = get_embedder(ctx.settings.evaluation.retrieval.embedding_model,
                                          ctx.store, ctx.progress)
        return self._embedder

    def summaries(self, item: MatrixItem, ctx: RunContext) -> list[tuple[str, str]]:
        """Every unit's summary by the item's model: they are the index it searches."""
        return [(u.id, item.model_id) for u in ctx.units]

    def prepare_requests(self, ctx: RunContext) -> list[ModelRequest]:
        """The helper's calls that write the queries (none when they come from a file)."""
        return query_requests(ctx)

    # -- controller -----------------------------------------------------------------------
    def prepare(self, ctx: RunContext) -> None:
        queries = ensure_queries(ctx)
        self._queries = queries
        embedder = self.embedder(ctx)
        embedder.embed(sorted({q.query for qs in queries.values() if isinstance(qs, list)
                               for q in qs}), what="queries")
        client = chroma_client(ctx)
        units = list(ctx.units)
        code = embedder.embed([references.document(references.CODE, u, None) for u in units],
                              what="code")
        for model in ctx.models:
            # A unit the model has no summary for stays in the index as an empty document:
            # every model's index holds the same units, so one model's failures do not
            # leave fewer competitors for the queries of its other units.
            found = [ctx.summary(u.id, model.id) for u in units]
            texts = [s.summary if s is not None else MISSING_TEXT for s in found]
            missing = [{"path": u.path, "name": u.name, "missing": s is None}
                       for u, s in zip(units, found, strict=True)]
            vectors = embedder.embed(texts, what=f"summaries of {model.id}")
            self._index(ctx, client, model.id, units, texts, vectors, missing)
            if references.has_references(model.id):
                # Its reference row: the summary's vector fused with the code's.
                self._index(
                    ctx, client, references.index_key(references.CODE_SUMMARY, model.id),
                    units, [references.document(references.CODE_SUMMARY, u, s)
                            for u, s in zip(units, found, strict=True)],
                    references.fused(code, vectors, [references.has_text(s) for s in found]),
                    missing)
        # The code row: the code alone.
        self._index(ctx, client, references.index_key(references.CODE, ""), units,
                    [references.document(references.CODE, u, None) for u in units], code,
                    [{"path": u.path, "name": u.name} for u in units])
        self._collections.clear()
        self._code_rows.clear()

    def _index(self, ctx: RunContext, client: Any, key: str, units: list[CodeUnit],
               texts: list[str], vectors: Matrix, metadatas: list[dict[str, Any]]) -> None:
        """(Re)create the collection ``key`` names: ``texts`` of ``units`` as ``vectors``."""
        embedder = self.embedder(ctx)
        name = collection_name(ctx, key, embedder.backend.cache_key)
        try:
            client.delete_collection(name)
        except Exception:  # chroma raises its NotFoundError (or ValueError) if absent
            pass
        collection = client.create_collection(
            name, configuration={"hnsw": HNSW}, embedding_function=None,
            metadata={"model_id": key, "embedding_model": embedder.name})
        for start in range(0, len(units), ADD_BATCH):  # chroma caps one add's size
            part = slice(start, start + ADD_BATCH)
            collection.add(ids=[u.id for u in units[part]],
                           embeddings=vectors[part].tolist(), documents=texts[part],
                           metadatas=metadatas[part])

    # -- any process --------------------------------------------------------------------
    def _collection(self, ctx: RunContext, model_id: str) -> Any:
        name = collection_name(ctx, model_id, self.embedder(ctx).backend.cache_key)
        if name not in self._collections:
            if self._client is None:
                self._client = chroma_client(ctx)
            try:
                self._collections[name] = self._client.get_collection(
                    name, embedding_function=None)
            except Exception as exc:
                raise EvaluationError(
                    f"no summary index for {model_id} in {ctx.work_dir / 'chroma'}: the "
                    f"controller's prepare step did not run ({type(exc).__name__})") from exc
        return self._collections[name]

    def _unit_queries(self, ctx: RunContext, unit_id: str) -> list[Query]:
        if self._queries is None or unit_id not in self._queries:
            self._queries = load_queries(ctx)
        found = self._queries.get(unit_id)
        if found is None:
            raise EvaluationError(f"no retrieval queries stored for unit {unit_id}: the "
                                  f"controller's prepare step did not run")
        if isinstance(found, str):
            raise EvaluationError(found)
        return found

    def evaluate(self, item: MatrixItem, ctx: RunContext) -> list[ScoreRecord]:
        from ...schemas import ScoreRecord

        summary = ctx.summary(item.unit_id, item.model_id)
        if summary is None:
            raise EvaluationError(ctx.summary_error(item.unit_id, item.model_id)
                                  or "no summary")
        queries = self._unit_queries(ctx, item.unit_id)
        k_values = sorted(set(ctx.settings.evaluation.retrieval.k_values))
        embedder = self.embedder(ctx)
        texts = [q.query for q in queries] + [summary.summary]
        refs = references.has_references(item.model_id)
        if refs:
            texts.append(references.document(references.CODE, ctx.unit(item.unit_id), None))
        vectors = embedder.cached(texts)
        if vectors is None:
            vectors = embedder.embed(texts)
        own = len(queries)
        collection = self._collection(ctx, item.model_id)
        per_query = [self._search(collection, q, vectors[i], vectors[own], item.unit_id,
                                  k_values) for i, q in enumerate(queries)]
        n = len(per_query)
        metrics = {f"hit@{k}": sum(r["hits"][str(k)] for r in per_query) / n for k in k_values}
        metrics["reciprocal_rank"] = sum(r["reciprocalRank"] for r in per_query) / n
        details: dict[str, Any] = {
            "embeddingModel": embedder.name, "summaryId": summary.id,
            "indexSize": collection.count(), "kValues": k_values, "queries": per_query}
        if refs:
            # The same queries against the reference indexes: reported, never scored.
            code = vectors[own + 1:own + 2]
            targets = {references.CODE: code[0], references.CODE_SUMMARY: references.fused(
                code, vectors[own:own + 1], [references.has_text(summary)])[0]}

            def rows(kind: str) -> list[dict[str, Any]]:
                collection = self._collection(ctx, references.index_key(kind, item.model_id))
                return [{key: r[key] for key in ("type", "rank", "hits", "reciprocalRank")}
                        for r in (self._search(collection, q, vectors[i], targets[kind],
                                               item.unit_id, k_values)
                                  for i, q in enumerate(queries))]

            code_key = (collection_name(ctx, references.index_key(references.CODE, ""),
                                        embedder.backend.cache_key), item.unit_id)
            if code_key not in self._code_rows:
                self._code_rows[code_key] = rows(references.CODE)
            details["references"] = {
                kind: [dict(r) for r in self._code_rows[code_key]]
                if kind == references.CODE else rows(kind)
                for kind in references.DOCUMENTS}
        return [ScoreRecord(
            unit_id=item.unit_id, model_id=item.model_id, evaluator=self.name,
            metrics=metrics, details=details)]

    @staticmethod
    def _search(collection: Any, query: Query, vector: Matrix, target_vector: Matrix,
                target_id: str, k_values: list[int]) -> dict[str, Any]:
        """One query against the index: the target's rank under the tie rule."""
        from ...stats.ir import target_ranking

        max_k = max(k_values)
        size = collection.count()
        own = float(vector @ target_vector)
        n = min(size, max_k)
        while True:
            found = collection.query(query_embeddings=[vector.tolist()], n_results=n,
                                     include=["distances"])
            ids: list[str] = found["ids"][0]
            scores = [1.0 - float(d) for d in found["distances"][0]]
            target = scores[ids.index(target_id)] if target_id in ids else own
            last = scores[-1] if scores else float("-inf")
            # Stop once everything scored at or above the target (within the tolerance) is
            # in hand, or once the target is certainly below the cut-off.
            if (n >= size or last < target - TIE_TOLERANCE
                    or (target_id not in ids and last > target + TIE_TOLERANCE)):
                break
            n = min(size, n * 2)
        others = [s for i, s in zip(ids, scores, strict=True) if i != target_id]
        ranking = target_ranking(target, others, tolerance=TIE_TOLERANCE)
        beyond = target_id not in ids and last > target + TIE_TOLERANCE
        rank = None if beyond else ranking.expected_rank()
        hits = {str(k): 0.0 if beyond else ranking.hit_at(k) for k in k_values}
        rr = 0.0 if beyond else ranking.reciprocal_rank(cutoff=max_k)
        # What the query found first when it was not the target (for the explorer).
        top = next((i for i in ids if i != target_id), None) if rank != 1 else None
        return {"id": query.id, "type": query.type, "query": query.query,
                "rank": rank if rank is None or rank <= max_k else None,
                "hits": hits, "reciprocalRank": rr, "score": round(target, 6),
                "topId": top}

    # -- report ---------------------------------------------------------------------------
    def summarize(self, records: list[ScoreRecord], ctx: RunContext) -> dict[str, Any]:
        """The aggregate of docs/methods.md#retrieval-metrics per model over all its queries
        (precision at each K, which the spec defines as the hit rate, and MRR), then the same per
        query type."""
        from ...stats.ir import QueryResult, aggregate

        k_values = sorted(set(ctx.settings.evaluation.retrieval.k_values))
        by_model: dict[str, list[QueryResult]] = {}
        for rec in records:
            if rec.error is not None or rec.evaluator != self.name:
                continue
            for q in rec.details.get("queries", []):
                by_model.setdefault(rec.model_id, []).append(QueryResult(
                    q["type"], {k: float(q["hits"][str(k)]) for k in k_values},
                    float(q["reciprocalRank"])))

        overall: dict[str, Any] = {}
        by_type: dict[str, Any] = {}
        for model, rows in sorted(by_model.items()):
            agg = aggregate(rows, k_values)
            overall[model] = references.metrics_row(agg, k_values)
            for qtype, sub in agg["byQueryType"].items():  # type: ignore[attr-defined]
                by_type[f"{model} / {qtype}"] = references.metrics_row(sub, k_values)
        out = {"precisionMeans": "hit rate: a query counts when its unit is in the top K",
               "kValues": k_values, "overall": overall, "byQueryType": by_type}
        refs = references.summarize_references(records, self.name, k_values, ctx)
        if refs is not None:
            out["references"] = refs
        return out
