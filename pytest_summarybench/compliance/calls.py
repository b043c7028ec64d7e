"""The LLM classifier's calls, made by the session's call scheduler before the tests run.

After collection the controller takes the examples whose LLM test is selected (what
``-k``/``-m`` left; under xdist, what the workers report through the store, since the
controller collects nothing itself), and sends their classifications through one
``llm.scheduler.Scheduler``: ``--sb-parallel`` calls at once to the classifier, at its
rate limits, each identical request once. The tests then read the answers
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
    from .classifier import LLMClassifier
    from .dataset import Example

SCOPE = "compliance"
"""The store's selection scope of the LLM examples a worker was left with."""
LLM_TEST = "test_llm"
"""The benchmark's LLM test function (``benchmarks/compliance/test_compliance.py``)."""


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


def _harness(config: pytest.Config) -> Any:
    from .. import plugin as harness

    return config.pluginmanager.get_plugin(harness.STATE_NAME)


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

    def _usable(self) -> Any:
        """The harness state when the LLM is wanted and the session can share answers."""
        state = _harness(self.config)
        if state is None or self.config.getoption("compliance_no_llm") \
                or self.config.option.collectonly:
            return None
        return state

    @pytest.hookimpl(tryfirst=True)  # a worker writes its rows before xdist reports
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        state = self._usable()
        if state is None:
            return
        examples = llm_examples(session.items)
        if not examples:
            return
        from ..store import StoreError

        try:
            if state.is_worker:
                # Tell the controller what -k/-m left, before xdist reports collection done.
                state.store.selection.add(
                    state.token, [json.dumps([e.id, e.code]) for e in examples], scope=SCOPE)
            else:
                self.classify(state, [(e.id, e.code) for e in examples])
        except StoreError as exc:
            raise pytest.UsageError(f"summarybench: {exc}") from None

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        state = self._usable()
        if state is None or self.done or not ids:
            return
        from ..store import StoreError

        try:
            rows = state.store.selection.of(state.token, scope=SCOPE)
            chosen = sorted(tuple(json.loads(row)) for row in rows)
            if chosen:
                self.classify(state, chosen)
        except StoreError as exc:
            raise pytest.UsageError(f"summarybench: {exc}") from None

    def classify(self, state: Any, examples: list[tuple[str, str]]) -> None:
        """Make the classifications of ``examples`` ((id, code) pairs) through a scheduler,
        unless the classifier cannot be asked (its tests then skip with the reason)."""
        from ..llm.scheduler import Scheduler, run_coroutine, settle
        from .classifier import unavailable_reason

        if self.done:
            return
        self.done = True
        classifier = self.classifier_for(self.config)
        if unavailable_reason(classifier.model) is not None:
            return
        requests = [classifier.request(code) for _id, code in examples]
        settings = state.settings
        scheduler = Scheduler(state.store, parallel=settings.evaluation.parallel,
                              retry_policy=classifier.policy(), session=state.token,
                              progress=state.progress())
        self.tag = requests[0].tag
        scheduler.expect("compliance", len(requests))
        from ..core.dependency_warnings import quiet

        try:
            # Failures are recorded for the tests, which report them one by one.
            with quiet():
                run_coroutine(lambda: settle([scheduler.call(r) for r in requests]))
        finally:
            scheduler.close()

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        state = _harness(self.config)
        if self.tag is None or state is None:
            return
        from ..store import StoreError

        try:
            state.store.responses.forget_tag(self.tag)
        except StoreError:
            pass  # the answers of one session stay; no later session reads them
