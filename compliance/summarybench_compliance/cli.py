"""``summarybench compliance``: the EU AI Act compliance benchmark through pytest with its
plugin, as ``summarybench run`` does for the code-summary benchmark. A command of the
``summarybench`` CLI's extension group (``summarybench.commands``, this distribution's
entry point): ``add_parser`` and ``run``.

It runs the benchmark's test module shipped in this package (``suite/``) on the datasets
shipped with it (``data/``), so it works from an installed wheel. It takes the seed's own
switches, ``--test-mode`` and ``--no-ollama``. As pytest options they were unprefixed
names in every project's pytest run; as arguments of this command they cannot collide
with anything, and are passed on as ``--compliance-test-mode`` and ``--compliance-no-llm``.
Inputs are checked here, so a bad one is one line and exit 2 before pytest starts.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pytest_summarybench import InputError

PLUGIN = "summarybench_compliance"
SUITE = Path(__file__).resolve().parent / "suite" / "test_compliance.py"
"""The benchmark's test module, shipped in the package."""
EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compliance", help="the EU AI Act compliance benchmark (rule scanner vs an LLM)",
        description="Classify the labelled AI-agent code of the compliance benchmark with "
                    "the rule-based scanner and the LLM classifier (skipped with one reason "
                    "when it cannot be reached), print accuracy, per-article F1, "
                    "per-framework accuracy and the confusion matrix, and write "
                    "eval_results.json to ./summarybench-results (pytest option "
                    "--sb-output DIR after -- to change). The options are the seed's; "
                    "in a plain pytest run they are spelled --compliance-*.",
        epilog="example: summarybench compliance --test-mode --no-ollama -- -n 2")
    p.add_argument("--test-mode", action="store_true",
                   help="10 examples spread over the dataset instead of all of them "
                        "(pytest: --compliance-test-mode)")
    p.add_argument("--no-ollama", "--no-llm", dest="no_llm", action="store_true",
                   help="rule-based scanner only: do not run the LLM classifier, whichever "
                        "provider it uses (pytest: --compliance-no-llm)")
    p.add_argument("--model", metavar="PROVIDER/MODEL", default=None,
                   help="the LLM classifier (default: ollama/air-compliance-v2)")
    p.add_argument("--endpoint", metavar="URL", default=None,
                   help="base URL of the classifier's server (default: the provider's, "
                        "http://localhost:11434 for Ollama)")
    p.add_argument("--data", metavar="PATH|NAME", default=None,
                   help="a file in the eval_data.jsonl format, or the name of a dataset "
                        "shipped with the benchmark: eval_data (the default), heldout_data, "
                        "independent_dev, independent_test, ...")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER,
                   help="arguments after -- go to pytest (e.g. -- -n 2 -k scanner)")


def pytest_arguments(args: argparse.Namespace) -> list[str]:
    """The pytest options for ``args``; a bad value is an InputError naming its flag."""
    from .classifier import DEFAULT_MODEL, check_endpoint, parse_model

    argv = ["-p", PLUGIN]
    if args.test_mode:
        argv.append("--compliance-test-mode")
    if args.no_llm:
        argv.append("--compliance-no-llm")
    if args.endpoint is not None:
        try:
            check_endpoint(args.endpoint)
        except ValueError as err:
            raise InputError(f"--endpoint {args.endpoint!r}: {err}") from None
        argv += ["--compliance-endpoint", args.endpoint]
    if args.model is not None:
        argv += ["--compliance-model", args.model]
    spec = args.model or DEFAULT_MODEL
    try:
        parse_model(spec, args.endpoint)
    except ValueError as err:
        raise InputError(f"--model {spec!r}: {err}") from None
    if args.data is not None:
        argv += ["--compliance-data", str(_checked_data(args.data))]
    return argv


def _checked_data(given: str) -> Path:
    """The dataset's absolute path once it loads; its first bad line is an InputError."""
    from .dataset import DatasetError, dataset_path, load_examples

    try:
        path = dataset_path(given, Path.cwd())
        load_examples(path)
    except DatasetError as err:
        raise InputError(f"--data: {err}") from None
    return path.resolve()


def exit_code(pytest_code: int) -> int:
    """pytest's exit code in the command's terms (README "Command line"): test failures
    and internal errors are 1; a collection error (a bad dataset line), a usage error or
    a selection that left no test is bad input, 2."""
    if pytest_code == 0:
        return EXIT_OK
    if pytest_code in (1, 3):
        return EXIT_FAILURE
    return EXIT_USAGE


def run(args: argparse.Namespace) -> int:
    import pytest

    extra = list(args.pytest_args)
    extra = extra[1:] if extra[:1] == ["--"] else extra  # that first -- only
    # The rootdir is the current directory, where the results go (summarybench-results)
    # and pytest's cache lives, wherever the package is installed.
    code = int(pytest.main([str(SUITE), "-p", "summarybench", *pytest_arguments(args),
                            "--rootdir", os.getcwd(), *extra]))
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        print("summarybench compliance: error: the pytest arguments after -- "
              f"({' '.join(extra) or 'none'}) selected no compliance test; nothing ran",
              file=sys.stderr)
    return exit_code(code)
