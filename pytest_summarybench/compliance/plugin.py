"""pytest wiring of the compliance benchmark: options, session fixtures, the example
selection the benchmark's conftest parametrizes over, and the terminal summary.

Registered by the harness's ``plugin.py``; importing it costs the standard library only.
The scanner, the model layer, scipy and the report are imported when first used.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest.terminal import TerminalReporter

    from ..schemas import ModelConfig, ScoreRecord
    from .classifier import LLMClassifier
    from .dataset import Example
    from .scanner import Scanner

TEST_MODE_SIZE = 10
_EXAMPLES = pytest.StashKey[dict[str, list["Example"]]]()


def add_options(parser: pytest.Parser) -> None:
    """Add the compliance benchmark's options to the ``summarybench`` group."""
    group = parser.getgroup("summarybench")
    group.addoption("--no-ollama", action="store_true", default=False,
                    help="Compliance benchmark: do not run the LLM classifier (rule-based "
                         "scanner only).")
    group.addoption("--test-mode", action="store_true", default=False,
                    help=f"Compliance benchmark: evaluate {TEST_MODE_SIZE} examples spread "
                         f"over the dataset instead of all of them.")
    group.addoption("--compliance-model", metavar="PROVIDER/MODEL", default=None,
                    help="Compliance benchmark: the LLM classifier (default "
                         "ollama/air-compliance-v2; any configured provider works).")
    group.addoption("--compliance-endpoint", metavar="URL", default=None,
                    help="Compliance benchmark: base URL of the classifier's server "
                         "(default: the provider's, http://localhost:11434 for Ollama).")
    group.addoption("--compliance-data", metavar="PATH", default=None,
                    help="Compliance benchmark: the eval_data.jsonl-format file to evaluate "
                         "(default: the benchmark's eval_data.jsonl).")


def compliance_model(config: pytest.Config) -> ModelConfig:
    """The configured LLM classifier model; a bad spec is a UsageError naming the flag."""
    from .classifier import DEFAULT_MODEL, parse_model

    spec = config.getoption("compliance_model") or DEFAULT_MODEL
    try:
        return parse_model(spec, config.getoption("compliance_endpoint"))
    except ValueError as err:
        raise pytest.UsageError(f"--compliance-model {spec!r}: {err}") from None


def spread(items: list[Example], size: int) -> list[Example]:
    """``size`` items evenly spaced over ``items`` (all of them when there are fewer)."""
    if len(items) <= size:
        return list(items)
    return [items[(i * len(items)) // size] for i in range(size)]


def select_examples(config: pytest.Config, default_path: Path) -> list[Example]:
    """The examples this session evaluates, loaded and validated once per process.

    ``--compliance-data`` replaces ``default_path``; ``--test-mode`` keeps ten examples
    spread over the file so that every article still appears. A malformed dataset fails
    collection with one line naming the file, the line and the problem.
    """
    from .dataset import DatasetError, load_examples

    given = config.getoption("compliance_data")
    path = Path(config.invocation_params.dir, given) if given else default_path
    cache = config.stash.setdefault(_EXAMPLES, {})
    key = f"{path}|{config.getoption('test_mode')}"
    if key not in cache:
        try:
            examples = load_examples(path)
        except DatasetError as err:
            pytest.fail(str(err), pytrace=False)
        cache[key] = spread(examples, TEST_MODE_SIZE) if config.getoption("test_mode") \
            else examples
    return cache[key]


@pytest.fixture(scope="session")
def compliance_scanner() -> Scanner:
    """The rule-based scanner, built once per session (per xdist worker)."""
    from .scanner import Scanner

    return Scanner()


@pytest.fixture(scope="session")
def compliance_llm(pytestconfig: pytest.Config) -> LLMClassifier:
    """The LLM classifier; skips every LLM test with one reason when it cannot run."""
    from .classifier import LLMClassifier, unavailable_reason

    if pytestconfig.getoption("no_ollama"):
        pytest.skip("LLM classifier disabled with --no-ollama")
    model = compliance_model(pytestconfig)
    reason = unavailable_reason(model)
    if reason is not None:
        pytest.skip(f"LLM classifier unavailable: {reason}")
    return LLMClassifier(model)


def _settings(config: pytest.Config) -> Any:
    """The harness's resolved settings (summarybench.yaml, ini keys, ``--sb-*`` options):
    the compliance benchmark writes where, and seeds as, the rest of the run does."""
    return config.pluginmanager.getplugin("summarybench-state").settings


def _llm_state(config: pytest.Config, records: list[ScoreRecord]) -> dict[str, Any]:
    """Whether an LLM ran; when none did, why (probed again here on the controller,
    since skips raised in xdist workers do not reach it as data)."""
    from .classifier import unavailable_reason
    from .records import SCANNER_ID

    if any(r.model_id != SCANNER_ID for r in records):
        return {"available": True, "reason": None}
    if config.getoption("no_ollama"):
        return {"available": False, "reason": "disabled with --no-ollama"}
    reason = unavailable_reason(compliance_model(config))
    return {"available": reason is None,
            "reason": reason or "LLM tests not selected in this run"}


@pytest.hookimpl
def pytest_summarybench_terminal_summary(terminalreporter: TerminalReporter,
                                         records: list[ScoreRecord],
                                         config: pytest.Config) -> None:
    """Print the compliance tables and write ``eval_results.json`` (compliance records only)."""
    from .report import BENCHMARK, build_results, print_results, write_results

    mine = [r for r in records if r.benchmark == BENCHMARK]
    if not mine:
        return
    settings = _settings(config)
    results = build_results(mine, seed=settings.evaluation.seed,
                            llm_state=_llm_state(config, mine))
    path = write_results(results, settings.output_dir)
    print_results(terminalreporter.write_line, terminalreporter.write_sep, results, path)
