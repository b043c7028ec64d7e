"""The CLI's extension point (docs/harness.md, "A command of the summarybench CLI"): a
distribution adds a command through the entry-point group ``summarybench.commands``.

Each test puts a small installed distribution (a package and its ``.dist-info`` with the
entry points) on ``PYTHONPATH`` and runs ``python -m pytest_summarybench.cli`` as a user
would."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from pytest_summarybench.cli import COMMANDS_GROUP

GREET = textwrap.dedent('''
    def add_parser(sub):
        p = sub.add_parser("greet", help="say hello from another distribution",
                           epilog="example: summarybench greet --name Ada")
        p.add_argument("--name", default="world")

    def run(args):
        if args.name == "nobody":
            from pytest_summarybench.cli import CliError
            raise CliError("--name: nobody is no one to greet")
        print(f"hello {args.name}")
        return 0
''')


def _install(site: Path, name: str, commands: dict[str, str], modules: dict[str, str]) -> None:
    """A distribution ``name`` in ``site``: its modules and its entry points."""
    for module, source in modules.items():
        (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n",
                                   encoding="utf-8")
    points = "".join(f"{command} = {target}\n" for command, target in commands.items())
    (info / "entry_points.txt").write_text(f"[{COMMANDS_GROUP}]\n{points}", encoding="utf-8")


def _summarybench(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", "pytest_summarybench.cli", *args],
                          cwd=site, env=env, capture_output=True, text=True, timeout=120)


def test_an_added_command_is_listed_and_runs(tmp_path: Path) -> None:
    _install(tmp_path, "greeter", {"greet": "greeter_cli"}, {"greeter_cli": GREET})
    listed = _summarybench(tmp_path, "--help")
    assert listed.returncode == 0, listed.stderr
    assert "greet" in listed.stdout and "say hello from another distribution" in listed.stdout
    ran = _summarybench(tmp_path, "greet", "--name", "Ada")
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "hello Ada\n", "")
    failed = _summarybench(tmp_path, "greet", "--name", "nobody")
    assert failed.returncode == 2
    assert failed.stderr == "summarybench greet: error: --name: nobody is no one to greet\n"


def test_a_broken_command_is_left_out_with_one_line(tmp_path: Path) -> None:
    _install(tmp_path, "greeter", {"greet": "greeter_cli"}, {"greeter_cli": GREET})
    _install(tmp_path, "broken", {"broken": "broken_cli", "quiet": "quiet_cli"},
             {"broken_cli": "raise ImportError('a missing dependency')\n",
              "quiet_cli": "def add_parser(sub):\n    pass\n\ndef run(args):\n    return 0\n"})
    listed = _summarybench(tmp_path, "--help")
    assert listed.returncode == 0
    assert "greet" in listed.stdout and "broken" not in listed.stdout
    assert listed.stderr.splitlines() == [
        "summarybench: the command 'broken' (broken_cli) could not be loaded and is left "
        "out: ImportError: a missing dependency",
        "summarybench: the command 'quiet' (quiet_cli) could not be loaded and is left "
        "out: LookupError: its add_parser added no command named 'quiet'",
    ]
    ran = _summarybench(tmp_path, "greet")
    assert ran.returncode == 0 and ran.stdout == "hello world\n"


def test_a_built_in_name_is_not_taken(tmp_path: Path) -> None:
    _install(tmp_path, "impostor", {"run": "impostor_cli"},
             {"impostor_cli": "raise SystemExit('loaded, though run is built in')\n"})
    listed = _summarybench(tmp_path, "run", "--help")
    assert listed.returncode == 0, listed.stderr
    assert "example: summarybench run" in listed.stdout and listed.stderr == ""
