"""Prompts, answer parsing, similarity, partial credit, completion splicing, task model."""

from __future__ import annotations

import math
import textwrap

import pytest

from pytest_summarybench.evaluators.downstream.answers import (
    AnswerError,
    extract_code,
    match_candidate,
    parse_choice,
)
from pytest_summarybench.evaluators.downstream.bug_localisation import (
    partial_credit as file_credit,
)
from pytest_summarybench.evaluators.downstream.function_selection import (
    partial_credit as function_credit,
)
from pytest_summarybench.evaluators.downstream.function_selection import titles
from pytest_summarybench.evaluators.downstream.prompts import (
    BUG_LOCALIZATION_PROMPT,
    COMPLETION_TASK_PROMPT,
    FUNCTION_SELECTION_PROMPT,
    bug_localisation_prompt,
    completion_prompt,
    function_selection_prompt,
)
from pytest_summarybench.evaluators.downstream.similarity import (
    bleu,
    code_similarity,
    code_tokens,
    exact_match,
    weighted_unigram_match,
)
from pytest_summarybench.evaluators.downstream.splice import (
    CompletionError,
    completed_function,
    partial_code,
    splice,
)
from pytest_summarybench.evaluators.downstream.tasks import UnitRef
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.roles import TaskModelError, task_model
from pytest_summarybench.schemas import CodeUnit, UnitMetadata
from pytest_summarybench.settings import load_settings


# -- prompts ---------------------------------------------------------------------------
def test_prompts_are_the_spec_text() -> None:
    assert COMPLETION_TASK_PROMPT.startswith("Complete this code using the provided context.")
    assert "```{language}\n{partial_code}\n// TODO: Complete this function\n```" in \
        COMPLETION_TASK_PROMPT
    assert COMPLETION_TASK_PROMPT.endswith("Provide only the completed code, no explanations.")
    assert BUG_LOCALIZATION_PROMPT.endswith(
        '  "predicted_file": "<file path>",\n  "confidence": "high" | "medium" | "low",\n'
        '  "reasoning": "<brief explanation>"\n}\n```')
    assert FUNCTION_SELECTION_PROMPT.startswith(
        "You need to accomplish a task. Based on the available functions, select the most "
        "appropriate one.\n\n## Task\n{task_description}\n\n## Available Functions\n")


def test_filling_is_one_pass_and_keeps_the_json_braces() -> None:
    prompt = completion_prompt(summaries=["Uses {requirements} literally.", "Second."],
                               language="python", partial_code="def f(x):",
                               requirements="Return x.")
    assert "Uses {requirements} literally.\n\n---\n\nSecond." in prompt
    assert "```python\ndef f(x):\n// TODO: Complete this function\n```" in prompt
    bug = bug_localisation_prompt(bug_description="Boom.",
                                  files=[("a.py", "Does A."), ("b.py", "Does B.")])
    assert "## File Summaries\n### a.py\nDoes A.\n\n### b.py\nDoes B.\n" in bug
    assert '{\n  "predicted_file"' in bug
    fs = function_selection_prompt(task_description="Do it.", functions=[("f", "F.")])
    assert "## Task\nDo it.\n\n## Available Functions\n### f\nF.\n\nWhich function" in fs


# -- answers ---------------------------------------------------------------------------
def test_choice_answers_are_read_from_fenced_or_bare_json() -> None:
    fenced = 'Sure.\n```json\n{"predicted_file": "a/b.py", "confidence": "High"}\n```'
    assert parse_choice(fenced, "predicted_file").answer == "a/b.py"
    assert parse_choice(fenced, "predicted_file").confidence == "high"
    bare = 'I pick {"selected_function": "f", "reasoning": "because"} there.'
    assert parse_choice(bare, "selected_function").reasoning == "because"
    with pytest.raises(AnswerError, match="no JSON object"):
        parse_choice("the file is a.py", "predicted_file")
    with pytest.raises(AnswerError, match="has no 'predicted_file' string"):
        parse_choice('{"file": "a.py"}', "predicted_file")


