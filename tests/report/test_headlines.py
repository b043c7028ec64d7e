"""Issue 33, "headlines that follow the evidence": a ranking that rests only on evaluators
that failed external validation (docs/validity.md), or on one family, says so in its first
line and in the key findings, in the terminal and both reports; ties and differences are
worded as the significance test has them ("not significant" unless the scores are equal).
"""

from __future__ import annotations

import json
import re

import pytest

from pytest_summarybench.aggregate.recommend import _best_overall
from pytest_summarybench.schemas import FamilyScores, ModelRanking
from pytest_summarybench.schemas.report import SignificanceTest
from tests.fakes.project import write_bench_module, write_code

CODE = {
    "ledger/accounts.py": '''
        """Customer accounts of a small ledger."""


        def open_account(owner: str, deposit: float) -> dict:
            """Create an account for an owner with an opening deposit."""
            if deposit < 0:
                raise ValueError("a deposit cannot be negative")
            return {"owner": owner, "balance": deposit, "history": [deposit]}


        def withdraw(account: dict, amount: float) -> float:
            """Take money out of an account unless it would go below zero."""
            if amount > account["balance"]:
                raise ValueError("insufficient funds")
            account["balance"] -= amount
            account["history"].append(-amount)
            return account["balance"]


        def monthly_interest(account: dict, rate: float) -> float:
            """Credit one month of interest at an annual rate and return it."""
            interest = round(account["balance"] * rate / 12, 2)
            account["balance"] += interest
            account["history"].append(interest)
            return interest


        def statement_lines(account: dict) -> list[str]:
            """Format every movement of the account as a line of a statement."""
            lines = []
            for n, amount in enumerate(account["history"], start=1):
                sign = "+" if amount >= 0 else "-"
                lines.append(f"{n:>3} {sign}{abs(amount):.2f}")
            return lines
        ''',
    "ledger/rates.py": '''
        def compound(principal: float, rate: float, years: int) -> float:
            """Grow a principal at a yearly rate compounded once a year."""
            value = principal
            for _ in range(years):
                value *= 1 + rate
            return round(value, 2)


        def parse_rate(text: str) -> float:
            """Read a percentage such as '4.5%' as a fraction."""
            cleaned = text.strip().rstrip("%")
            return float(cleaned) / 100


        def best_offer(offers: dict[str, float]) -> str:
            """Name the bank whose offered rate is highest."""
            if not offers:
                raise ValueError("no offers to compare")
            return max(sorted(offers), key=lambda bank: offers[bank])
        ''',
}


def test_a_no_key_run_says_first_that_its_ranking_rests_on_a_failed_evaluator(
        pytester: pytest.Pytester) -> None:
    # A codebase of the user's own, no configuration, no key: the default offline run
    # ranks on contrastive/embedding alone (no bundled queries here, no judge).
    write_code(pytester, CODE)
    write_bench_module(pytester)
    result = pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                           "-p", "no:randomly", "--sb-codebase", "code",
                                           "--sb-output", "out")
    text = result.stdout.str()
    lines = result.stdout.lines
    first = lines[next(i for i, line in enumerate(lines) if "summarybench ranking" in line)
                  + 1]
    assert first.startswith("CAUTION: The ranking rests only on contrastive/embedding, "
                            "which failed external validation"), text
    assert "tau +0.40 with docstrings" in first
    findings = text[text.index("key findings:"):text.index("families run:")]
    assert "The ranking rests only on contrastive/embedding" in findings
    # The ladder's verdict no longer stands alone above the external failure.
    assert "but failed external validation" in text
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    assert data["basis"]["evaluators"] == ["contrastive/embedding"]
    assert data["basis"]["external"][0]["validated"] is False
    for name in ("report.md", "report.html"):
        report = (pytester.path / "out" / name).read_text()
        caution = report.index("The ranking rests only on contrastive/embedding")
        assert caution < report.index("Key findings") < report.index("Rankings")
    # Unequal scores are never called tied.
    for rec in data["recommendations"]:
        if rec["kind"] == "no_single_best":
            scores = re.findall(r"\((\d\.\d{3})", rec["text"])
            assert "tied" not in rec["text"] or len(set(scores)) <= 1, rec["text"]


def _ranking(model: str, score: float, group: str) -> ModelRanking:
    return ModelRanking(rank=1, model_id=model, model_name=model, overall_score=score,
                        scores=FamilyScores(contrastive=score), significance_group=group,
                        units=40)


def _test(a: str, b: str, p: float) -> SignificanceTest:
    return SignificanceTest(model_a=a, model_b=b, metric="overall", mean_difference=0.12,
                            p_value=p, significant=False, confidence_interval=(-0.01, 0.25),
                            p_adjusted=p)


def test_a_difference_the_test_cannot_confirm_is_not_significant_not_a_tie() -> None:
    best = _ranking("builtin/identifiers", 0.895, "a")
    other = _ranking("builtin/signature", 0.775, "a")
    rec = _best_overall(best, [other], [_test(best.model_id, other.model_id, 0.053)])
    assert rec.kind == "no_single_best"
    assert "tied" not in rec.text
    assert rec.text == ("builtin/identifiers (0.895) is ahead of builtin/signature (0.775, "
                        "p = 0.053) by a difference that is not significant (paired t-tests "
                        "on per-unit overall scores, Holm-corrected)")


