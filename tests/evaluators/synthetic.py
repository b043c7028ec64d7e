"""A small synthetic codebase and summaries, and a run context over them on a temp store.

The codebase has a dozen Python functions on distinct topics, each with a summary that
names what it does ("good"), and a negative control whose summary is another unit's
("shuffled"). Embeddings default to ``builtin/hashing`` (lexical, deterministic, no model).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_summarybench.context import RunContext
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.schemas import CodeUnit, GeneratedSummary
from pytest_summarybench.schemas.summaries import GenerationMetadata
from pytest_summarybench.schemas.units import Parameter, UnitMetadata
from pytest_summarybench.settings import load_settings
from pytest_summarybench.store import Store

#: (file, name, parameters, body, summary)
CODE: list[tuple[str, str, list[str], str, str]] = [
    ("shop/pricing.py", "apply_discount", ["price", "percent"],
     "return price * (1 - percent / 100)", "Apply a percentage discount to a price."),
    ("shop/pricing.py", "add_sales_tax", ["price", "rate"],
     "return round(price * (1 + rate), 2)", "Add sales tax at a rate to a price, rounded."),
    ("shop/pricing.py", "convert_currency", ["amount", "exchange_rate"],
     "return amount * exchange_rate", "Convert an amount with an exchange rate."),
    ("shop/users.py", "hash_password", ["password", "salt"],
     "return sha256(salt + password).hexdigest()", "Hash a password with a salt using sha256."),
    ("shop/users.py", "validate_email", ["email"],
     "return EMAIL_PATTERN.match(email) is not None",
     "Validate an email address against a pattern."),
    ("shop/users.py", "lock_account", ["user", "reason"],
     "user.locked = True\n    user.lock_reason = reason", "Lock a user account with a reason."),
    ("shop/cache.py", "evict_expired", ["cache", "now"],
     "for key in [k for k, e in cache.items() if e.expires < now]:\n        del cache[key]",
     "Evict expired cache entries older than now."),
    ("shop/cache.py", "cache_size_bytes", ["cache"],
     "return sum(len(e.payload) for e in cache.values())",
     "Total payload size of the cache in bytes."),
    ("shop/search.py", "tokenize_query", ["query"],
     "return [w.lower() for w in query.split()]", "Tokenize a search query into lower words."),
    ("shop/search.py", "rank_results", ["results", "query"],
     "return sorted(results, key=lambda r: r.score(query), reverse=True)",
     "Rank search results by score for the query."),
    ("shop/orders.py", "cancel_order", ["order"],
     "order.status = 'cancelled'\n    refund(order.payment)",
     "Cancel an order and refund its payment."),
    ("shop/orders.py", "ship_order", ["order", "carrier"],
     "label = carrier.label(order.address)\n    order.status = 'shipped'",
     "Ship an order with a carrier label for its address."),
]


def make_units() -> list[CodeUnit]:
    units = []
    for i, (path, name, params, body, _) in enumerate(CODE):
        signature = f"def {name}({', '.join(params)}):"
        units.append(CodeUnit(
            id=f"u{i:02d}", path=path, name=name, type="function", language="python",
            content=f"{signature}\n    {body}\n",
            metadata=UnitMetadata(start_line=1, end_line=2, signature=signature,
                                  parameters=[Parameter(name=p) for p in params])))
    return units


def summary(unit_id: str, model_id: str, text: str) -> GeneratedSummary:
    return GeneratedSummary(
        id=f"{model_id}:{unit_id}", code_unit_id=unit_id, model_id=model_id, summary=text,
        generation_metadata=GenerationMetadata(
            model_name=model_id, prompt_version="test", temperature=0.0, max_tokens=100,
            generated_at="2026-01-01T00:00:00Z", latency_ms=0.0, input_tokens=0,
            output_tokens=0))


def default_summaries(units: list[CodeUnit]) -> dict[str, dict[str, str]]:
    """model id -> unit id -> summary text."""
    good = {u.id: CODE[i][4] if i < len(CODE) else f"The {u.name} {u.type}."
            for i, u in enumerate(units)}
    ids = [u.id for u in units]
    shuffled = {uid: good[ids[(i + 5) % len(ids)]] for i, uid in enumerate(ids)}
    return {"builtin/good": good, "builtin/shuffled": shuffled}


def build_context(tmp_path: Path, units: list[CodeUnit],
                  summaries: dict[str, dict[str, str]], overrides: dict[str, Any] | None = None,
                  missing: tuple[tuple[str, str], ...] = ()) -> RunContext:
    models = [{"provider": "builtin", "model": m.split("/", 1)[1]} for m in sorted(summaries)]
    settings = load_settings(None, {
        "output.directory": str(tmp_path / "out"),
        # the synthetic units' codebase: not the bundled sample, whose queries and tasks
        # a run would otherwise find beside it
        "codebase.root": str(tmp_path / "code"),
        "models.test": models,
        "evaluation.contrastive.embeddingModel": "builtin/hashing",
        "evaluation.retrieval.embeddingModel": "builtin/hashing",
        **(overrides or {})}, base_dir=tmp_path, families=BUILTIN_FAMILIES)
    store = Store(tmp_path / "store.sqlite")
    run_id = "run-test"
    store.save_units(run_id, units, {u.id for u in units})
    for model_id, by_unit in summaries.items():
        rows = [summary(uid, model_id, text) for uid, text in by_unit.items()]
        store.save_summaries(rows)
        for s in rows:
            if (s.code_unit_id, model_id) in missing:
                store.link_summary(run_id, s.code_unit_id, model_id, None,
                                   "the provider refused")
            else:
                store.link_summary(run_id, s.code_unit_id, model_id, s.id)
    return RunContext(settings, store, run_id)


ContextFactory = Callable[..., RunContext]
