"""How a completion task is put together (docs/methods.md#downstream-completion): the partial
code the task model sees, and splicing its completion into the function's module.

The completed function replaces the original, at the same place and indentation, in a
copy of its module; imports the answer adds at its top level are appended to the module.
``sandbox_run`` then runs the task's tests on that module inside a copy of its package.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field

from ...core.errors import RunError
from ...schemas import CodeUnit


class CompletionError(RunError, ValueError):
    """The completion cannot be used (no valid code, no definition of the function)."""


@dataclass(frozen=True)
class SourceFunction:
    """Where a Python function is in its file."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    start: int
    """First line (its first decorator), 1-based."""
    end: int
    """Last line, 1-based, inclusive."""
    indent: str
    """Indentation of the ``def`` line."""


def find_function(tree: ast.AST, qualified: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The definition named ``qualified`` (``Class.method``, ``outer.inner``) in ``tree``."""
    node: ast.AST = tree
    for part in qualified.split("."):
        body = getattr(node, "body", [])
        found = next((n for n in body if isinstance(
            n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part), None)
        if found is None:
            return None
        node = found
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def locate(source: str, qualified: str) -> SourceFunction:
    node = find_function(ast.parse(source), qualified)
    if node is None:
        raise CompletionError(f"no function {qualified!r} in the source")
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    line = source.splitlines()[start - 1]
    indent = line[:len(line) - len(line.lstrip())]
    return SourceFunction(node=node, start=start, end=node.end_lineno or node.lineno,
                          indent=indent)


def partial_code(source: str, unit: CodeUnit) -> str:
    """The function with its body and docstring removed: decorators and signature, under
    its class line for a method."""
    if unit.language != "python":
        signature = unit.metadata.signature or unit.content.splitlines()[0]
        return signature.rstrip().rstrip("{").rstrip() + " {"
    fn = locate(source, unit.name)
    lines = source.splitlines()
    body_start = fn.node.body[0].lineno
    header = lines[fn.start - 1:max(body_start - 1, fn.start)]
    text = textwrap.dedent("\n".join(header)).rstrip()
    if "." in unit.name and unit.type == "method":
        owner = unit.name.rsplit(".", 1)[0].rsplit(".", 1)[-1]
        text = f"class {owner}:\n    ...\n\n" + textwrap.indent(text, "    ")
    return text


def original_code(source: str, unit: CodeUnit) -> str:
    """The original function, dedented (the reference for similarity)."""
    if unit.language != "python":
        return unit.content
    fn = locate(source, unit.name)
    return textwrap.dedent("\n".join(source.splitlines()[fn.start - 1:fn.end]))


@dataclass
class Completed:
    """The function as the task model wrote it, ready to splice."""

    function: str
    """The definition, dedented."""
    imports: list[str] = field(default_factory=list)
    """Top-level imports of the answer."""


def _strip_todo(code: str) -> str:
    return "\n".join(ln for ln in code.splitlines()
                     if ln.strip() != "// TODO: Complete this function")


def completed_function(code: str, unit: CodeUnit, partial: str) -> Completed:
    """Find the completed definition of ``unit`` in the answer's code.

    An answer that holds only a body (no ``def``) is put under the partial signature.
    """
    code = textwrap.dedent(_strip_todo(code))
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise CompletionError(f"the completion is not valid Python: {exc.msg} "
                              f"(line {exc.lineno})") from None
    short = unit.short_name
    node = find_function(tree, unit.name) or next(
        (n for n in ast.walk(tree)
         if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == short), None)
    if node is None:
        if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
               for n in tree.body):
            raise CompletionError(f"the completion defines no function {short!r}")
        header = textwrap.dedent(partial.split("\n\n")[-1]) if "class " in partial else partial
        body = textwrap.indent(code, "    ")
        return completed_function(f"{header}\n{body}", unit, partial)
    lines = code.splitlines()
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    function = textwrap.dedent("\n".join(lines[start - 1:node.end_lineno]))
    imports = [ast.get_source_segment(code, n) or "" for n in tree.body
               if isinstance(n, (ast.Import, ast.ImportFrom))]
    return Completed(function=function, imports=[i for i in imports if i])


def splice(source: str, unit: CodeUnit, completed: Completed) -> str:
    """``source`` with the unit's function replaced by the completion."""
    fn = locate(source, unit.name)
    lines = source.splitlines()
    new = textwrap.indent(completed.function, fn.indent,
                          predicate=lambda ln: True).splitlines()
    start = fn.start
    if not completed.function.lstrip().startswith("@"):
        # The partial code showed the decorators as given; an answer that leaves them out
        # keeps the original ones.
        start = fn.node.lineno
    out = lines[:start - 1] + new + lines[fn.end:]
    if completed.imports:
        out += ["", "# imports added by the completion", *completed.imports]
    return "\n".join(out) + "\n"
