"""The LLM classifier's calls, made by the session's call scheduler before the tests run.

After collection the controller takes the examples whose LLM test is selected (what
``-k``/``-m`` left; under xdist, what the workers share through the harness, since the
controller collects nothing itself), and has the harness make their classifications
(``Harness.make_calls``): ``--sb-parallel`` calls at once to the classifier, at its rate
limits, each identical request once. The tests then read the answers
(``LLMClassifier.classify``), or the failure recorded for the session, wherever they run.
The answers are kept for the session only (the cache tag holds the session token) and
dropped when it ends, so every run measures the classifier again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_summarybench.harness import Harness

    from .classifier import LLMClassifier
    from .dataset import Example

SCOPE = "compliance"
"""The scope the workers share the LLM examples they were left with under."""
LLM_TEST = "test_llm"
"""The benchmark's LLM test function (``suite/test_compliance.py``)."""


def llm_examples(items: list[pytest.Item]) -> list[Example]:
    """The examples of the selected LLM tests, once each, in collection order."""
    from .dataset import Example

    seen: dict[str, Example] = {}
    for item in items:
        if getattr(item, "originalname", None) != LLM_TEST:
            continue
        callspec = getattr(item, "callspec", None)
        example = callspec.params.get("example") if callspec is not None else None
        if isinstance(example, Example):
            seen.setdefault(example.id, example)
    return list(seen.values())


class ComplianceCalls:
    """The compliance plugin's part in the call scheduling, in every process."""

    def __init__(self, config: pytest.Config,
                 classifier_for: Callable[[pytest.Config], LLMClassifier]) -> None:
        """:param classifier_for: the session's classifier (the plugin's, which the tests'
            fixture uses too)."""
        self.config = config
        self.classifier_for = classifier_for
        self.done = False
        self.tag: str | None = None
        """The cache tag the session's answers are kept under, once calls were made."""

    def _usable(self) -> Harness | None:
        """The harness when the LLM is wanted and the session can share answers."""
        from pytest_summarybench.harness import harness

        if self.config.getoption("compliance_no_llm") or self.config.option.collectonly:
            return None
        return harness(self.config)

    @pytest.hookimpl(tryfirst=True)  # a worker shares its examples before xdist reports
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        host = self._usable()
        if host is None:
            return
        examples = llm_examples(session.items)
        if not examples:
            return
        if host.is_worker:
            # Tell the controller what -k/-m left, before xdist reports collection done.
            host.share(SCOPE, [json.dumps([e.id, e.code]) for e in examples])
        else:
            self.classify(host, [(e.id, e.code) for e in examples])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        host = self._usable()
        if host is None or self.done or not ids:
            return
        chosen = sorted(tuple(json.loads(row)) for row in host.shared(SCOPE))
        if chosen:
            self.classify(host, chosen)

    def classify(self, host: Harness, examples: list[tuple[str, str]]) -> None:
        """Make the classifications of ``examples`` ((id, code) pairs) through the
        session's call scheduler, unless the classifier cannot be asked (its tests then
        skip with the reason). Failures are recorded for the tests, which report them one
        by one."""
        from .classifier import unavailable_reason

        if self.done:
            return
        self.done = True
        classifier = self.classifier_for(self.config)
        if unavailable_reason(classifier.model) is not None:
            return
        requests = [classifier.request(code) for _id, code in examples]
        self.tag = requests[0].tag
        host.make_calls(requests, retry_policy=classifier.policy())

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from pytest_summarybench.harness import harness

        host = harness(self.config)
        if self.tag is not None and host is not None:
            host.forget_answers(self.tag)
