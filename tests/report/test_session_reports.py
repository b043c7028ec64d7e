"""Reports written by a pytest session, rebuilt from the store by ``summarybench report``
and ``compare``, and the CI gate: scenarios run through pytester like tests/plugin/test_plugin.py.

The evaluator is a deterministic one from the ``pytest_summarybench_evaluators`` hook
(a contrastive and a retrieval score from the word overlap of the summary with the unit's
name), so the built-in offline models rank in a known order; ``DEGRADED`` models get no
credit, to make a regression against a baseline."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CODE = {
    "stock/levels.py": '''
        def reorder_quantity(on_hand: int, target: int, pack: int) -> int:
            """Packs to order so that stock reaches the target level."""
            short = max(target - on_hand, 0)
            return -(-short // pack)


        def is_low_stock(on_hand: int, threshold: int = 5) -> bool:
            """Whether a product has fallen below its reorder threshold."""
            low = on_hand < threshold
            return low
        ''',
    "stock/ledger.py": '''
        class StockLedger:
            """Movements of stock in and out of the warehouse."""

            def __init__(self) -> None:
                self.moves: list[tuple[str, int]] = []
                self.closed = False

            def receive(self, sku: str, qty: int) -> None:
                """Book a delivery of a product into stock."""
                self.moves.append((sku, qty))
                return None
        ''',
    "web/format.ts": '''
        export function formatPrice(pence: number): string {
          const pounds = pence / 100;
          return `£${pounds.toFixed(2)}`;
        }
        ''',
}

EVALUATOR = '''
    from pytest_summarybench.evaluators import Evaluator
    from pytest_summarybench.schemas import ScoreRecord


    def overlap(ctx, item):
        if item.model_id in DEGRADED:
            return 0.0
        unit = ctx.unit(item.unit_id)
        summary = ctx.summary(item.unit_id, item.model_id).summary.lower()
        words = [w for w in unit.short_name.lower().replace("_", " ").split() if w]
        return sum(w in summary for w in words) / max(1, len(words))


    class Contrastive(Evaluator):
        name = "contrastive/embedding"
        family = "contrastive"

        def evaluate(self, item, ctx):
            return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                                evaluator=self.name,
                                metrics={"correct": float(overlap(ctx, item) > 0)})]


    class Retrieval(Contrastive):
        name = "retrieval/embedding"
        family = "retrieval"

        def evaluate(self, item, ctx):
            rank = 1 + round(4 * (1 - overlap(ctx, item)))
            return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                                evaluator=self.name, details={"queryType": "what"},
                                metrics={"hit@1": float(rank == 1), "hit@5": float(rank <= 5),
                                         "reciprocal_rank": 1 / rank})]

        def summarize(self, records, ctx):
            return {"queries": len(records),
                    "byQueryType": {"what": {"mrr": sum(r.metrics["reciprocal_rank"]
                                                        for r in records) / len(records)}}}


    def pytest_summarybench_evaluators(config):
        return [Contrastive(), Retrieval()]
'''


def _write_project(root: Path, *, degraded: tuple[str, ...] = (), gate: str = "") -> None:
    for rel, text in CODE.items():
        path = root / "code" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    (root / "conftest.py").write_text(f"DEGRADED = {set(degraded)!r}\n"
                                      + textwrap.dedent(EVALUATOR))
    (root / "test_bench.py").write_text(
        "def test_summary(sb_case):\n    assert sb_case.evaluate()\n")
    (root / "summarybench.yaml").write_text(textwrap.dedent("""
        name: report-test
        codebase:
          root: code
          languages: [python, typescript]
        extraction:
          minLines: 2
        evaluation:
          sampling: all
          judge: {enabled: false}
          downstream: {enabled: false}
        """) + textwrap.dedent(gate))


def _project(pytester: pytest.Pytester, *, degraded: tuple[str, ...] = (),
             gate: str = "") -> None:
    _write_project(pytester.path, degraded=degraded, gate=gate)


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                         "--sb-output", "out", *args)


def _cli(cwd: Path, *commands: list[str]) -> subprocess.CompletedProcess[str]:
    """CLI commands in one fresh interpreter, which must not even import the model layer
    (``report`` rebuilds from the store alone)."""
    probe = ("import sys\nfrom pytest_summarybench.cli import main\n"
             f"codes = [main(args) for args in {list(commands)!r}]\n"
             "assert 'litellm' not in sys.modules, 'report imported the model layer'\n"
             "sys.exit(max(codes))\n")
    return subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def _cli_each(cwd: Path, *commands: list[str]) -> list[tuple[int, str, str]]:
    """Each command's exit code, stdout and stderr, all in one fresh interpreter (not in
    this process: pytester unloads what a test imported, and numpy cannot be reloaded)."""
    probe = textwrap.dedent(f"""
        import contextlib, io, json, sys
        from pytest_summarybench.cli import main
        results = []
        for args in {list(commands)!r}:
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(args)
            results.append((code, out.getvalue(), err.getvalue()))
        print(json.dumps(results))
        """)
    done = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [tuple(r) for r in json.loads(done.stdout)]  # type: ignore[misc]


def test_session_writes_every_format_and_the_cli_rebuilds_them(
        pytester: pytest.Pytester, run_mode: list[str]) -> None:
    _project(pytester)
    result = _run(pytester, *run_mode)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["rank*model*overall*95% CI*group*contrastive*retrieval*",
                                 "group: models sharing a letter*",
                                 "top pair: builtin/* vs builtin/*",
                                 "markdown report: *report.md", "html report: *report.html"])
    out = pytester.path / "out"
    formats = (("json", "results.json"), ("markdown", "report.md"), ("html", "report.html"))
    rebuilt = _cli(pytester.path, *(["report", "--format", fmt, "--store", "out/store.sqlite",
                                     "--output", f"rebuilt-{name}"] for fmt, name in formats))
    assert rebuilt.returncode == 0, rebuilt.stderr
    data = json.loads((out / "results.json").read_text())
    # The rebuilt HTML links to the run's explorer where it lies from the rebuilt file.
    own = f"out/runs/{data['metadata']['run']['id']}/explorer.html"
    for _, name in formats:
        rebuilt_text = (pytester.path / f"rebuilt-{name}").read_text()
        if name == "report.html":
            assert f'href="{own}#' in rebuilt_text
            rebuilt_text = rebuilt_text.replace(f'href="{own}', 'href="explorer.html')
        assert rebuilt_text == (out / name).read_text()
    assert data["evaluatorDetails"]["retrieval/embedding"]["queries"] > 0
    assert data["statistics"]["significanceTests"][0]["metric"] == "overall"
    assert "## Evaluator details: Retrieval" in (out / "report.md").read_text()


def test_cli_compare_errors_and_pytest_html_rows(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = _run(pytester, "--html", "page.html")
    assert result.ret == 0, result.stdout.str()
    store = "out/store.sqlite"
    detailed, missing, no_store, bad_run = _cli_each(
        pytester.path,
        ["compare", "signature", "builtin/identifiers", "--detailed", "--store", store],
        ["compare", "nope", "builtin/lead", "--store", store],
        ["report", "--store", "elsewhere.sqlite"],
        ["report", "--store", store, "--run", "r0"])
    code, out, _ = detailed
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("builtin/signature vs builtin/identifiers (run ")
    assert any(line.startswith("winner: ") and "builtin/signature" in line for line in lines)
    assert any(line.startswith("pairwise record: ") for line in lines)
    assert any(line.startswith("  overall ") for line in lines)
    assert "by language:" in lines and "by code type:" in lines
    code, out, err = missing
    assert code == 2 and out == ""
    assert err.startswith("summarybench compare: error: model 'nope' is not in ")
    assert len(err.splitlines()) == 1
    code, _, err = no_store
    assert code == 2 and "no store at elsewhere.sqlite" in err and "Traceback" not in err
    code, _, err = bad_run
    assert code == 2 and "has no run 'r0'" in err

    # pytest-html: each benchmark row shows the unit, its summary and its scores.
    page = (pytester.path / "page.html").read_text()
    assert "Unit" in page and "Summary" in page and "Scores" in page
    assert "reorder_quantity" in page and "Packs to order so that stock reaches" in page
    assert "contrastive/embedding: correct=1" in page


def test_gate_thresholds_fail_the_session_naming_model_and_metric(
        pytester: pytest.Pytester) -> None:
    # One mode: the thresholds are checked by report/gate.py (tests/report/test_gate.py)
    # on the controller alike with and without workers; a gate failing a session of two
    # workers is tests/plugin/test_plugin.py::test_hooks_record_score_and_ranking_gate[n2].
    _project(pytester, gate="""
        gate:
          minOverall: {builtin/identifiers: 0.5, builtin/shuffled: 0.9}
          minFamily: {retrieval: 0.5}
        """)
    result = _run(pytester)
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        "GATE FAILED: builtin/shuffled: overall 0.* < gate.minOverall 0.900",
        "GATE FAILED: builtin/lead: retrieval 0.* < gate.minFamily.retrieval 0.500"])
    result.stdout.no_fnmatch_line("GATE FAILED: builtin/identifiers*")
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    assert any(m.startswith("builtin/shuffled: overall") for m in data["gateFailures"])
    assert "gate.minOverall" in (pytester.path / "out" / "report.md").read_text()


def test_gate_baseline_regression(pytester: pytest.Pytester) -> None:
    _project(pytester)
    assert _run(pytester, "--sb-seed", "1").ret == 0
    first = json.loads((pytester.path / "out" / "results.json").read_text())
    first_run = first["metadata"]["benchmarkId"]

    # identifiers loses all credit in a new run (another seed, so another run id in the
    # same store); the baseline is the first run, by id: a significant drop.
    _project(pytester, degraded=("builtin/identifiers",),
             gate=f"gate:\n  baseline: {first_run}\n  maxRegression: 0.05\n")
    result = _run(pytester, "--sb-seed", "2")
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        f"GATE FAILED: builtin/identifiers: overall regressed 0.* against baseline "
        f"{first_run} (p=* Holm-adjusted on * shared units; gate.maxRegression 0.050)"])
    result.stdout.no_fnmatch_line("GATE FAILED: builtin/lead*")
    result.stdout.fnmatch_lines([f"baseline {first_run}: *builtin/identifiers -0.*"])
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    identifiers = next(r for r in data["rankings"] if r["modelId"] == "builtin/identifiers")
    assert identifiers["deltaFromBaseline"] < -0.05
    # The rebuilt report says what the session said, gate verdict and baseline included.
    rebuilt = _cli(pytester.path, ["report", "--format", "json", "--store", "out/store.sqlite",
                                   "--output", "rebuilt.json"])
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads((pytester.path / "rebuilt.json").read_text()) == data
