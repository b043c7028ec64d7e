"""The bundled completion tests are real: all pass on the original code, all fail when
every target function is a stub."""

from __future__ import annotations

from pathlib import Path

from pytest_summarybench.evaluators.downstream.sandbox_run import package_layout, run_tests
from pytest_summarybench.evaluators.downstream.splice import (
    completed_function,
    partial_code,
    splice,
)
from pytest_summarybench.evaluators.downstream.tasks import (
    TestCase,
    UnitIndex,
    load_task_file,
    resolve,
)
from pytest_summarybench.extract import extract_units
from pytest_summarybench.extract.config import ExtractionConfig
from pytest_summarybench.sandbox import SandboxLimits
from tests.evaluators.downstream.conftest import CODEBASE, TASKS


def _tests() -> tuple[list, list[TestCase], dict[str, str]]:
    tasks = load_task_file(TASKS / "completion.jsonl", "completion")
    # One sandbox run for all tasks: test names are prefixed with the task id.
    tests = [TestCase(name=f"{t.task.id}/{case.name}", code=case.code)
             for t in tasks for case in t.task.tests]
    targets = {f"{t.task.id}/{case.name}": t.task.name for t in tasks for case in t.task.tests}
    return tasks, tests, targets


def _run(sources: dict[str, str], tests: list[TestCase], targets: dict[str, str]
         ) -> list[dict]:
    """All tests in one sandbox run, with these modules (codebase path -> source)."""
    directory, name, _ = package_layout(CODEBASE, "python/bookshop/pricing.py")
    modules = {f"{name}/{Path(rel).name}": text for rel, text in sources.items()}
    first = sorted(modules)[0]
    run = run_tests(modules.pop(first), (directory, name, first), tests,
                    SandboxLimits(wall_s=60, cpu_s=20), target=targets,
                    other_modules=modules)
    assert run.reason is None or run.passed == 0, run.reason
    return run.results


def test_every_bundled_test_passes_on_the_original_code() -> None:
    _, tests, targets = _tests()
    sources = {"python/bookshop/pricing.py":
               (CODEBASE / "python/bookshop/pricing.py").read_text(encoding="utf-8")}
    results = _run(sources, tests, targets)
    assert [r for r in results if not r["passed"]] == []
    assert len(results) == 33


def test_every_bundled_test_fails_on_stubs() -> None:
    tasks, tests, targets = _tests()
    units = extract_units(ExtractionConfig(root_path=str(CODEBASE))).units
    index = UnitIndex(units)
    by_id = {u.id: u for u in units}
    sources: dict[str, str] = {}
    for loaded in tasks:
        unit = by_id[resolve(loaded, index).target_id]
        path = loaded.task.path
        source = sources.get(path) or (CODEBASE / path).read_text(encoding="utf-8")
        partial = partial_code(source, unit)
        header = partial.split("\n\n")[-1] if partial.startswith("class ") else partial
        stub = completed_function(f"{header.strip()}\n    raise NotImplementedError\n",
                                  unit, partial)
        sources[path] = splice(source, unit, stub)
    results = _run(sources, tests, targets)
    assert [r["name"] for r in results if r["passed"]] == []
    assert all("NotImplementedError" in r["error"] for r in results)