@pytest.mark.parametrize(("answer", "expected"), [
    ("python/bookshop/pricing.py", "python/bookshop/pricing.py"),
    ("./python/bookshop/pricing.py", "python/bookshop/pricing.py"),
    ("`pricing.py`", "python/bookshop/pricing.py"),
    ("PRICING.PY", "python/bookshop/pricing.py"),
    ("models.py", None),  # two candidates end with it: ambiguous
    ("cart.ts", None),  # not a candidate
])
def test_file_answers_match_one_candidate_or_none(answer: str, expected: str | None) -> None:
    candidates = ["python/bookshop/pricing.py", "python/bookshop/models.py",
                  "other/models.py"]
    assert match_candidate(answer, candidates) == expected


def test_function_answers_match_qualified_names() -> None:
    listed = ["Inventory.reserve", "Inventory.reserve_many", "python/a.py::run",
              "python/b.py::run"]
    assert match_candidate("reserve_many", listed, separators=".:/") == "Inventory.reserve_many"
    assert match_candidate("Inventory.reserve()", listed, separators=".:/") == \
        "Inventory.reserve"
    assert match_candidate("run", listed, separators=".:/") is None
    assert match_candidate("python/b.py::run", listed, separators=".:/") == "python/b.py::run"


def test_code_is_taken_from_the_fence_in_the_target_language() -> None:
    text = "Here:\n```text\nnot this\n```\n```py\ndef f():\n    return 1\n```\n"
    assert extract_code(text, "python") == "def f():\n    return 1"
    assert extract_code("def g():\n    pass\n", "python") == "def g():\n    pass"


