"""End to end: ``--sb-validate`` on a small written codebase, with a judge that ignores
content (``claude-position-judge`` of ``tests/evaluators/judge/scripted.py``: every summary 3, the
summary shown first always wins) on the local fake server, and the offline contrastive
family. The ladder must stay out of the ranking, contrastive must order it, the judge
family and the judge must be flagged, and the report must say so in every format."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from pytest_summarybench.cli import build_parser
from pytest_summarybench.report import report_from_store
from pytest_summarybench.store import Store
from pytest_summarybench.validity import LEVEL_IDS
from tests.evaluators.judge.scripted import POSITION, ScriptedJudges
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.project import session_results, write_bench_module, write_code

CODE = {
    "shop/pricing.py": '''
        def apply_discount(price, percent):
            """Apply a percentage discount to a price, never going below zero."""
            cut = price * percent / 100
            return max(price - cut, 0.0)


        def add_sales_tax(price, rate):
            """Add sales tax at the given rate and round the result to cents."""
            taxed = price * (1 + rate)
            return round(taxed, 2)


        def convert_currency(amount, exchange_rate):
            """Convert an amount of money into another currency with an exchange rate."""
            converted = amount * exchange_rate
            return converted


        def price_label(price):
            symbol = "EUR"
            return f"{price:.2f} {symbol}"
        ''',
    "shop/users.py": '''
        def hash_password(password, salt):
            """Hash a password with a salt using sha256 and return the hex digest."""
            data = (salt + password).encode()
            return hashlib.sha256(data).hexdigest()


        def validate_email(email):
            """Check that an email address matches the expected pattern."""
            match = EMAIL_PATTERN.match(email)
            return match is not None


        def lock_account(user, reason):
            """Lock a user account and remember why it was locked."""
            user.locked = True
            user.lock_reason = reason
            return user


        def greet(user):
            name = user.display_name
            return "hello " + name
        ''',
    "shop/cache.py": '''
        def evict_expired(cache, now):
            """Evict every cache entry whose expiry time is before now."""
            stale = [k for k, e in cache.items() if e.expires < now]
            for key in stale:
                del cache[key]
            return len(stale)


        def cache_size_bytes(cache):
            """Total size in bytes of the payloads held in the cache."""
            sizes = [len(e.payload) for e in cache.values()]
            return sum(sizes)
        ''',
}


def _project(pytester: pytest.Pytester, server: FakeOpenAIServer) -> None:
    write_code(pytester, CODE)
    write_bench_module(pytester)
    pytester.makefile(".yaml", summarybench=textwrap.dedent(f"""
        name: validity-e2e
        codebase:
          root: code
          languages: [python]
        extraction:
          types: [function]
          minLines: 2
        models:
          test:
            - {{provider: builtin, model: docstring}}
            - {{provider: builtin, model: shuffled}}
          judge:
            - {{provider: local, model: {POSITION}, apiEndpoint: "{server.base_url}"}}
        evaluation:
          sampling: all
          judge:
            minJudges: 1
            bootstrapSamples: 100
          retrieval: {{enabled: false}}
          downstream: {{enabled: false}}
        """))


def test_validate_flags_a_content_ignoring_judge(
        pytester: pytest.Pytester, fake_server: Callable[..., FakeOpenAIServer]) -> None:
    server = fake_server(respond=ScriptedJudges())
    _project(pytester, server)
    result = pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                           "--sb-output", "out", "--sb-validate")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes["passed"] > 0
    data: dict[str, Any] = json.loads((pytester.path / "out" / "results.json").read_text())

    # -- the ladder is not ranked; the models under test are ------------------------------
    assert {r["modelId"] for r in data["rankings"]} == {"builtin/docstring", "builtin/shuffled"}
    for details in data["evaluatorDetails"].values():
        # scores and tables leave the ladder out (the judge plan lists every model)
        scored = {k: v for k, v in details.items() if k != "selection"}
        assert "validate/" not in json.dumps(scored)

    validity = data["validity"]
    assert validity["levels"] == list(LEVEL_IDS)
    assert validity["ladderUnits"] == 8  # the documented functions; two have no docstring
    families = {f["family"]: f for f in validity["families"]}

    # -- contrastive orders the ladder; the A/A twin never differs ------------------------
    contrastive = families["contrastive"]
    assert contrastive["kendallTau"] == pytest.approx(1.0)
    assert contrastive["units"] == 8 and not contrastive["flagged"]
    assert contrastive["aaSignificantRate"] == 0.0

    # -- the judge that ignores content is flagged, as a family and as a judge ------------
    judge = families["judge"]
    assert judge["flagged"] and judge["status"] == "cannot order"
    (row,) = validity["judges"]
    assert row["judge"] == f"local/{POSITION}" and row["flagged"]
    assert row["flipRate"] == 1.0 and row["swappedPairs"] == 8 * 10
    assert any(msg.startswith("judge:") for msg in validity["flagged"])
    assert not any(msg.startswith("contrastive") for msg in validity["flagged"])

    # -- the report rebuilt from the store alone has the same section -------------------
    rebuilt = report_from_store(Store(pytester.path / "out" / "store.sqlite"))
    assert rebuilt.to_json_dict()["validity"] == validity

    # -- every report shows it --------------------------------------------------------------
    result.stdout.fnmatch_lines([
        "instrument validity: DISTRUST judge (tau none, cannot order): it does not order the "
        "known-answer ladder; the other family orders the known-answer ladder: contrastive "
        "(tau +1.00, *); distrust judge local/*",
        "  judge: not externally validated",
        # quoted from validity/external.json as shipped
        "  contrastive: contrastive/embedding: * external validation on *: tau * with "
        "docstrings, * stripped",
        "known-answer ladder on 8 documented units*",
        "contrastive * +1.00 *",
        "DISTRUST judge: scored every level the same",
        f"DISTRUST judge local/{POSITION}: *flipped*"])
    markdown = (pytester.path / "out" / "report.md").read_text()
    assert "## Instrument validity" in markdown and "**Distrust** judge" in markdown
    html = (pytester.path / "out" / "report.html").read_text()
    assert '<h2 id="validity">Instrument validity</h2>' in html

    # -- -m validate runs the ladder alone (what summarybench validate does); two xdist
    # -- workers collect the same narrowed matrix and measure the same -------------------
    alone = pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                          "--sb-output", "out", "--sb-validate", "-m",
                                          "validate and contrastive", "-n", "2")
    alone_outcomes = alone.parseoutcomes()
    # five ladder models on the documented units, nothing else
    assert alone_outcomes == {"passed": 5 * 8}
    # the ladder alone is a partial run: the complete run's reports stay at the top
    assert json.loads((pytester.path / "out" / "results.json").read_text())["rankings"]
    again = session_results(alone)
    assert again["metadata"]["run"]["complete"] is False
    assert again["rankings"] == []
    assert again["metadata"]["familiesRun"] == ["contrastive"]
    assert "contrastive" not in again["metadata"]["familiesSkipped"]
    assert [f for f in again["validity"]["families"] if f["family"] == "contrastive"] == [
        contrastive]


def test_validate_subcommand_runs_the_ladder_alone(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Any) -> None:
    from pytest_summarybench.cli import validate

    seen: list[list[str]] = []

    def fake_run_pytest(args: list[str]) -> int:
        seen.append(args)
        return 0

    monkeypatch.setattr(validate, "run_pytest", fake_run_pytest)
    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["validate", "--codebase", str(tmp_path),
                                      "--sample-size", "50", "--", "-n", "2"])
    assert validate.run(args) == 0
    assert seen == [["--sb-validate", "-m", "validate", "-q", "--sb-codebase", str(tmp_path),
                     "--sb-sample-size", "50", "-n", "2"]]
