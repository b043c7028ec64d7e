"""Issue 32: every long phase is seen on a terminal, including those drawn from the
warm-up thread (the distractor candidates and the embedding of code), and as plain lines
(never a carriage return) when the output is not a terminal.

The session runs under ``script``, which gives it a real pseudo-terminal, so pytest's
capture, the terminal reporter and the bars meet as they do for a user. The phases here
are short: the conftest sets the session's ``moment_s`` to 0 so each one draws at once
(on a loaded machine a phase may still take any time; nothing here depends on that).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fakes.project import write_bench_module

pytest_plugins = ["pytester"]
SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "sample_codebase"

CONFTEST = '''
import pytest


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    state = config.pluginmanager.get_plugin("summarybench-state")
    if state is not None:
        state.progress().moment_s = 0.0  # draw every phase, however short
'''

#: Phases the run must show, and whether each is drawn from the warm-up thread.
PHASES = ("summarybench extraction", "summarybench distractor candidates",
          "summarybench embedding code", "summarybench embedding summaries")


def _project(pytester: pytest.Pytester) -> list[str]:
    pytester.makeconftest(textwrap.dedent(CONFTEST))
    pytester.path.joinpath("summarybench.yaml").write_text(
        f"codebase:\n  root: {SAMPLE}\n  languages: [python]\n"
        "evaluation:\n  sampleSize: 6\n  retrieval: {enabled: false}\n"
        "  judge: {enabled: false}\n  downstream: {enabled: false}\n"
        "  contrastive: {embeddingModel: builtin/hashing}\n")
    write_bench_module(pytester)
    return [sys.executable, "-m", "pytest", "-p", "summarybench", "-p", "no:cacheprovider",
            "-q", "--sb-output", "out", "--sb-no-validate"]


def test_every_long_phase_is_a_bar_on_a_terminal(pytester: pytest.Pytester) -> None:
    if shutil.which("script") is None:
        pytest.skip("needs util-linux's script (a pseudo-terminal)")
    cmd = _project(pytester)
    typescript = pytester.path / "typescript"
    # A pseudo-terminal of a known width: script's own has none when it is not started
    # from a terminal, and tqdm would then draw empty bars.
    shell = f"stty cols 160 rows 50; exec {shlex.join(cmd)}"
    done = subprocess.run(["script", "-qfec", shell, str(typescript)], cwd=pytester.path,
                          capture_output=True, text=True, timeout=600)
    screen = typescript.read_text(errors="replace")
    assert done.returncode == 0, screen[-3000:]
    for phase in PHASES:
        # tqdm's bar: "name: 100%|#####| 6/6 [...]", redrawn with carriage returns.
        assert re.search(re.escape(phase) + r"[^\n\r]*?: +100%\|", screen), (phase, screen)
    assert "summarybench ranking" in screen


def test_every_long_phase_is_a_plain_line_off_a_terminal(pytester: pytest.Pytester) -> None:
    cmd = _project(pytester)
    done = subprocess.run(cmd, cwd=pytester.path, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for phase in PHASES:
        assert re.search(re.escape(phase) + r"[^\n]*?: 100% \d+/\d+", done.stderr), (
            phase, done.stderr)
    assert "\r" not in done.stderr
