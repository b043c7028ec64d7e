"""The README's commands are what CI runs, and its option table matches the plugin."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _quickstart_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    quick = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", quick)


def test_quickstart_has_exactly_two_commands() -> None:
    cmds = _quickstart_commands()
    assert len(cmds) == 2
    assert cmds[0].endswith("pytest -p summarybench benchmarks")


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _quickstart_commands()[1] in ci


def test_every_documented_option_exists() -> None:
    import pytest_summarybench.plugin as plugin

    source = Path(plugin.__file__).read_text()
    documented = set(re.findall(r"`(--sb-[a-z-]+)", (ROOT / "README.md").read_text()))
    declared = set(re.findall(r'"(--sb-[a-z-]+)"', source))
    assert documented == declared
