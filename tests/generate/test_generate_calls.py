"""The generation phase with real HTTP calls to the local fake server."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from pytest_summarybench.core.progress import Progress
from pytest_summarybench.engine.estimate import estimate_generation, format_estimate
from pytest_summarybench.generate import (
    PROMPT_VERSION,
    run_generation,
)
from pytest_summarybench.generate.prompts import build_messages
from pytest_summarybench.llm import RetryPolicy, complete
from pytest_summarybench.schemas import GeneratedSummary, ModelConfig
from tests.fakes.openai_server import Reply, fingerprint

FAST = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)


def summaries(ctx, model_id: str) -> dict[str, GeneratedSummary]:
    ctx = ctx.refreshed()  # a context reads what generation wrote when made afterwards
    return {u.id: s for u in ctx.units if (s := ctx.summary(u.id, model_id)) is not None}


def test_every_unit_gets_a_summary_with_metadata(make_ctx, fake_server, openai_model,
                                                 sentinel_key, unit_factory) -> None:
    server = fake_server(latency_s=0.02,
                         faults=lambda n, body: {3: "429", 5: "500", 8: "malformed"}.get(n),
                         fault_retry_after_s=0.05)
    ctx = make_ctx([openai_model(server), {"provider": "builtin", "model": "docstring"}],
                   units=unit_factory(20))
    report = run_generation(ctx, parallel=4, progress=False, retry_policy=FAST)
    n = len(ctx.units)
    stats = report.models["openai/gpt-4o"]
    assert (stats.generated, stats.calls, stats.errors) == (n, n, 0)
    assert server.successes == n and len(server.successes_by_fingerprint) == n
    got = summaries(ctx, "openai/gpt-4o")
    assert set(got) == {u.id for u in ctx.units}
    meta = got["u-fn-0"].generation_metadata
    assert meta.prompt_version == PROMPT_VERSION and meta.model_version == "gpt-4o-fake-1"
    assert meta.temperature == 0.3 and meta.max_tokens == 500
    assert meta.input_tokens > 0 and meta.output_tokens > 0 and meta.latency_ms >= 20
    assert meta.cost == pytest.approx(meta.input_tokens * 2.5e-6 + meta.output_tokens * 1e-5)
    assert stats.cost == pytest.approx(sum(s.generation_metadata.cost for s in got.values()))


def test_second_run_and_new_run_make_zero_calls(make_ctx, fake_server, openai_model,
                                                sentinel_key) -> None:
    server = fake_server()
    ctx = make_ctx([openai_model(server)])
    run_generation(ctx, progress=False)
    calls = server.chat_requests
    again = run_generation(ctx, progress=False)
    assert again.calls == 0 and again.reused == len(ctx.units)
    other = make_ctx([openai_model(server)], run_id="run-2")
    fresh = run_generation(other, progress=False)
    assert fresh.calls == 0 and fresh.models["openai/gpt-4o"].cached == len(ctx.units)
    assert server.chat_requests == calls
    assert summaries(ctx, "openai/gpt-4o") == summaries(other, "openai/gpt-4o")


def test_changed_parameters_miss_the_cache(make_ctx, fake_server, openai_model,
                                           sentinel_key) -> None:
    server = fake_server()
    run_generation(make_ctx([openai_model(server)]), progress=False)
    hotter = make_ctx([openai_model(server, temperature=0.7)], run_id="run-2")
    assert run_generation(hotter, progress=False).calls == len(hotter.units)


def test_errors_are_linked_not_cached_and_retried(make_ctx, fake_server, openai_model,
                                                  sentinel_key) -> None:
    ctx = make_ctx([openai_model(fake_server())])
    bad = fingerprint({"model": "gpt-4o", "messages": build_messages(ctx.unit("u-class"), ctx)})
    server = fake_server(faults=lambda n, body: "500" if fingerprint(body) == bad else None)
    ctx = make_ctx([openai_model(server)], run_id="run-2")
    report = run_generation(ctx, progress=False, retry_policy=FAST)
    assert report.errors == 1 and report.calls == len(ctx.units) - 1
    assert "HTTP 500" in report.models["openai/gpt-4o"].error_samples[0]
    assert "gave up after 6 attempts" in ctx.refreshed().summary_error("u-class",
                                                                       "openai/gpt-4o")
    server.faults = None
    retry = run_generation(ctx, progress=False)
    assert (retry.calls, retry.reused, retry.errors) == (1, len(ctx.units) - 1, 0)
    assert server.successes == len(ctx.units)
    assert set(summaries(ctx, "openai/gpt-4o")) == {u.id for u in ctx.units}


def test_empty_answers_are_errors_without_paying_twice(make_ctx, fake_server, openai_model,
                                                       sentinel_key) -> None:
    server = fake_server(respond=lambda body: Reply("", 10, 0))
    ctx = make_ctx([openai_model(server)])
    first = run_generation(ctx, progress=False)
    assert first.errors == len(ctx.units) and first.calls == len(ctx.units)
    second = run_generation(ctx, progress=False)
    assert second.errors == len(ctx.units) and second.calls == 0
    assert "returned an empty summary" in second.models["openai/gpt-4o"].error_samples[0]


def test_cost_cap_stops_new_calls_and_a_later_run_finishes(make_ctx, fake_server,
                                                           openai_model,
                                                           sentinel_key, capsys) -> None:
    # Every call costs exactly $0.01: 1000 output tokens at $10 per million.
    server = fake_server(respond=lambda body: Reply("A summary.", 0, 1000))
    ctx = make_ctx([openai_model(server, inputCostPerMillion=0.0,
                                 outputCostPerMillion=10.0)])
    n = len(ctx.units)
    capped = run_generation(ctx, parallel=1, max_cost_usd=0.03, progress=False)
    assert capped.cap_reached and capped.calls == 3 and capped.skipped == n - 3
    assert capped.spent_usd == pytest.approx(0.03)
    assert any("cost cap $0.03 reached" in line for line in capped.lines())
    assert "cost cap $0.03 reached ($0.0300 spent); no new calls" in capsys.readouterr().err
    rest = run_generation(ctx, parallel=1, progress=False)
    assert rest.calls == n - 3 and not rest.cap_reached
    assert server.successes == n


def test_unknown_price_is_none_not_zero(make_ctx, fake_server, openai_model,
                                        sentinel_key) -> None:
    server = fake_server()
    ctx = make_ctx([openai_model(server, model="house-model-unmapped")])
    report = run_generation(ctx, progress=False)
    stats = report.models["openai/house-model-unmapped"]
    assert stats.cost is None and stats.unknown_cost_calls == len(ctx.units)
    assert "cost unknown" in "\n".join(report.lines())
    assert all(s.generation_metadata.cost is None
               for s in summaries(ctx, "openai/house-model-unmapped").values())


def test_dry_run_estimates_and_calls_nothing(make_ctx, fake_server, openai_model,
                                             sentinel_key, builtin_models) -> None:
    server = fake_server()
    ctx = make_ctx([openai_model(server), openai_model(server, model="house-model"),
                    builtin_models[0]])
    rows = {r.model_id: r for r in estimate_generation(ctx)}
    n = len(ctx.units)
    gpt = rows["openai/gpt-4o"]
    assert (gpt.phase, gpt.calls, gpt.cached, gpt.reused) == ("generation", n, 0, 0)
    assert gpt.input_tokens > 0 and gpt.output_tokens > 0
    assert gpt.cost == pytest.approx(gpt.input_tokens * 2.5e-6 + gpt.output_tokens * 1e-5)
    assert gpt.max_cost == pytest.approx(gpt.input_tokens * 2.5e-6 + n * 500 * 1e-5)
    assert rows["openai/house-model"].cost is None
    assert rows["builtin/docstring"].calls == 0 and rows["builtin/docstring"].cost == 0.0
    lines = format_estimate(list(rows.values()))
    text = "\n".join(lines)
    assert "openai/gpt-4o" in text and "unknown" in text and "price unknown for" in text
    assert lines[-2].startswith("total") and f"{2 * n:,}" in lines[-2]
    assert server.chat_requests == 0
    # After a generation, a re-run would need nothing; a new run (another configuration
    # id on the same units) reuses the stored summaries, and the dry run links none.
    run_generation(ctx, progress=False)
    assert all(r.calls == 0 and r.reused == n for r in estimate_generation(ctx))
    other = make_ctx(ctx.settings.models.model_dump(by_alias=True)["test"], run_id="run-2")
    again = {r.model_id: r for r in estimate_generation(other)}["openai/gpt-4o"]
    assert (again.calls, again.reused) == (0, n)
    assert all(not isinstance(v, GeneratedSummary)
               for v in other.store.run_summaries("run-2").values())


def test_no_key_in_anything_the_run_writes(make_ctx, fake_server, openai_model, sentinel_key,
                                           tmp_path: Path, capfd) -> None:
    faults = {2: "401", 4: "500", 6: "malformed", 7: "400"}
    server = fake_server(faults=lambda n, body: faults.get(n))
    ctx = make_ctx([openai_model(server)])
    report = run_generation(ctx, progress=True, retry_policy=FAST)
    assert report.errors == 2                       # 401 and 400 are not retried
    print("\n".join(report.lines()))
    assert server.authorizations == {f"Bearer {sentinel_key}"}   # the key was really used
    ctx.store.close()
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.startswith("store.sqlite") for p in written)
    for path in written:
        assert sentinel_key.encode() not in path.read_bytes(), path
    out, err = capfd.readouterr()
    assert sentinel_key not in out + err


def test_throughput_under_a_server_rate_limit(make_ctx, fake_server, openai_model,
                                              sentinel_key, unit_factory) -> None:
    """A small version of benchmarks/perf/generation_throughput.py: 150 summaries against
    a 50 req/s limit with 100 ms latency, losing none, paced under the limit (few 429s).

    The 90% bar is the benchmark's (1,000 calls, docs/performance.md). Here no rate is
    asserted: a rate is the machine's as much as the pipeline's (on a shared 2-CPU machine
    at load 13 this test measured 75% of the limit, from CPU starvation, and a bound of
    50% is a bet on the load). What a serialised pipeline would show on any machine is
    its calls one at a time: the server counts how many it held at once, each for its
    100 ms of latency."""
    warm = fake_server()   # litellm's import and first-call set-up are not throughput
    complete(ModelConfig(provider="openai", model_name="gpt-4o", api_endpoint=warm.base_url),
             [{"role": "user", "content": "warm-up"}])
    server = fake_server(latency_s=0.1, rate_limit_per_s=50)
    ctx = make_ctx([openai_model(server, requestsPerMinute=3000)], units=unit_factory(146))
    report = run_generation(ctx, parallel=16, progress=False)
    assert report.generated == 150 and report.errors == 0
    assert server.successes == 150 and len(server.successes_by_fingerprint) == 150
    assert server.statuses[429] <= 15
    # Several calls in their latency at once (about 5 at the limit's pace; 1 serialised).
    assert server.peak["gpt-4o"] >= 3


def test_progress_reports_calls_and_cost_through_the_run_progress(
        make_ctx, fake_server, openai_model, sentinel_key) -> None:
    """Generation counts its calls and their cost on the run's progress (tests/core/test_progress.py
    covers the display itself)."""
    server = fake_server()
    stream = io.StringIO()
    ctx = dataclasses.replace(make_ctx([openai_model(server)]), progress=Progress(
        stream, tty=False, interval_s=0.0, moment_s=0.0))
    report = run_generation(ctx, progress=True)
    lines = stream.getvalue().splitlines()
    n = len(ctx.units)
    assert report.calls == n and lines
    assert all(line.startswith("summarybench generation calls: ") for line in lines)
    assert f"{n}/{n}" in lines[-1] and "cost $" in lines[-1] and "\r" not in stream.getvalue()
    quiet = io.StringIO()
    other = dataclasses.replace(make_ctx([openai_model(server)], run_id="run-quiet"),
                                progress=Progress(quiet, tty=False, interval_s=0.0,
                                                  moment_s=0.0))
    run_generation(other, progress=False)
    assert quiet.getvalue() == ""


def test_a_reused_run_id_regenerates_after_a_parameter_change(make_ctx, fake_server,
                                                              openai_model,
                                                              sentinel_key) -> None:
    server = fake_server()
    run_generation(make_ctx([openai_model(server)]), progress=False)
    changed = make_ctx([openai_model(server, maxTokens=200)])         # same run id
    report = run_generation(changed, progress=False)
    assert report.calls == len(changed.units) and report.reused == 0
    assert all(s.generation_metadata.max_tokens == 200
               for s in summaries(changed, "openai/gpt-4o").values())
