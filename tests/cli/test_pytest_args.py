"""Everything after ``--`` reaches pytest, for every command that runs it (issue 21, item
3): ``--lf``, ``--ff``, ``--sw`` and ``--nf`` need pytest's cache plugin, which the
commands once disabled (``unrecognized arguments: --lf``, exit 4).

The commands run as subprocesses (``python -m pytest_summarybench.cli``) on a two-function
codebase with the offline models, and a last-failed run is checked to select the failed
tests only.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fakes.project import TAX_MODULE

#: A plugin (``-p flaky`` after ``--``) that fails the tests of one model while FAIL_LEAD
#: is set, as a flaky provider would, so that ``--lf`` has something to select.
FLAKY = '''
import os

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if "builtin/lead" in item.nodeid and os.environ.get("FAIL_LEAD"):
        raise AssertionError("scripted failure")
    return (yield)
'''


def sb(cwd: Path, *args: str, env: dict[str, str] | None = None
       ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_summarybench.cli", *args], cwd=cwd,
                          env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                               **(env or {})},
                          capture_output=True, text=True, timeout=600)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "tax.py").write_text(TAX_MODULE)
    assert sb(tmp_path, "init", "--name", "t", "--codebase", "code").returncode == 0
    assert sb(tmp_path, "config", "--eval", "contrastive").returncode == 0
    return tmp_path


def test_last_failed_and_friends_reach_pytest(project: Path) -> None:
    # Every flag that needs pytest's cache plugin, and -x, is accepted: in one command,
    # which a flag pytest did not know would end with exit 4, naming every such flag.
    flags = ["--lf", "--ff", "--nf", "--sw", "-x"]
    proc = sb(project, "generate", "--", *flags)
    assert proc.returncode == 0, (flags, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "unrecognized arguments" not in proc.stderr
    (project / "flaky.py").write_text(textwrap.dedent(FLAKY))
    # The package first on the path as the caller had it (a work tree), then the plugin.
    path = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(project)) if p)
    failed = sb(project, "evaluate", "--only", "contrastive", "--", "-q", "-p", "flaky",
                env={"FAIL_LEAD": "1", "PYTHONPATH": path})
    assert failed.returncode == 1, failed.stdout[-2000:] + failed.stderr[-2000:]
    # 2 units x 5 built-in models, and 2 documented units x the 5 validity-ladder models
    # (on by default offline; the ladder has no builtin/lead)
    assert "2 failed, 18 passed" in failed.stdout
    rerun = sb(project, "evaluate", "--only", "contrastive", "--", "--lf", "-q")
    assert rerun.returncode == 0, rerun.stdout[-2000:] + rerun.stderr[-2000:]
    # Only the two failed tests ran again (pytest's last-failed selection).
    assert "2 passed, 18 deselected" in rerun.stdout
    # What follows -- reaches pytest as given: -k with spaces.
    proc = sb(project, "run", "--", "-q", "-k", "builtin/lead and add_vat")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "1 passed, 19 deselected" in proc.stdout
