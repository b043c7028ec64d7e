"""The objective evaluators as tests in the matrix: prepare on the controller, evaluate in
xdist workers, records through the plugin into results.json, the same with and without
xdist. A small codebase with a queries file beside it; embeddings are ``builtin/hashing``
so that no model loads in the subprocesses."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

from pytest_summarybench.store import Store

FUNCTIONS = {
    "pricing.py": [("apply_discount", "price, percent", "Reduce a price by a percent.",
                    "return price * (1 - percent / 100)"),
                   ("add_tax", "price, rate", "Add sales tax to a price.",
                    "return round(price * (1 + rate), 2)"),
                   ("convert", "amount, exchange_rate", "Convert money between currencies.",
                    "return amount * exchange_rate")],
    "accounts.py": [("hash_password", "password, salt", "Hash a password with a salt.",
                     "return sha256(salt + password).hexdigest()"),
                    ("validate_email", "email", "Check an email address is well formed.",
                     "return EMAIL.match(email) is not None"),
                    ("lock_account", "user, reason", "Lock a user account.",
                     "user.locked = True\n    user.reason = reason")],
}
QUERIES = {"apply_discount": "percentage off", "add_tax": "sales tax on price",
           "convert": "currency exchange", "hash_password": "salted hash of a password",
           "validate_email": "is this email valid", "lock_account": "lock user out"}


def _project(pytester: pytest.Pytester) -> None:
    lines = []
    for file, funcs in FUNCTIONS.items():
        source = "\n\n".join(
            f'def {name}({params}):\n    """{doc}"""\n    {body}\n    return None\n'
            for name, params, doc, body in funcs)
        path = pytester.path / "code" / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
        lines += [json.dumps({"path": file, "name": name, "type": "vague",
                              "query": QUERIES[name]}) for name, *_ in funcs]
    (pytester.path / "queries").mkdir()
    (pytester.path / "queries" / "code.jsonl").write_text("\n".join(lines) + "\n")
    pytester.makepyfile(test_bench="from pytest_summarybench.suite.test_summary import "
                                   "test_summary\n")
    pytester.makefile(".yaml", summarybench=textwrap.dedent("""
        name: objective
        codebase: {root: code, languages: [python]}
        extraction: {minLines: 2, types: [function]}
        evaluation:
          sampling: all
          contrastive: {distractors: 3, embeddingModel: builtin/hashing}
          retrieval: {kValues: [1, 3], embeddingModel: builtin/hashing}
        """))


def _records(pytester: pytest.Pytester, *args: str
             ) -> tuple[dict[tuple[str, str, str], dict[str, float]], dict[str, Any]]:
    """The run's records' metrics, and the report's reference rows and validity section."""
    result = pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                           "--sb-output", "out", "--sb-eval",
                                           "contrastive,retrieval", *args)
    assert result.ret == 0, result.stdout.str()
    # 6 units x (5 built-in models + the 5 ladder models, on by default offline) x
    # (contrastive/embedding + retrieval/embedding); every unit is documented
    assert result.parseoutcomes() == {"passed": 60 + 6 * 5 * 2}
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    details = data["evaluatorDetails"]["retrieval/embedding"]["overall"]
    assert details["builtin/docstring"]["queries"] == 6
    assert {"precision@1", "precision@3", "mrr"} <= set(details["builtin/docstring"])
    assert "validate/l1-docstring" not in details
    references = data["evaluatorDetails"]["retrieval/embedding"]["references"]
    assert references["code"]["queries"] == 6
    assert set(references["code+summary"]) == {r["modelId"] for r in data["rankings"]}
    store = Store(pytester.path / "out" / "store.sqlite")
    run_id = store.latest_run_id()
    assert run_id is not None
    try:
        return ({(r.unit_id, r.model_id, r.evaluator): r.metrics
                 for r in store.load_records(run_id)},
                {"references": references, "validity": data["validity"]})
    finally:
        store.close()


def test_objective_evaluators_in_the_matrix_match_across_xdist(
        pytester: pytest.Pytester) -> None:
    _project(pytester)
    plain, report = _records(pytester, "-n", "0")
    assert (plain, report) == _records(pytester, "-n", "2")
    assert report["validity"]["verdict"]
    retrieval = [m for (_, _, ev), m in plain.items() if ev == "retrieval/embedding"]
    assert all(set(m) == {"hit@1", "hit@3", "reciprocal_rank"} for m in retrieval)
    contrastive = [m for (_, _, ev), m in plain.items() if ev == "contrastive/embedding"]
    assert all(set(m) == {"correct", "predicted_rank", "confidence_gap"} for m in contrastive)
