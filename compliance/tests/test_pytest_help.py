"""Installing the package adds only prefixed options to every pytest run (issue 19, item 4).

``pytest --help`` runs in an empty directory that has nothing to do with the project, with
the package installed as it is in this environment, so both entry points autoload. The
options that are ours are found by difference: the help with our two plugins minus the
help with both blocked. No list of today's option names is written down here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPTION_PREFIXES = ("--sb-", "--compliance-")
INI_PREFIXES = ("summarybench_", "compliance_")
HARNESS, COMPLIANCE = "summarybench", "summarybench_compliance"

# An option line starts with two spaces and a dash; the flags run up to two spaces (or the
# end of the line when the metavar pushes the help text to the next line). Help text that
# wraps is indented further, so it never matches.
OPTION_LINE = re.compile(r"^  (-\S.*?)(?:\s{2,}|$)")
FLAG = re.compile(r"(?:^|,\s*)(--?[A-Za-z0-9][\w-]*)")
INI_LINE = re.compile(r"^  ([A-Za-z_][\w.-]*) \([\w-]+\):")


def pytest_help(cwd: Path, *args: str) -> str:
    # A plain user's run: nothing pytest-related inherited from the run of this test
    # (PYTEST_ADDOPTS, PYTEST_PLUGINS, PYTEST_DISABLE_PLUGIN_AUTOLOAD, xdist's variables).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["COLUMNS"] = "200"
    proc = subprocess.run([sys.executable, "-m", "pytest", *args, "--help"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def options(help_text: str) -> set[str]:
    """Every command-line flag (long and short) listed in ``pytest --help`` output."""
    found: set[str] = set()
    for line in help_text.splitlines():
        match = OPTION_LINE.match(line)
        if match:
            found.update(FLAG.findall(match.group(1)))
    return found


def ini_keys(help_text: str) -> set[str]:
    """Every ini key listed in the section that starts with ``[pytest]`` (its title
    differs between pytest versions)."""
    section = re.split(r"^\[pytest\].*$", help_text, maxsplit=1, flags=re.M)[1]
    section = section.strip("\n").split("\n\n", 1)[0]
    return {m.group(1) for line in section.splitlines() if (m := INI_LINE.match(line))}


def test_parser_reads_pytest_help() -> None:
    sample = ("general:\n"
              "  -k EXPRESSION         Only run tests which match\n"
              "  -n numprocesses, --numprocesses=numprocesses\n"
              "                        Shortcut for '--dist=load'. -x is mentioned here\n"
              "  --sb-model=PROVIDER/MODEL\n"
              "  --compliance-no-llm   Run the scanner only\n")
    assert options(sample) == {"-k", "-n", "--numprocesses", "--sb-model",
                               "--compliance-no-llm"}


def test_pytest_help_outside_the_project_lists_only_prefixed_options_of_ours(
        tmp_path: Path) -> None:
    assert ROOT not in tmp_path.parents and not any(tmp_path.iterdir())
    full = pytest_help(tmp_path)
    neither = pytest_help(tmp_path, "-p", f"no:{HARNESS}", "-p", f"no:{COMPLIANCE}")
    harness_only = pytest_help(tmp_path, "-p", f"no:{COMPLIANCE}")
    assert {"-k", "--help"} <= options(neither)  # the parser sees pytest's own options

    ours = options(full) - options(neither)
    assert ours, "neither plugin added an option: are the entry points installed?"
    assert sorted(o for o in ours if not o.startswith(OPTION_PREFIXES)) == []

    compliance = options(full) - options(harness_only)
    assert compliance, "the compliance plugin added no option to pytest --help"
    assert sorted(o for o in compliance if not o.startswith("--compliance-")) == []
    # The seed's --test-mode and --no-ollama are there, under prefixed names.
    assert {"--compliance-test-mode", "--compliance-no-llm"} <= compliance

    assert {"minversion", "addopts"} <= ini_keys(neither)
    our_ini = ini_keys(full) - ini_keys(neither)
    assert sorted(k for k in our_ini if not k.startswith(INI_PREFIXES)) == []
