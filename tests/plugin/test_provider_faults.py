"""A run against a provider that answers 20% 429, 5% 500, 2% timeouts and 5% malformed
JSON completes; every item is scored or recorded as an error with its reason; the report
counts errors per model and evaluator; and no key reaches anything the run writes."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, default_respond
from tests.fakes.reliability_project import make_project, results, run, store_rows

FUNCTIONS = 12
SENTINEL = "sk-sentinel-" + "7f3a9c0e5b1d4e2f"
# A unit whose every request the provider refuses (HTTP 400: not retryable), so the error
# path is taken deterministically whatever the random faults do.
REFUSED = "rule_7("
FIRST_FAULTS = {2: "429", 3: "500", 4: "timeout", 5: "malformed"}


def provider_faults(n: int, body: dict[str, Any]) -> str | None:
    """The fault of the n-th request: seeded by n, so every run sees the same script (and
    requests 2 to 5 get one of each kind, so a short run meets them all)."""
    if any(REFUSED in str(m.get("content", "")) for m in body.get("messages", [])):
        return "400"
    if n in FIRST_FAULTS:
        return FIRST_FAULTS[n]
    draw = random.Random(n).random()
    for kind, upto in (("429", 0.20), ("500", 0.25), ("timeout", 0.27), ("malformed", 0.32)):
        if draw < upto:
            return kind
    return None


def test_faulty_provider_run_completes_and_accounts_for_every_item(
        pytester: pytest.Pytester, fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    server: FakeOpenAIServer = fake_server(faults=provider_faults, respond=default_respond,
                                           fault_retry_after_s=0.2)
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    make_project(pytester, server.base_url, functions=FUNCTIONS, timeout_s=1.0)
    result = run(pytester)
    outcomes = result.parseoutcomes()
    items = FUNCTIONS * 2  # one model x two evaluators
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == items, result.stdout.str()
    # Every fault kind was served, and retried past.
    assert {"429", "500", "timeout", "malformed", "400"} <= set(server.faults_served)
    assert server.successes > 0

    data = results(pytester)
    records = store_rows(pytester, "SELECT unit_id, model_id, evaluator, json FROM records")
    assert len(records) == items
    assert len({(u, m, e) for u, m, e, _ in records}) == items
    import json

    errors = [json.loads(text) for *_, text in records if json.loads(text).get("error")]
    scored = [json.loads(text) for *_, text in records if not json.loads(text).get("error")]
    assert len(errors) + len(scored) == items
    for err in errors:
        assert err["error"].strip()
    # The refused unit failed in generation with the provider's reason, for both evaluators.
    assert outcomes.get("failed", 0) == len(errors) >= 2
    assert any("HTTP 400" in e["error"] for e in errors), errors
    counted = {(e["modelId"], e["evaluator"]): e["count"] for e in data["errors"]}
    assert sum(counted.values()) == len(errors)
    for err in errors:
        assert (err["modelId"], err["evaluator"]) in counted
    result.stdout.fnmatch_lines(["errors: openai/gpt-4o-mini contrastive/*: * (e.g. *HTTP 400*"])
    ranking = {r["modelId"]: r for r in data["rankings"]}
    assert ranking["openai/gpt-4o-mini"]["errors"] == len(errors)

    # The key went to the provider and nowhere else.
    assert f"Bearer {SENTINEL}" in server.authorizations
    assert_no_secret(pytester.path / "out", SENTINEL)
    assert SENTINEL not in result.stdout.str() + result.stderr.str()


def assert_no_secret(root: Path, secret: str) -> None:
    """No file under ``root`` (store, WAL, cache, reports, logs) holds ``secret``."""
    needle = secret.encode()
    checked = 0
    for path in root.rglob("*"):
        if path.is_file():
            checked += 1
            assert needle not in path.read_bytes(), f"{path} holds the key"
    assert checked >= 3  # results.json, the reports and the store at least
