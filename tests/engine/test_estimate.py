"""``engine.estimate``: the dry run prices the very plan the run makes. The claim that
matters is checked by making the calls: the estimate's call count per phase equals what
the fake server then receives. (This replaces a pytester session that checked the same
through ``--sb-dry-run`` and a second session; the option's wiring is checked by
``tests/cli``.)"""

from __future__ import annotations

from collections import Counter

from pytest_summarybench.engine.estimate import (
    EstimateRow,
    estimate_generation,
    estimate_plan,
    format_estimate,
    generation_reasons,
)
from pytest_summarybench.engine.plan import plan_calls
from pytest_summarybench.engine.prepare import prepare_run
from pytest_summarybench.engine.warmup import WarmUp
from tests.engine.toy import PHASE, PREPARE_PHASE, Log, Toy, served


def _rows(rows: list[EstimateRow]) -> dict[tuple[str, str], EstimateRow]:
    return {(r.phase, r.model_id): r for r in rows}


def test_the_estimate_counts_the_calls_the_run_then_makes(make_run, server) -> None:
    ctx = make_run(test=[served(server, "alpha"), served(server, "beta")],
                   judges=[served(server, "gamma")])
    toy = Toy(Log(), rounds=1, setup_calls=3)
    items = toy.items(ctx)
    rows = estimate_plan(plan_calls(ctx, {toy.name: toy}, items))
    assert server.chat_requests == 0
    prepare_run(ctx, {toy.name: toy}, items, warm_up=WarmUp(), say=lambda *a, **k: None)
    made = Counter(server.respond.phases)
    by_phase: Counter[str] = Counter()
    for r in rows:
        by_phase[r.phase] += r.calls
    assert by_phase == made
    assert made == {"generation": 2 * len(ctx.units), PHASE: len(items), PREPARE_PHASE: 3}
    # rows per phase, model and role, generation first
    assert [(r.phase, r.model_id, r.role) for r in rows] == [
        ("generation", "local/alpha", "test"), ("generation", "local/beta", "test"),
        (PHASE, "local/gamma", "judge"), (PREPARE_PHASE, "local/gamma", "judge")]


def test_a_rerun_is_estimated_free_summaries_reused_and_answers_cached(make_run, server
                                                                       ) -> None:
    ctx = make_run(test=[served(server, "alpha")], judges=[served(server, "gamma")])
    toy = Toy(Log())
    items = toy.items(ctx)
    prepare_run(ctx, {toy.name: toy}, items, warm_up=WarmUp(), say=lambda *a, **k: None)
    rows = _rows(estimate_plan(plan_calls(ctx.refreshed(), {toy.name: toy}, items)))
    n = len(ctx.units)
    generation = rows[("generation", "local/alpha")]
    assert (generation.calls, generation.reused) == (0, n)
    judged = rows[(PHASE, "local/gamma")]
    assert (judged.calls, judged.cached, judged.input_tokens) == (0, n, 0)


def test_tokens_and_cost_follow_the_prompts_and_the_model_s_prices(make_run, server) -> None:
    priced = served(server, "alpha", inputCostPerMillion=2.0, outputCostPerMillion=10.0,
                    maxTokens=300)
    ctx = make_run(test=[priced])
    [row] = estimate_generation(ctx)
    assert row.calls == len(ctx.units) and row.input_tokens > 0
    assert 0 < row.output_tokens <= 300 * row.calls
    assert row.cost is not None and row.max_cost is not None
    expected = row.input_tokens * 2e-6 + row.output_tokens * 1e-5
    assert abs(row.cost - expected) < 1e-12
    assert row.max_cost >= row.cost  # every answer as long as max_tokens


def test_an_unknown_price_is_said_not_guessed(make_run, server) -> None:
    ctx = make_run(test=[served(server, "alpha")])
    rows = estimate_generation(ctx)
    assert rows[0].cost is None and rows[0].max_cost is None
    lines = format_estimate(rows)
    assert lines[0].startswith("summarybench dry run: nothing is called")
    header, row, total = lines[1].split(), lines[2].split(), lines[3].split()
    assert header[:4] == ["phase", "model", "role", "calls"]
    assert row[:4] == ["generation", "local/alpha", "test", str(len(ctx.units))]
    assert total[0] == "total" and total[-3:] == ["$0.0000", "+", "unknown"]
    assert lines[-1] == ("price unknown for local/alpha: set inputCostPerMillion and "
                         "outputCostPerMillion in the model's config to estimate it")


def test_built_in_models_cost_no_call(make_run) -> None:
    ctx = make_run()
    rows = estimate_generation(ctx)
    assert [(r.model_id, r.calls, r.cost) for r in rows] == [
        ("builtin/docstring", 0, 0.0), ("builtin/identifiers", 0, 0.0)]
    assert format_estimate(rows)[-1].split()[:2] == ["total", "0"]


def test_summaries_of_units_outside_the_sample_are_counted_per_reason(make_run, server
                                                                       ) -> None:
    """The new user's pass on rich: each model made 105 summary calls for a sample of 50,
    and nothing said the other 55 were the candidates downstream tasks show. The dry run
    now says how many summaries each model is asked for, and why, and the run makes
    exactly that many."""
    ctx = make_run(test=[served(server, "alpha")], **{"evaluation.sampling": "random",
                                                       "evaluation.sampleSize": 1})
    sampled = {u.id for u in ctx.units}
    outside = sorted(u.id for u in ctx.all_units if u.id not in sampled)
    assert len(sampled) == 1 and len(outside) == 2

    class Shows(Toy):
        """Reads, beside its unit's summary, those of the units the sample does not hold
        (as a downstream task shows its candidates)."""

        def summaries(self, item, ctx):  # type: ignore[no-untyped-def]
            return [(item.unit_id, item.model_id), *((u, item.model_id) for u in outside)]

    toy = Shows(Log())
    items = toy.items(ctx)
    plan = plan_calls(ctx, {toy.name: toy}, items)
    assert generation_reasons(plan) == [
        "summaries per model (local/alpha): 3 = 1 of sampled units + 2 of units outside the "
        "sample that toy/echo shows (docs/evaluators.md#summaries-outside-the-sample)"]
    assert _rows(estimate_plan(plan))[("generation", "local/alpha")].calls == 3
    prepare_run(ctx, {toy.name: toy}, items, warm_up=WarmUp(), say=lambda *a, **k: None)
    assert Counter(server.respond.phases)["generation"] == 3
    # Only sampled units: nothing to explain.
    plain = Toy(Log())
    assert generation_reasons(plan_calls(ctx, {plain.name: plain}, plain.items(ctx))) == []
