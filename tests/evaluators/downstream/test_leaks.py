"""Issue 33, "items that do not measure summaries": function-selection tasks whose text
names the answer ("Sends a `PATCH` request" among head, patch, options...) let a model
with the same generic summary for every unit score 0.667. Such tasks are left out, and a
control shows the family now scores generic summaries well below specific ones, with a
task model that reads the candidates' names as a real one does."""

from __future__ import annotations

import json
import re
import textwrap
from typing import Any

import pytest

from pytest_summarybench.evaluators.downstream.leaks import (
    file_named,
    function_named,
    identifier_words,
)
from tests.fakes.project import write_bench_module, write_code

HTTP_VERBS = ("head", "get", "post", "put", "patch", "delete", "options")
GENERIC = "Handles the call and returns the result to the caller."


def test_a_task_whose_names_decide_it_is_found() -> None:
    others = ["Client.head", "Client.options", "Client.stream", "Client.post"]
    assert function_named("Sends a `PATCH` request.", "Client.patch", others) == "patch"
    # A word of the name is enough when no other name shares as many with the task.
    assert function_named("Split a browser cookie line into names and values.",
                          "parse_cookie_header", ["retry_delay", "normalize_url"]) == "cookie"
    # Another candidate's name shares as many: the summaries must decide.
    assert function_named("Sends a PATCH request, like post does.", "Client.patch",
                          others) is None
    assert function_named("Wait before the next attempt, longer each time.",
                          "retry_delay", ["backoff", "jitter"]) is None
    # Common words tell nothing.
    assert function_named("Add the tax for the order.", "total_for", ["vat_rate"]) is None
    assert identifier_words("parseHTTPDate and to_snake") == {"parse", "http", "date", "and",
                                                            "to", "snake"}
    assert file_named("The VAT in pricing.py rounds down.", "shop/pricing.py",
                      ["shop/orders.py"]) == "pricing.py"
    assert file_named("The VAT rounds down.", "shop/pricing.py", ["shop/orders.py"]) is None


def _client_module() -> str:
    methods = "".join(textwrap.dedent(f'''
        def {verb}(self, url: str, **kwargs: object) -> dict:
            """Sends a `{verb.upper()}` request to the server and returns the response."""
            return self.request("{verb.upper()}", url, **kwargs)
        ''') for verb in HTTP_VERBS)
    return "class Client:\n" + textwrap.indent(methods, "    ")


HELPERS = '''
def retry_delay(attempt: int, base: float = 0.5) -> float:
    """Compute how long to wait before trying once more, doubling every time."""
    return base * (2 ** attempt)


def parse_cookie_header(text: str) -> dict[str, str]:
    """Split a browser cookie line into a mapping of names to values."""
    return dict(part.strip().split("=", 1) for part in text.split(";") if "=" in part)


def normalize_url(url: str) -> str:
    """Lower-case the scheme and host and drop a trailing slash from an address."""
    scheme, _, rest = url.partition("://")
    host, _, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}/{path}".rstrip("/")


def elapsed_seconds(started: float, finished: float) -> float:
    """Measure the duration between two timestamps, never going below zero."""
    return max(0.0, finished - started)


def content_length(body: bytes) -> str:
    """Give the size of a payload in bytes as a header value string."""
    return str(len(body))


def merge_query(params: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    """Combine two sets of query parameters, the second overriding the first."""
    return {**params, **extra}
'''


class TitleReader:
    """A task model that, like a real one, reads the candidates' names as well as their
    summaries: it picks the candidate whose title and summary share the most words with
    the task (the first on a tie). Summaries for ``generic``: the same text for all."""

    def __init__(self) -> None:
        self.asked = 0

    def __call__(self, body: dict[str, Any]) -> str:
        prompt = str(body["messages"][-1]["content"])
        if body["model"] == "generic":
            return GENERIC
        self.asked += 1
        task = prompt.split("## Task", 1)[1].split("## Available Functions", 1)[0]
        block = prompt.split("## Available Functions", 1)[1].split("Which function", 1)[0]
        parts = re.split(r"^### (.+)$", block, flags=re.M)
        listed = [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts) - 1, 2)]
        wanted = identifier_words(task) - {"a", "the", "to", "and", "of"}
        scores = [len(wanted & identifier_words(f"{title} {text}")) for title, text in listed]
        choice = listed[scores.index(max(scores))][0]
        return json.dumps({"selected_function": choice, "confidence": "high",
                           "reasoning": "most words in common"})


def test_function_selection_scores_generic_summaries_well_below_specific_ones(
        pytester: pytest.Pytester, fake_server: Any) -> None:
    reader = TitleReader()
    url = fake_server(respond=reader).base_url
    write_code(pytester, {"httpkit/client.py": _client_module(),
                          "httpkit/helpers.py": HELPERS})
    write_bench_module(pytester)
    pytester.makefile(".yaml", summarybench=textwrap.dedent(f"""
        name: leaks
        codebase: {{root: code, languages: [python]}}
        extraction: {{types: [function, method], minLines: 2}}
        models:
          test:
            - {{provider: builtin, model: docstring}}
            - {{provider: openai, model: generic, apiEndpoint: "{url}"}}
        evaluation:
          sampling: all
          sampleSize: 50
          judge: {{enabled: false}}
          contrastive: {{enabled: false}}
          retrieval: {{enabled: false}}
          downstream:
            tasks: [function_selection, bug_localisation]
            completionModel: local/task-7b
            apiEndpoint: "{url}"
        """))
    result = pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                           "-p", "no:randomly", "--sb-output", "out")
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    means = data["detailed"]["byModel"]
    specific = means["builtin/docstring"]["downstream/function_selection:success"]
    generic = means["openai/generic"]["downstream/function_selection:success"]
    details = data["evaluatorDetails"]["downstream/function_selection"]
    left_out = details["excludedTasks"]
    assert all("its text names the answer" in why for why in left_out), left_out
    named = {why.split("names the answer (", 1)[1].split(")")[0] for why in left_out}
    assert set(HTTP_VERBS) <= named, named        # every "Sends a `VERB` request"
    assert "cookie" in named                      # one word of the name is enough
    assert details["tasks"] >= 4 and reader.asked == 2 * details["tasks"]
    # bug_localisation is listed but has no task file here: one line says so (it vanished).
    why = ("no bug_localisation tasks for this codebase: write a task set "
           "(evaluation.downstream.tasksFile; see fixtures/tasks/README.md)")
    result.stdout.fnmatch_lines([f"skipped downstream/bug_localisation: {why}"])
    assert data["metadata"]["familiesSkipped"]["downstream/bug_localisation"] == why
    assert specific >= 0.8, (specific, generic)
    assert generic <= 0.35 and specific - generic >= 0.5, (specific, generic)
