"""The compliance benchmark's pytest plugin (entry point ``summarybench_compliance``):
options, session fixtures, the example selection the benchmark's conftest parametrizes
over, and the terminal summary.

It is a plugin of its own, not part of the summary plugin, so that it can be turned off
with ``-p no:summarybench_compliance`` and so that every option it adds to every pytest
run in the environment is prefixed (``--compliance-*``). The seed's unprefixed switches
(``--test-mode``, ``--no-ollama``) live on ``summarybench compliance``, where they cannot
collide with another plugin's.

The benchmark is hosted on the summarybench harness through its public interface
(``pytest_summarybench.harness``: the output folder, the seed, the call scheduler; the
``sb_record`` fixture and the ``pytest_summarybench_terminal_summary`` hook), so loading
this plugin loads the harness too unless it is blocked. Importing it costs pytest and the
standard library only; the scanner, the model layer, scipy and the report are imported
when first used.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest.terminal import TerminalReporter

    from pytest_summarybench.schemas import ModelConfig, ScoreRecord

    from .classifier import LLMClassifier
    from .dataset import Example
    from .scanner import Scanner

NAME = "summarybench_compliance"
"""This plugin's entry-point name: ``-p summarybench_compliance``, ``-p no:...``."""
CALLS_NAME = "summarybench-compliance-calls"
"""The registered name of the plugin part that schedules the classifier's calls."""
TEST_MODE_SIZE = 10
NO_LLM_REASON = "disabled: --compliance-no-llm, or --no-ollama of `summarybench compliance`"
"""Why the LLM classifier did not run when it was switched off (either spelling)."""
_EXAMPLES = pytest.StashKey[dict[str, list["Example"]]]()


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    # The harness's hooks are what this plugin implements and its fixtures are what the
    # benchmark records through, so enabling the benchmark enables the harness: with
    # PYTEST_DISABLE_PLUGIN_AUTOLOAD set, `-p summarybench_compliance` is then enough.
    # A blocked harness (`-p no:summarybench`) stays blocked.
    from pytest_summarybench.harness import load

    load(pluginmanager)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("summarybench-compliance",
                            "summarybench compliance benchmark (EU AI Act articles)")
    group.addoption("--compliance-test-mode", action="store_true", default=False,
                    help=f"Evaluate {TEST_MODE_SIZE} examples spread evenly over the dataset "
                         f"instead of all of them (the seed's --test-mode).")
    group.addoption("--compliance-no-llm", action="store_true", default=False,
                    help="Run the rule-based scanner only; skip the LLM classifier, whichever "
                         "provider it uses (the seed's --no-ollama).")
    group.addoption("--compliance-model", metavar="PROVIDER/MODEL", default=None,
                    help="The LLM classifier (default ollama/air-compliance-v2; any "
                         "configured provider works).")
    group.addoption("--compliance-endpoint", metavar="URL", default=None,
                    help="Base URL of the classifier's server (default: the provider's, "
                         "http://localhost:11434 for Ollama).")
    group.addoption("--compliance-data", metavar="PATH", default=None,
                    help="The eval_data.jsonl-format file to evaluate (default: the "
                         "benchmark's eval_data.jsonl).")


def pytest_configure(config: pytest.Config) -> None:
    # A bad model or endpoint is a usage error before anything runs, not one error per
    # test; only when given, so unrelated runs never import the model layer.
    if config.getoption("compliance_model") or config.getoption("compliance_endpoint"):
        compliance_model(config)
    from .calls import ComplianceCalls

    config.pluginmanager.register(ComplianceCalls(config, classifier_for), CALLS_NAME)


def compliance_model(config: pytest.Config) -> ModelConfig:
    """The configured LLM classifier model; a bad value is a UsageError naming the flag."""
    from .classifier import DEFAULT_MODEL, check_endpoint, parse_model

    spec = config.getoption("compliance_model") or DEFAULT_MODEL
    endpoint = config.getoption("compliance_endpoint")
    if endpoint:
        try:
            check_endpoint(endpoint)
        except ValueError as err:
            raise pytest.UsageError(f"--compliance-endpoint {endpoint!r}: {err}") from None
    try:
        return parse_model(spec, endpoint)
    except ValueError as err:
        raise pytest.UsageError(f"--compliance-model {spec!r}: {err}") from None