# -- similarity ------------------------------------------------------------------------
def test_bleu_and_weighted_match_by_hand() -> None:
    cand, ref = ["a", "b", "c", "d"], ["a", "b", "c", "e"]
    # precisions 3/4, then add-one smoothed (2+1)/(3+1), (1+1)/(2+1), (0+1)/(1+1); BP = 1
    expected = (3 / 4 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25
    assert bleu(cand, ref) == pytest.approx(expected)
    assert weighted_unigram_match(cand, ref) == pytest.approx(0.6 / 0.8)
    # keywords weigh 1.0, other tokens 0.2; a short candidate pays the brevity penalty
    assert weighted_unigram_match(["return", "x"], ["return", "y", "z"]) == pytest.approx(
        math.exp(1 - 3 / 2) * 1.0 / 1.2)
    assert bleu([], ref) == 0.0 and weighted_unigram_match(cand, []) == 0.0


def test_similarity_ignores_comments_docstrings_and_layout() -> None:
    original = 'def f(x):\n    """Double it."""\n    return x * 2  # twice\n'
    rewritten = "def f(x):\n\n    return x*2\n"
    assert code_tokens(original) == ["def", "f", "(", "x", ")", ":", "return", "x", "*", "2"]
    assert code_similarity(rewritten, original) == 1.0 and exact_match(rewritten, original)
    close = "def f(x):\n    return x * 3\n"
    far = "def f(x):\n    while True:\n        pass\n"
    assert 1.0 > code_similarity(close, original) > code_similarity(far, original) > 0.0
    assert code_similarity("", original) == 0.0
    ts = "function f(x) { // double\n  return x * 2; }"
    assert code_tokens(ts, "typescript")[:3] == ["function", "f", "("]
    assert "double" not in code_tokens(ts, "typescript")


# -- partial credit --------------------------------------------------------------------
def test_partial_credit_rules() -> None:
    assert file_credit("python/bookshop/pricing.py", "python/bookshop/pricing.py") == 1.0
    assert file_credit("python/bookshop/orders.py", "python/bookshop/pricing.py") == 0.5
    assert file_credit("other/InvoiceRenderer.php", "python/bookshop/pricing.py") == 0.0
    assert file_credit(None, "python/bookshop/pricing.py") == 0.0
    right = UnitRef(path="p.py", name="Inventory.reserve_many")
    assert function_credit(right, right) == 1.0
    assert function_credit(UnitRef(path="p.py", name="Inventory.release"), right) == 0.5
    assert function_credit(UnitRef(path="p.py", name="helper"), right) == 0.0
    assert function_credit(UnitRef(path="q.py", name="Inventory.release"), right) == 0.0
    assert list(titles([UnitRef(path="a.py", name="run"), UnitRef(path="b.py", name="run"),
                        right])) == ["a.py::run", "b.py::run", "Inventory.reserve_many"]


# -- completion mechanics ----------------------------------------------------------------
SOURCE = textwrap.dedent('''\
    import functools


    class Stock:
        def __init__(self):
            self.n = 0

        @functools.lru_cache(maxsize=None)
        def take(self,
                 k: int) -> int:
            """Take k items."""
            self.n -= k
            return self.n


    def total(xs):
        return sum(xs)
    ''')


def _unit(name: str, kind: str = "method") -> CodeUnit:
    return CodeUnit(id=name, path="m.py", name=name, type=kind, language="python",  # type: ignore[arg-type]
                    content="", metadata=UnitMetadata(start_line=1, end_line=1))


def test_partial_code_keeps_decorators_and_signature_only() -> None:
    partial = partial_code(SOURCE, _unit("Stock.take"))
    assert partial == ("class Stock:\n    ...\n\n    @functools.lru_cache(maxsize=None)\n"
                       "    def take(self,\n             k: int) -> int:")
    assert partial_code(SOURCE, _unit("total", "function")) == "def total(xs):"


def test_completion_is_found_in_a_class_wrapper_and_spliced_in_place() -> None:
    unit = _unit("Stock.take")
    answer = ("import math\n\nclass Stock:\n    def take(self, k: int) -> int:\n"
              "        self.n = math.floor(self.n - k)\n        return self.n\n")
    done = completed_function(answer, unit, partial_code(SOURCE, unit))
    assert done.function.startswith("def take(self, k: int) -> int:")
    assert done.imports == ["import math"]
    spliced = splice(SOURCE, unit, done)
    namespace: dict = {}
    exec(compile(spliced, "m.py", "exec"), namespace)
    stock = namespace["Stock"]()
    assert stock.take(2) == -2
    # the answer left the decorator out: the original one is kept
    assert "    @functools.lru_cache(maxsize=None)\n    def take(self, k: int)" in spliced
    assert spliced.rstrip().endswith("import math")


def test_a_body_only_answer_goes_under_the_partial_signature() -> None:
    unit = _unit("total", "function")
    done = completed_function("total = 0\nfor x in xs:\n    total += x\nreturn total",
                              unit, "def total(xs):")
    assert done.function.splitlines()[0] == "def total(xs):"
    namespace: dict = {}
    exec(splice(SOURCE, unit, done), namespace)
    assert namespace["total"]([1, 2, 3]) == 6


@pytest.mark.parametrize(("answer", "message"), [
    ("def total(xs)\n    return 1", "the completion is not valid Python"),
    ("def other(xs):\n    return 1", "the completion defines no function 'total'"),
])
def test_unusable_completions_say_why(answer: str, message: str) -> None:
    with pytest.raises(CompletionError, match=message):
        completed_function(answer, _unit("total", "function"), "def total(xs):")


# -- task model ---------------------------------------------------------------------------
def _settings(spec: str | None, **extra: object) -> object:
    return load_settings(None, {"evaluation.downstream.completionModel": spec, **extra},
                         families=BUILTIN_FAMILIES)


def test_task_model_forms() -> None:
    assert task_model(_settings(None)) is None  # type: ignore[arg-type]
    m = task_model(_settings("local/coder", **{  # type: ignore[arg-type]
        "evaluation.downstream.apiEndpoint": "http://127.0.0.1:9/v1"}))
    assert m is not None and (m.provider, m.model_name, m.api_endpoint) == (
        "local", "coder", "http://127.0.0.1:9/v1")
    bare = task_model(_settings("claude-3-5-sonnet-20241022"))  # type: ignore[arg-type]
    assert bare is not None and bare.provider == "anthropic"
    judged = task_model(_settings("task", **{  # type: ignore[arg-type]
        "models.judge": [{"provider": "openai", "model": "gpt-4o-mini", "id": "task",
                          "apiEndpoint": "http://x/v1"}]}))
    assert judged is not None and judged.api_endpoint == "http://x/v1"
    with pytest.raises(TaskModelError, match="not the id of a model in models.judge"):
        task_model(_settings("mystery-model"))  # type: ignore[arg-type]
    with pytest.raises(TaskModelError, match="built-in summarizers cannot perform tasks"):
        task_model(_settings("builtin/docstring"))  # type: ignore[arg-type]
