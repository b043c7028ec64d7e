"""A scripted task model for the fake server: it reads the prompts of
docs/methods.md#downstream-family and answers the way a model relying on the summaries would,
deterministically.

- completion: the original function from the bundled codebase (so its tests pass), except
  for the functions listed in ``BROKEN`` (a stub, one that writes outside its sandbox);
- bug localisation and function selection: the candidate whose summary shares the most
  words with the report or task (ties: the first listed), in the spec's JSON format.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parents[3] / "fixtures" / "sample_codebase" / "python" / \
    "bookshop"

#: Function name -> the code answered instead of the original.
BROKEN: dict[str, str] = {
    "calculate_vat": "def calculate_vat(net_cents: int, category: str) -> int:\n    return 0\n",
    "try_acquire": ("def try_acquire(self, tokens: int = 1) -> bool:\n"
                    "    open('/etc/summarybench-planted', 'w').write('x')\n"
                    "    return True\n"),
}
_WORD = re.compile(r"[a-z0-9]+")


def original_functions() -> dict[str, str]:
    """Short name -> dedented source of every function and method of the package."""
    out: dict[str, str] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                lines = source.splitlines()[start - 1:node.end_lineno]
                out.setdefault(node.name, textwrap.dedent("\n".join(lines)))
    return out


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 3}


def _sections(block: str) -> list[tuple[str, str]]:
    parts = re.split(r"^### (.+)$", block, flags=re.M)
    return [(parts[i].strip(), parts[i + 1].strip()) for i in range(1, len(parts) - 1, 2)]


def _best(query: str, block: str) -> str:
    wanted = _words(query)
    sections = _sections(block)
    scores = [len(wanted & _words(summary)) for _, summary in sections]
    return sections[scores.index(max(scores))][0]


class ScriptedTaskModel:
    """Callable responder for ``FakeOpenAIServer(respond=...)``; counts what it saw."""

    def __init__(self) -> None:
        self.functions = original_functions()
        self.seen: dict[str, int] = {"completion": 0, "bug": 0, "selection": 0}

    def __call__(self, body: dict[str, Any]) -> str:
        prompt = str(body["messages"][-1]["content"])
        if prompt.startswith("Complete this code"):
            self.seen["completion"] += 1
            code = prompt.split("## Code to Complete", 1)[1]
            name = re.findall(r"def (\w+)\(", code)[-1]
            answer = BROKEN.get(name) or self.functions[name]
            return f"```python\n{answer}\n```"
        if prompt.startswith("A bug has been reported"):
            self.seen["bug"] += 1
            report = prompt.split("## Bug Report", 1)[1].split("## File Summaries", 1)[0]
            block = prompt.split("## File Summaries", 1)[1].split("Which file", 1)[0]
            return "```json\n" + json.dumps({"predicted_file": _best(report, block),
                                             "confidence": "medium",
                                             "reasoning": "most shared words"}) + "\n```"
        self.seen["selection"] += 1
        task = prompt.split("## Task", 1)[1].split("## Available Functions", 1)[0]
        block = prompt.split("## Available Functions", 1)[1].split("Which function", 1)[0]
        return json.dumps({"selected_function": _best(task, block), "confidence": "low",
                           "reasoning": "most shared words"})
