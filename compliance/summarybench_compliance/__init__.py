"""The compliance benchmark, hosted on summarybench: EU AI Act article classification of
AI-agent code by a rule-based scanner and by an LLM (see the distribution's README).

Pipeline: ``dataset`` (labelled examples, shipped in ``data/``) -> ``scanner`` /
``classifier`` + ``parsing`` (predictions) -> ``records`` (score records on the test
reports) -> ``metrics`` -> ``report`` (tables and ``eval_results.json``); ``plugin`` wires
it into pytest through the harness's public interface (``pytest_summarybench.harness``),
``suite`` holds the benchmark's test module and ``cli`` the ``summarybench compliance``
command. Its errors (``errors``) derive from the harness's public ``InputError`` and
``RunError``.

The public names below are resolved on first access, so that pytest importing
``summarybench_compliance.plugin`` (an entry point, loaded on every pytest run) does not
load the scanner.

PYTEST_DONT_REWRITE: ``summarybench compliance`` imports this package (its command) before
it starts pytest, which would otherwise warn that it cannot rewrite the asserts of an
installed plugin's package already imported (this module has none).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .classifier import DEFAULT_MODEL, LLMClassifier
    from .dataset import ARTICLES, SEVERITIES, Example, load_examples
    from .errors import DatasetError, ParseError, ScanError
    from .parsing import Prediction, parse_response
    from .scanner import ArticleResult, Scanner, ScanResult, scan_code

_EXPORTS = {
    "DEFAULT_MODEL": "classifier", "LLMClassifier": "classifier",
    "ARTICLES": "dataset", "SEVERITIES": "dataset", "Example": "dataset",
    "load_examples": "dataset",
    "DatasetError": "errors", "ParseError": "errors", "ScanError": "errors",
    "Prediction": "parsing", "parse_response": "parsing",
    "ArticleResult": "scanner", "Scanner": "scanner", "ScanResult": "scanner",
    "scan_code": "scanner",
}

__all__ = [
    "ARTICLES", "DEFAULT_MODEL", "SEVERITIES", "ArticleResult", "DatasetError", "Example",
    "LLMClassifier", "ParseError", "Prediction", "ScanError", "ScanResult", "Scanner",
    "load_examples", "parse_response", "scan_code",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)
