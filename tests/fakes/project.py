"""The scaffolding every end-to-end plugin test writes: a codebase under ``code/`` and a
bench module whose one test evaluates each matrix case (``sb_case``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

TEST_MODULE = '''
    def test_summary(sb_case):
        assert sb_case.evaluate()
'''


#: A small Python module (two documented functions) for tests that need some code to run
#: the benchmark on; ``write_code(pytester, {"shop/tax.py": TAX_MODULE})``.
TAX_MODULE = '''
def add_vat(net, rate=0.2):
    """Add value-added tax to a net amount."""
    gross = net * (1 + rate)
    return round(gross, 2)


def split_invoice(total, parts):
    """Split an invoice total into equal instalments."""
    share = round(total / parts, 2)
    return [share] * (parts - 1) + [round(total - share * (parts - 1), 2)]
'''


def write_code(pytester: pytest.Pytester, code: Mapping[str, str]) -> None:
    """Each ``path -> source`` of ``code`` under ``code/``, dedented."""
    for rel, text in code.items():
        path = pytester.path / "code" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def write_bench_module(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bench=textwrap.dedent(TEST_MODULE))


def session_results(result: pytest.RunResult) -> dict[str, Any]:
    """The results.json of the session ``result`` ran, where its terminal summary says it
    is (a partial run's is in ``runs/<id>/``, not at the top of the output directory)."""
    found = re.search(r"^results: (.+)$", result.stdout.str(), re.MULTILINE)
    assert found is not None, result.stdout.str()
    return json.loads(Path(found.group(1)).read_text())


def run_session(project: Path, *args: str) -> pytest.RunResult:
    """A pytest session in ``project``, started as ``pytester.runpytest_subprocess`` starts
    one, for a fixture wider than a test (a module's shared run, which ``pytester`` cannot
    give): a base temporary folder beside ``project``, its own HOME, ``project`` first on
    the path, and the environment tests/conftest.py gives a test's children (no xdist
    worker's variables, no keys, bytecode written)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTEST_XDIST_") and not k.endswith("_API_KEY")
           and k not in ("PYTEST_ADDOPTS", "PYTHONDONTWRITEBYTECODE")}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", PY_COLORS="0",
               HOME=str(project.parent),
               PYTHONPATH=os.pathsep.join(filter(None, [str(project),
                                                        os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "pytest",
                           f"--basetemp={project.parent / 'basetemp'}", *args],
                          cwd=project, env=env, capture_output=True, text=True, timeout=600)
    return pytest.RunResult(done.returncode, done.stdout.splitlines(),
                            done.stderr.splitlines(), 0.0)
