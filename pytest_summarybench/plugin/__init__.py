"""pytest entry point: options, hook specs, fixtures and wiring.

Kept cheap to import (pytest and the standard library only): the pipeline, pydantic,
litellm, chromadb and tree-sitter are imported by ``state.py``, ``controller.py``,
``engine/`` and below, when a run actually uses the benchmark.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING

import pytest

from ..core.sample import bundled_codebase
from ..core.vocabulary import PROVIDERS, VALIDATE
from ..evaluators.registry import BUILTIN_FAMILIES
from .recorder import carry, recorder, scrub_report

if TYPE_CHECKING:
    from ..schemas import ScoreRecord
    from .state import BoundItem

STATE_NAME = "summarybench-state"


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def _positive_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _non_negative_float(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def _int(text: str) -> int:
    import argparse

    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("summarybench", "summarybench: LLM code-summary benchmark")
    group.addoption("--sb-config", metavar="PATH", default=None,
                    help="summarybench.yaml to use (default: summarybench.yaml in the rootdir "
                         "if present, else built-in defaults).")
    group.addoption("--sb-codebase", metavar="PATH", default=None,
                    help="Codebase to extract units from (overrides codebase.root; default: "
                         f"the sample codebase bundled with the package, {bundled_codebase()}).")
    group.addoption("--sb-model", metavar="PROVIDER/MODEL", action="append", default=None,
                    help="Model under test, repeatable (overrides models.test). Providers: "
                         f"{', '.join(PROVIDERS)}. "
                         "Default: the offline builtin/* baselines.")
    group.addoption("--sb-judge", metavar="PROVIDER/MODEL", action="append", default=None,
                    help="Judge model, repeatable (overrides models.judge).")
    builtin = ", ".join(f.name for f in BUILTIN_FAMILIES)
    group.addoption("--sb-eval", metavar="FAMILIES", default=None,
                    help=f"Comma-separated evaluator families to run: {builtin}, those a "
                         "plugin declares, or 'all' (overrides evaluation.*.enabled).")
    group.addoption("--sb-only", metavar="FAMILIES", default=None,
                    help="Run only the items of these evaluator families, comma-separated "
                         f"({builtin}, or a plugin's): a selection of the configured run, as "
                         "-m FAMILY is (what `summarybench evaluate --only` passes).")
    group.addoption("--sb-sample-size", metavar="N", type=_positive_int, default=None,
                    help="Number of code units to sample (overrides evaluation.sampleSize).")
    group.addoption("--sb-sampling", metavar="STRATEGY", default=None,
                    choices=("random", "stratified", "all"),
                    help="Sampling strategy: random, stratified or all.")
    group.addoption("--sb-seed", metavar="N", type=_int, default=None,
                    help="Seed for sampling, distractors, shuffles and bootstrap.")
    group.addoption("--sb-output", metavar="DIR", default=None,
                    help="Directory for results.json, reports and the store "
                         "(default: ./summarybench-results).")
    group.addoption("--sb-store", metavar="PATH", default=None,
                    help="SQLite store path (default: DIR/store.sqlite).")
    group.addoption("--sb-parallel", metavar="N", type=_positive_int, default=None,
                    help="Concurrent model calls per model, in every phase (generation, "
                         "judges, helpers, task models, a hosted benchmark's calls).")
    group.addoption("--sb-max-cost", metavar="USD", type=_non_negative_float, default=None,
                    help="Stop starting new model calls once this much was spent.")
    group.addoption("--sb-dry-run", action="store_true", default=False,
                    help="Print calls, token and cost estimates per model and phase, then "
                         "stop without calling any model.")
    group.addoption("--sb-generate-only", action="store_true", default=False,
                    help="Generate (or resume) the summaries, then stop before evaluating.")
    group.addoption("--sb-validate", action="store_true", default=False,
                    help="Add the instrument-validity ladder (validate/* models: summaries of "
                         "known quality from the codebase's docstrings) and report how well "
                         "each evaluator family orders it, also when its evaluators call "
                         "models (judges, a task model); without this flag it runs only when "
                         "no evaluator can call a model. -m validate runs the ladder alone.")
    group.addoption("--sb-no-validate", action="store_true", default=False,
                    help="Leave the instrument-validity ladder out of a run in which it would "
                         "run by default (no evaluator can call a model).")
    parser.addini("summarybench_config", "Path of summarybench.yaml.", default=None)
    parser.addini("summarybench_codebase", "Codebase root (like --sb-codebase).", default=None)
    parser.addini("summarybench_output", "Output directory (like --sb-output).", default=None)
    parser.addini("summarybench_models", "Models under test, one PROVIDER/MODEL per line.",
                  type="linelist", default=[])
    parser.addini("summarybench_sample_size", "Sample size (like --sb-sample-size).",
                  default=None)
    parser.addini("summarybench_seed", "Seed (like --sb-seed).", default=None)



def pytest_configure(config: pytest.Config) -> None:
    from .options import marker_line, select_only, session_families, validate_options

    families = session_families(config)
    for name in (*(f.name for f in families), VALIDATE):
        config.addinivalue_line("markers", marker_line(name))
    validate_options(config, families)
    select_only(config, families)
    if (config.getoption("sb_dry_run") or config.getoption("sb_generate_only")) \
            and getattr(config.option, "dist", "no") != "no":
        # Such a session runs no test: its calls are planned or made here, and xdist's
        # workers would only collect. Without them (xdist's pytest_configure, trylast,
        # reads this) it ends as a plain session does, with no pytest.exit.
        config.option.dist = "no"
    from .state import SummaryBenchState

    state = SummaryBenchState(config, families)
    config.pluginmanager.register(state, STATE_NAME)
    if not hasattr(config, "workerinput"):
        from .controller import CONTROLLER_NAME, Controller

        config.pluginmanager.register(Controller(state), CONTROLLER_NAME)
        if config.pluginmanager.hasplugin("xdist"):
            from .controller import XdistControllerHooks

            config.pluginmanager.register(XdistControllerHooks(state), "summarybench-xdist")
        if config.pluginmanager.hasplugin("html"):
            from .html import HtmlResultsColumns

            config.pluginmanager.register(HtmlResultsColumns(state), "summarybench-html")


@pytest.fixture
def sb_record(request: pytest.FixtureRequest) -> Callable[[ScoreRecord], None]:
    """Record a score for the current test; it reaches the controller on the report."""
    return recorder(request.node)


@pytest.fixture
def sb_case() -> BoundItem:
    """The matrix item of this test, bound to its evaluator and the run's context.

    Call ``sb_case.evaluate()`` to score it; scores are recorded as ``sb_record`` does.
    summarybench parametrizes ``sb_case`` directly (see ``state.BoundItem``), which
    overrides this fixture: it runs only where that did not happen. It takes no
    ``request``: pytest would otherwise set one up for every matrix test.
    """
    pytest.fail("sb_case is parametrized by summarybench when it collects the benchmark's "
                "tests; this test was not parametrized (is the plugin enabled with "
                "-p summarybench?)", pytrace=False)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # A matrix test records its scores on its own node (see ``sb_record``).
    from .state import case_of

    case = case_of(item)
    if case is not None:
        case.attach(recorder(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    # Records ride on the report: pytest serialises report.__dict__ across xdist.
    report = yield
    if report.failed or report.sections:
        from .state import case_of

        if case_of(item) is not None:
            scrub_report(report)
    if call.when != "teardown":
        carry(item, report)
    else:
        from .state import case_of

        case = case_of(item)
        if case is not None:
            case.attach(None)  # the recorder is the test's; drop it with the test
    return report
