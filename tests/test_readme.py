"""The README's two commands are what CI runs, and the README points to every page of the
manual (what the manual says is checked in ``tests/test_docs.py``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The README stays short: the manual is in docs/.
MAX_LINES = 250


def _quickstart_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    quick = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", quick)


def test_quickstart_has_exactly_two_commands() -> None:
    cmds = _quickstart_commands()
    assert len(cmds) == 2
    # Both install the two distributions: the summary package and the compliance benchmark.
    assert cmds[0] == ("python3 -m venv .venv && . .venv/bin/activate && pip install -e . "
                       "-e ./compliance && pytest -p summarybench benchmarks")
    assert cmds[1] == ('python3 -m venv .venv && . .venv/bin/activate && pip install -e '
                       '".[dev]" -e ./compliance && pytest --cov -n 2')


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert _quickstart_commands()[1] in ci


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines; move the detail to docs/"


def test_the_readme_points_to_every_page_of_the_manual() -> None:
    text = README.read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\((docs/[a-z0-9-]+\.md)(?:#[a-z0-9-]+)?\)", text))
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set(), "pages the README does not point to"


def test_the_answer_table_covers_every_call() -> None:
    """Issue 33: the table of what each call must answer left out the downstream answers
    and four of the five query types; every evaluator that asks a model has its row."""
    from pytest_summarybench.evaluators import BUILTIN_EVALUATORS, load_builtin
    from pytest_summarybench.evaluators.base import makes_calls
    from pytest_summarybench.evaluators.retrieval.queries import QUERY_TYPES

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    text = next(p.read_text() for p in pages
                if "What the models are asked to answer" in p.read_text())
    table = text.split("What the models are asked to answer", 1)[1].split("\n\n|", 1)[1]
    table = "|" + table.split("\n\n", 1)[0]
    rows = [line.split("|")[1].strip() for line in table.splitlines()[2:]]
    callers = [n for n in BUILTIN_EVALUATORS if makes_calls(load_builtin(n))]
    assert callers
    for name in callers:
        assert any(f"`{name}`" in row for row in rows), (name, rows)
    assert any(row.startswith("retrieval queries") for row in rows)
    assert all(f'"{t}"' in table for t in QUERY_TYPES)
