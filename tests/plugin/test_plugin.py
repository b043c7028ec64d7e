"""Integration scenarios of the plugin, each in three modes (plain, -n 0, -n 2).

The codebase is written by each test into its pytester directory; the evaluator is a
deterministic one registered through the ``pytest_summarybench_evaluators`` hook, so
these tests exercise the harness (collection, generation on the controller, records on
reports across xdist, aggregation, results.json) independently of the built-in
evaluators, which have suites of their own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fakes.project import session_results, write_bench_module, write_code

CODE = {
    "shop/pricing.py": '''
        def apply_discount(price: float, pct: float) -> float:
            """Reduce a price by a percentage discount, never below zero."""
            cut = price * pct / 100
            return max(price - cut, 0.0)


        def add_tax(price: float, rate: float = 0.2) -> float:
            """Add value-added tax to a net price."""
            gross = price * (1 + rate)
            return round(gross, 2)
        ''',
    "shop/cart.py": '''
        class Cart:
            """A shopping cart holding line items and their quantities."""

            def __init__(self) -> None:
                self.items: dict[str, int] = {}
                self.note = ""

            def add(self, sku: str, qty: int = 1) -> None:
                """Put a quantity of a product into the cart."""
                self.items[sku] = self.items.get(sku, 0) + qty
                return None
        ''',
}

# Scores an item 1.0 when the summary shares a word with the unit's name, so the
# built-in models rank in a fixed, known order; "shop/cart.py" items of builtin/lead
# raise an EvaluationError to exercise error recording.
EVALUATOR = '''
    from pytest_summarybench.evaluators import EvaluationError, Evaluator
    from pytest_summarybench.schemas import ScoreRecord


    class NameOverlap(Evaluator):
        name = "contrastive/embedding"
        family = "contrastive"

        def prepare(self, ctx):
            assert ctx.summary(ctx.units[0].id, ctx.models[0].id) is not None

        def evaluate(self, item, ctx):
            unit = ctx.unit(item.unit_id)
            if FAIL and item.model_id == "builtin/lead" and unit.path == "shop/cart.py":
                raise EvaluationError("scripted failure for cart")
            summary = ctx.summary(item.unit_id, item.model_id).summary.lower()
            words = unit.short_name.lower().replace("_", " ").split()
            hit = any(w in summary for w in words)
            return [ScoreRecord(unit_id=item.unit_id, model_id=item.model_id,
                                evaluator=self.name, metrics={"correct": float(hit)})]


    def pytest_summarybench_evaluators(config):
        return [NameOverlap()]
'''


def _project(pytester: pytest.Pytester, *, fail: bool = False, extra_conftest: str = "") -> None:
    write_code(pytester, CODE)
    pytester.makeconftest(f"FAIL = {fail}\n" + textwrap.dedent(EVALUATOR)
                          + textwrap.dedent(extra_conftest))
    write_bench_module(pytester)
    pytester.makefile(".yaml", summarybench=textwrap.dedent("""
        name: plugin-test
        codebase:
          root: code
          languages: [python]
        extraction:
          minLines: 2
        evaluation:
          sampling: all
          judge: {enabled: false}
          retrieval: {enabled: false}
          downstream: {enabled: false}
        """))


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                         "--sb-output", "out", *args)


def _rankings(pytester: pytest.Pytester) -> list[dict]:
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    return data["rankings"]


def test_default_matrix_runs_and_writes_results(pytester: pytest.Pytester,
                                                run_mode: list[str]) -> None:
    _project(pytester)
    result = _run(pytester, *run_mode)
    outcomes = result.parseoutcomes()
    assert result.ret == 0, result.stdout.str()
    # 7 units (2 files, 2 functions, Cart, Cart.__init__, Cart.add) x 5 built-in models,
    # and the validity ladder, on by default offline: 4 documented units x 5 ladder models
    assert outcomes == {"passed": 35 + 4 * 5}
    result.stdout.fnmatch_lines([
        "*summarybench ranking*",
        "rank*model*overall*judge*contrastive*retrieval*downstream*",
        "*families run: contrastive",
        "skipped judge: disabled in the configuration",
        "results: *results.json",
    ])
    rankings = _rankings(pytester)
    assert {r["modelId"] for r in rankings} == {
        "builtin/docstring", "builtin/identifiers", "builtin/lead", "builtin/shuffled",
        "builtin/signature"}
    assert [r["rank"] for r in rankings] == sorted(r["rank"] for r in rankings)
    for r in rankings:
        assert set(r) >= {"rank", "modelId", "overallScore", "scores"}
        assert set(r["scores"]) >= {"contrastive"}
    # identifiers are built from the name: they always share a word with it
    ident = next(r for r in rankings if r["modelId"] == "builtin/identifiers")
    assert ident["overallScore"] == 1.0 and ident["rank"] == 1
    # The ladder is reported, never ranked; its verdict heads the validity section.
    validity = json.loads((pytester.path / "out" / "results.json").read_text())["validity"]
    assert validity["verdict"] and validity["families"][0]["family"] == "contrastive"
    # a 4-unit ladder ties boilerplate and another docstring at 0: low resolution, not a
    # family to distrust; the external figures are quoted from validity/external.json
    result.stdout.fnmatch_lines([
        "instrument validity: every family that scored it orders the known-answer ladder: "
        "contrastive (tau *, low resolution; but failed external validation)",
        "  contrastive: contrastive/embedding: * external validation on *"])
    assert not validity["families"][0]["flagged"]


def test_validate_and_no_validate_together_are_refused(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = _run(pytester, "--sb-validate", "--sb-no-validate")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--sb-validate and --sb-no-validate were both given*"])


def test_rankings_identical_with_and_without_xdist(pytester: pytest.Pytester) -> None:
    # Without the validity ladder, which is never ranked (20 of the 55 items here); the
    # ladder under two workers is test_default_matrix_runs_and_writes_results[n2].
    _project(pytester)
    runs = {}
    for label, args in {"n0": ["-n", "0"], "n2": ["-n", "2"], "noxdist": ["-p", "no:xdist"]
                        }.items():
        result = _run(pytester, "--sb-no-validate", *args)
        assert result.ret == 0, result.stdout.str()
        runs[label] = _rankings(pytester)
    assert runs["n0"] == runs["n2"] == runs["noxdist"]


def test_evaluation_error_fails_that_test_and_is_counted(pytester: pytest.Pytester,
                                                         run_mode: list[str]) -> None:
    _project(pytester, fail=True)
    result = _run(pytester, *run_mode)
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 1 and outcomes["passed"] > outcomes["failed"]
    result.stdout.fnmatch_lines([
        "*contrastive/embedding could not score *builtin/lead*: scripted failure for cart*",
        "errors: builtin/lead contrastive/embedding: * (e.g. *scripted failure for cart)",
    ])
    # One line per failed item: the evaluation error is not printed again as its cause.
    assert "During handling of the above exception" not in result.stdout.str()
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    lead = next(r for r in data["rankings"] if r["modelId"] == "builtin/lead")
    assert lead["errors"] == outcomes["failed"]
    assert data["errors"][0]["modelId"] == "builtin/lead"


def test_k_selects_by_model_and_generation_follows(pytester: pytest.Pytester,
                                                   run_mode: list[str]) -> None:
    _project(pytester)
    result = _run(pytester, "-k", "builtin/docstring and pricing", *run_mode)
    assert result.ret == 0, result.stdout.str()
    assert result.parseoutcomes()["passed"] == 3  # the file and its two functions
    data = session_results(result)
    assert [r["modelId"] for r in data["rankings"]][0] == "builtin/docstring"
    assert data["metadata"]["run"]["complete"] is False
    assert data["metadata"]["run"]["keyword"] == "builtin/docstring and pricing"
    result.stdout.fnmatch_lines(["*builtin/docstring: * generated*"])
    result.stdout.no_fnmatch_line("*builtin/lead: * generated*")


def test_hooks_record_score_and_ranking_gate(pytester: pytest.Pytester,
                                             run_mode: list[str]) -> None:
    _project(pytester, extra_conftest='''

        def pytest_summarybench_record_score(record, config):
            record.metrics["doubled"] = 2 * record.metrics["correct"]


        def pytest_summarybench_ranking(rankings, report, config):
            return [f"{r.model_id} below 0.99" for r in rankings if r.overall_score < 0.99]
        ''')
    result = _run(pytester, *run_mode)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["GATE FAILED: builtin/* below 0.99"])
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    by_model = data["detailed"]["byModel"]["builtin/identifiers"]
    assert by_model["contrastive/embedding:doubled"] == 2.0


@pytest.mark.parametrize(("args", "message"), [
    (["--sb-model", "gpt-4o"], "*--sb-model 'gpt-4o': expected PROVIDER/MODEL*"),
    (["--sb-model", "openai/\udc9bx\x1b[2J"],
     "*--sb-model $'openai/\\x9bx\\x1b[2J': a model name holds no control characters*"),
    (["--sb-eval", "judge,vibes"], "*--sb-eval 'judge,vibes': expected a comma-separated*"),
    (["--sb-sample-size", "0"], "*--sb-sample-size*expected a positive integer, got '0'*"),
    (["--sb-config", "missing.yaml"], "*--sb-config *missing.yaml*: no such file*"),
])
def test_bad_option_values_are_usage_errors(pytester: pytest.Pytester, args: list[str],
                                            message: str) -> None:
    _project(pytester)
    result = _run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_bad_config_value_is_a_usage_error_naming_key(pytester: pytest.Pytester) -> None:
    _project(pytester)
    pytester.makefile(".yaml", summarybench="evaluation:\n  sampleSize: many\n")
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*evaluation.sampleSize = 'many'*integer*"])


def test_missing_codebase_names_the_path(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = _run(pytester, "--sb-codebase", "nowhere")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*codebase.root = *nowhere*not a readable directory*"])


def test_loads_with_autoload_disabled_and_stays_cheap(tmp_path: Path) -> None:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "summarybench", "--help"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    assert "--sb-model=PROVIDER/MODEL" in out.stdout
    # What pytest_configure registers: the state and the controller's hooks.
    probe = ("import sys, pytest_summarybench.plugin, pytest_summarybench.plugin.state, "
             "pytest_summarybench.plugin.controller; "
             "print(sorted(m for m in ('pydantic', 'litellm', 'chromadb', 'tree_sitter', "
             "'numpy', 'scipy', 'yaml') if m in sys.modules))")
    mods = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60)
    assert mods.stdout.strip() == "[]"


def test_a_broken_evaluator_is_skipped_with_its_reason(pytester: pytest.Pytester) -> None:
    _project(pytester, extra_conftest='''

        class Broken:
            name = "retrieval/embedding"
            family = "retrieval"

            def skip_reason(self, ctx):
                return None

            def items(self, ctx):
                raise ValueError("queries.jsonl line 3: missing field 'query'")


        _first = pytest_summarybench_evaluators


        def pytest_summarybench_evaluators(config):
            return [*_first(config), Broken()]
        ''')
    pytester.makefile(".yaml", summarybench=textwrap.dedent("""
        codebase: {root: code, languages: [python]}
        extraction: {minLines: 2}
        evaluation: {sampling: all, judge: {enabled: false}, downstream: {enabled: false}}
        """))
    result = _run(pytester, "--sb-no-validate")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([
        "skipped retrieval: retrieval/embedding: ValueError: queries.jsonl line 3: "
        "missing field 'query'"])
    assert result.parseoutcomes() == {"passed": 35}


def test_redact_masks_secret_looking_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_summarybench.llm.redaction import redact

    monkeypatch.setenv("VOYAGE_API_KEY", "pa-0123456789abcdef")
    monkeypatch.setenv("TEAM_DEPLOYMENT_KEY", "f00dfeedcafe1234")
    monkeypatch.setenv("FEATURE_KEY", "true")
    text = redact("got pa-0123456789abcdef and f00dfeedcafe1234, flag true")
    assert text == "got *** and ***, flag true"


def test_files_skipped_during_extraction_are_listed_in_every_session(
        pytester: pytest.Pytester) -> None:
    """``summarybench extract`` warns about each file it skips; a benchmark session said
    nothing (a name that is not UTF-8, a FIFO, a name with a terminal's escape sequence
    were dropped without a line), and a later session, which finds the codebase extracted,
    has no extraction to print from. Each session lists them from the store: the first
    ten by name, escaped, and the rest counted by reason."""
    import re

    _project(pytester)
    code = pytester.path / "code"
    os.mkfifo(code / "pipe.py")
    (code / "ev\x1b]0;X\x07il.py").write_text("def f(a):\n    b = a\n    return b\n")
    os.mkfifo(code / "ev\x1b]0;X\x07il.py.fifo.py")
    for n in range(12):
        os.mkfifo(code / f"more{n:02}.py")
    bad = os.fsencode(code) + b"/bad\xff.py"
    with open(bad, "wb") as f:
        f.write(b"def g(a):\n    b = a\n    return b\n")
    for session in ("extracts", "finds it extracted"):
        result = _run(pytester, "--sb-no-validate")
        out = result.stdout.str()
        assert result.ret == 0, (session, out)
        raw = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
        assert not raw.search(out.replace("\n", "")), session
        result.stdout.fnmatch_lines([
            "extraction skipped 15 files or folders of the codebase:",
            "  $'bad\\xff.py': file name is not valid UTF-8 (rename it to extract it)",
            "  $'ev\\x1b]0;X\\x07il.py.fifo.py': not a regular file: a FIFO (named pipe)",
        ])
        listed = [line for line in out.splitlines()
                  if line.startswith("  ") and ": not a regular file" in line]
        assert len(listed) == 9, (session, listed)  # ten named, one is the bad name
        result.stdout.fnmatch_lines(["  ... and 5 more: 5 not a regular file"])