def spread(items: list[Example], size: int) -> list[Example]:
    """``size`` items evenly spaced over ``items`` (all of them when there are fewer)."""
    if len(items) <= size:
        return list(items)
    return [items[(i * len(items)) // size] for i in range(size)]


def _require_plugins(config: pytest.Config) -> None:
    """Fail collection with what to pass when the benchmark's plugins are not active
    (autoloading off, or one of them blocked), instead of unknown options and fixtures."""
    from pytest_summarybench.harness import PLUGIN, harness

    if not config.pluginmanager.is_registered(sys.modules[__name__]):
        pytest.fail(f"the compliance benchmark needs its pytest plugin, which is not "
                    f"active: pass -p {NAME} (and do not block it with -p no:{NAME})",
                    pytrace=False)
    if harness(config) is None:
        pytest.fail(f"the compliance benchmark records its scores through the summarybench "
                    f"harness, which is not active: pass -p {PLUGIN} (and do not block it "
                    f"with -p no:{PLUGIN})", pytrace=False)


def select_examples(config: pytest.Config, default_path: Path) -> list[Example]:
    """The examples this session evaluates, loaded and validated once per process.

    ``--compliance-data`` (a file, or the name of a dataset shipped with the package)
    replaces ``default_path``; ``--compliance-test-mode`` keeps ten examples spread over
    the file so that every article still appears. A malformed dataset fails collection
    with one line naming the file, the line and the problem.
    """
    from .dataset import DatasetError, dataset_path, load_examples

    _require_plugins(config)
    given = config.getoption("compliance_data")
    test_mode = bool(config.getoption("compliance_test_mode"))
    cache = config.stash.setdefault(_EXAMPLES, {})
    key = f"{given or default_path}|{test_mode}"
    if key not in cache:
        try:
            path = dataset_path(given, config.invocation_params.dir) if given \
                else default_path
            examples = load_examples(path)
        except DatasetError as err:
            pytest.fail(str(err), pytrace=False)
        cache[key] = spread(examples, TEST_MODE_SIZE) if test_mode else examples
    return cache[key]


@pytest.fixture(scope="session")
def compliance_scanner() -> Scanner:
    """The rule-based scanner, built once per session (per xdist worker)."""
    from .scanner import Scanner

    return Scanner()


@pytest.fixture(scope="session")
def compliance_llm(pytestconfig: pytest.Config) -> LLMClassifier:
    """The LLM classifier; skips every LLM test with one reason when it cannot run."""
    from .classifier import unavailable_reason

    if pytestconfig.getoption("compliance_no_llm"):
        pytest.skip(f"LLM classifier {NO_LLM_REASON}")
    classifier = classifier_for(pytestconfig)
    reason = unavailable_reason(classifier.model)
    if reason is not None:
        pytest.skip(f"LLM classifier unavailable: {reason}")
    return classifier


def classifier_for(config: pytest.Config) -> LLMClassifier:
    """The session's LLM classifier, reading the answers the controller's call scheduler
    fetched (``calls.py``) through the harness."""
    from pytest_summarybench.harness import harness

    from .classifier import LLMClassifier

    return LLMClassifier(compliance_model(config), harness=harness(config))


def _llm_state(config: pytest.Config, records: list[ScoreRecord]) -> dict[str, Any]:
    """Whether an LLM ran; when none did, why (probed again here on the controller,
    since skips raised in xdist workers do not reach it as data)."""
    from .classifier import unavailable_reason
    from .records import SCANNER_ID

    if any(r.model_id != SCANNER_ID for r in records):
        return {"available": True, "reason": None}
    if config.getoption("compliance_no_llm"):
        return {"available": False, "reason": NO_LLM_REASON}
    reason = unavailable_reason(compliance_model(config))
    return {"available": reason is None,
            "reason": reason or "LLM tests not selected in this run"}


def _llm_skips(terminalreporter: TerminalReporter) -> int:
    """The LLM tests this session skipped because the classifier could not run (the
    reason ``compliance_llm`` skips with)."""
    count = 0
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = getattr(report, "longrepr", None)
        if isinstance(longrepr, tuple) and str(longrepr[-1]).startswith(
                ("Skipped: LLM classifier", "LLM classifier")):
            count += 1
    return count


# optionalhook: the spec is the harness's; with the harness blocked this plugin still
# loads (it then has nothing to report) instead of failing every pytest run. trylast: in
# a run of both benchmarks (the README's quickstart) the code-summary ranking comes first.
@pytest.hookimpl(optionalhook=True, trylast=True)
def pytest_summarybench_terminal_summary(terminalreporter: TerminalReporter,
                                         records: list[ScoreRecord],
                                         config: pytest.Config) -> None:
    """Print the compliance tables and write ``eval_results.json`` (compliance records only).

    Beside the code-summary benchmark, and without ``-v``, the tables shrink to a few
    lines (``print_compact``) that say where the full ones are."""
    from pytest_summarybench.harness import harness

    from .report import BENCHMARK, build_results, print_compact, print_results, write_results

    mine = [r for r in records if r.benchmark == BENCHMARK]
    session = harness(config)
    if not mine or session is None:
        return
    # Where, and with which seed, the rest of the run writes and resamples.
    results = build_results(mine, seed=session.seed, llm_state=_llm_state(config, mine))
    path = write_results(results, session.output_dir)
    tr = terminalreporter
    if len(mine) < len(records) and config.get_verbosity() < 1:
        print_compact(tr.write_line, tr.write_sep, results, path, llm_skipped=_llm_skips(tr))
    else:
        print_results(tr.write_line, tr.write_sep, results, path)
