"""A completion's tests (docs/methods.md#downstream-completion) run in the sandbox, and are
decided outside it.

The function's top-level package is copied into the sandbox (so module-level helpers and
sibling modules are there, as in the real codebase) with the spliced module swapped in;
the harness runs each test and reports observations, and ``verdicts.py`` decides each
test from them outside the sandbox, against the original code's run.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ...sandbox import SandboxLimits, run_sandboxed
from .outside import outside_text
from .tasks import TestCase
from .verdicts import CompiledTest, compile_tests, harness_program, judge


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
