"""Spec 8.1 mechanics: the partial code, splicing a completion into its module, and
running a task's tests on it in the sandbox.

The completed function replaces the original, at the same place and indentation, in a
copy of its module inside a copy of its top-level package (so module-level helpers and
sibling modules are there, as in the real codebase); imports the answer adds at its top
level are appended to the module. Tests then import the function from that package.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..sandbox import SandboxLimits, run_sandboxed
from ..schemas import CodeUnit
from .outside import outside_text
from .tasks import TestCase
from .verdicts import CompiledTest, compile_tests, harness_program, judge


class CompletionError(ValueError):
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


def package_layout(codebase_root: Path, rel_path: str) -> tuple[Path, str, str]:
    """(directory to copy, its name in the sandbox, the module's path inside the sandbox).

    The directory is the file's top-level package (walking up while ``__init__.py``
    exists, never above the codebase root); a module outside any package brings its
    directory's modules along.
    """
    root = codebase_root.resolve()
    file = codebase_root / rel_path
    package = file.parent
    if not (package / "__init__.py").exists():
        return package, "", file.name
    while (package.parent / "__init__.py").exists() and package.parent.resolve() != root \
            and root in package.parent.resolve().parents:
        package = package.parent
    return package, package.name, f"{package.name}/{file.relative_to(package).as_posix()}"


@dataclass
class TestRun:
    """The outcome of a completion's tests."""

    __test__ = False  # not a pytest class

    passed: int
    total: int
    results: list[dict]
    """Per test: ``name``, ``passed`` and ``error`` (truncated and redacted: it may hold
    what the generated code printed or raised)."""
    reason: str | None
    """Why the run as a whole failed (timeout, limit, refusal), if it did."""
    layers: tuple[str, ...]
    duration_s: float


HARNESS = Path(__file__).with_name("_sb_harness.py")


def _inputs(layout: tuple[Path, str, str], replaced: Mapping[str, str]
            ) -> tuple[dict[str, str], dict[str, Path]]:
    """(files, read-only directories) of a run: the package (or the module's directory)
    with ``replaced`` modules (sandbox path -> source) swapped in, and the harness."""
    directory, name, _module_path = layout
    if name:
        readonly = {name: directory}
        files = dict(replaced)
    else:
        readonly = {}
        # the module's neighbours, but not links (they may lead out of the codebase)
        files = {p.name: p.read_text(encoding="utf-8") for p in directory.glob("*.py")
                 if not p.is_symlink()}
        files.update(replaced)
    files["_sb_harness.py"] = HARNESS.read_text(encoding="utf-8")
    return files, readonly


def _digest(layout: tuple[Path, str, str], compiled: list[CompiledTest]) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in layout[0].rglob("*.py") if not p.is_symlink()):
        h.update(path.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(json.dumps([(t.name, t.reference) for t in compiled]).encode())
    return h.hexdigest()


@functools.lru_cache(maxsize=256)
def _reference_channel(digest: str, layout: tuple[Path, str, str], programs: str,
                       limits: SandboxLimits) -> str:
    files, readonly = _inputs(layout, {})
    return run_sandboxed(programs, files=files, readonly_dirs=readonly, limits=limits).channel


def run_tests(module_source: str, layout: tuple[Path, str, str], tests: list[TestCase],
              limits: SandboxLimits, *, target: str | Mapping[str, str],
              other_modules: dict[str, str] | None = None) -> TestRun:
    """Run ``tests`` against the package with ``module_source`` spliced in, sandboxed,
    and decide each outside the sandbox (``verdicts.py``).

    :param target: the qualified name of the completed function, or per test name (tests
        of several tasks in one run).
    :param other_modules: further modules to replace (sandbox path -> source), e.g. to
        check several spliced functions in one run.
    """
    targets = target if not isinstance(target, str) else {t.name: target for t in tests}
    compiled = compile_tests([(t.name, t.code, targets[t.name]) for t in tests])
    reference = _reference_channel(_digest(layout, compiled), layout,
                                   harness_program(compiled, reference=True), limits)
    files, readonly = _inputs(layout, {layout[2]: module_source, **(other_modules or {})})
    result = run_sandboxed(harness_program(compiled, reference=False), files=files,
                           readonly_dirs=readonly, limits=limits)
    reason = result.failure_reason(limits)
    verdicts = judge(compiled, reference, result.channel, reason)
    results = [{"name": v.name, "passed": v.passed,
                **({"error": outside_text(v.error, 300)} if v.error else {})}
               for v in verdicts]
    if reason is None and result.violations:
        reason = "sandbox refused an operation"
    return TestRun(passed=sum(1 for r in results if r["passed"]), total=len(tests),
                   results=results, reason=outside_text(reason, 300) if reason else None,
                   layers=result.layers, duration_s=result.duration_s)