def test_equal_scores_are_tied() -> None:
    best = _ranking("openai/alpha", 0.5, "a")
    twin = _ranking("openai/alpha-twin", 0.5, "a")
    rec = _best_overall(best, [twin])
    assert rec.text == ("openai/alpha and openai/alpha-twin are tied: the same overall "
                        "score, 0.500")


def test_a_ranking_on_one_family_says_so() -> None:
    from pytest_summarybench.report.findings import evidence_caveat
    from pytest_summarybench.schemas.report import RankingBasis
    from tests.report.synthetic_report import make_report

    report = make_report()
    report.basis = RankingBasis(families=["judge"], evaluators=["judge/pointwise"])
    assert evidence_caveat(report) == (
        "The ranking rests on one family alone, judge (judge/pointwise; not externally "
        "validated): no other family confirms it")
    report.basis = RankingBasis(families=["judge", "contrastive"],
                                evaluators=["contrastive/embedding", "judge/pointwise"])
    assert evidence_caveat(report) is None


def test_one_definition_of_the_overall_difference_everywhere() -> None:
    """Issue 33: `compare` printed "+0.426 overall; per unit +0.484 on average" while the
    report's significance table called +0.484 the overall difference."""
    from pytest_summarybench.cli.compare import _lines
    from pytest_summarybench.report.render import render_html, render_markdown
    from pytest_summarybench.report.terminal import terminal_lines
    from tests.report.synthetic_report import make_report

    report = make_report()
    c = report.comparisons[0]
    test = next(t for t in report.statistics.significance_tests
                if (t.model_a, t.model_b, t.metric) == (c.model_a, c.model_b, "overall"))
    assert c.mean_unit_difference == test.mean_difference
    overall = f"overall difference {c.score_difference:+.3f}"
    per_unit = f"mean per-unit difference {test.mean_difference:+.3f}"
    assert abs(c.score_difference - (report.rankings[0].overall_score
                                     - report.rankings[1].overall_score)) < 1e-12
    compared = "\n".join(_lines(report, c.model_a, c.model_b, True, {}))
    top = next(line for line in terminal_lines(report) if line.startswith("top pair:"))
    markdown, html = render_markdown(report), render_html(report)
    for text in (compared, top, markdown, html):
        assert overall in text and per_unit in text
        assert "on average" not in text and " overall; per unit" not in text  # old wording
    for text in (markdown, html):
        assert "Mean per-unit" in text and "as ranked" in text


def test_no_best_model_when_the_ranking_and_the_per_unit_test_disagree() -> None:
    """Issue 33's second pass (jinja2): builtin/docstring ranked first on the overall score
    (0.673 against 0.612) while the paired test found openai/good-coder better unit by
    unit (-0.123, p = 0.0066), and the key finding read "Best overall: builtin/docstring"."""
    best = _ranking("builtin/docstring", 0.673, "a")
    other = _ranking("openai/good-coder", 0.612, "b")
    test = SignificanceTest(model_a=best.model_id, model_b=other.model_id, metric="overall",
                            mean_difference=-0.123, p_value=0.002, significant=True,
                            confidence_interval=(-0.203, -0.05), p_adjusted=0.0066)
    rec = _best_overall(best, [other], [test])
    assert rec.kind == "no_single_best"
    assert rec.text.startswith("builtin/docstring ranks first on the overall score (0.673 "
                               "against 0.612), but openai/good-coder scores higher unit by "
                               "unit (mean per-unit difference -0.123, p = 0.0066")
    agreeing = test.model_copy(update={"mean_difference": 0.05})
    assert _best_overall(best, [other], [agreeing]).kind == "best_overall"


def test_an_unhealthy_run_prints_no_verdict_and_counts_its_unscored_models() -> None:
    """The new user's pass on rich: under `UNHEALTHY RUN` the terminal still printed
    `top pair: ... (p=3.59e-19, significant)` and "50 scored for every model" while the
    ranking showed openai/lazy-codr with 0 units."""
    from pytest_summarybench.report.terminal import terminal_lines
    from pytest_summarybench.schemas.report import RunHealth
    from tests.report.synthetic_report import make_report

    report = make_report()
    lazy = report.rankings[-1]
    lazy.units = 0
    units = {r.units for r in report.rankings if r.units}
    assert len(units) == 1
    report.metadata.health = RunHealth(
        healthy=False, problems=[f"{lazy.model_id} produced no summary: HTTP 404"],
        min_summary_share=0.9, min_family_share=0.5)
    lines = terminal_lines(report)
    assert lines[0].endswith(f"{units.pop():,} scored per model that scored any; no unit "
                             f"scored for 1 model ({lazy.model_id})"), lines[0]
    assert not any("scored for every model" in line for line in lines)
    top = next(line for line in lines if line.startswith("top pair:"))
    assert "not a verdict: the run is unhealthy" in top
    assert "significant" not in top
    # A healthy run keeps its verdict.
    report.metadata.health = None
    top = next(line for line in terminal_lines(make_report()) if line.startswith("top pair:"))
    assert "significant" in top and "not a verdict" not in top
