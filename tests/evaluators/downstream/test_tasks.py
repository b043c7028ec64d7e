"""Task-set files: validation naming the line and the field, resolution against units,
discovery, the bundled set, and task sets built from the codebase."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_summarybench.evaluators.downstream.tasks import (
    TaskExcluded,
    TaskFileError,
    UnitIndex,
    load_task_file,
    parse_lines,
    resolve,
    task_files,
)
from pytest_summarybench.extract import extract_units
from pytest_summarybench.extract.config import ExtractionConfig
from pytest_summarybench.schemas import CodeUnit
from tests.evaluators.downstream.conftest import CODEBASE, TASKS

FS_OK = {"id": "fs-1", "description": "Find the VAT rate.",
         "correct": {"path": "python/bookshop/pricing.py", "name": "vat_rate_for"},
         "candidates": [{"path": "python/bookshop/pricing.py", "name": "vat_rate_for"},
                        {"path": "python/bookshop/pricing.py", "name": "calculate_vat"}]}
BL_OK = {"id": "bl-1", "description": "VAT is a penny short.",
         "buggyFile": "python/bookshop/pricing.py",
         "candidateFiles": ["python/bookshop/pricing.py", "python/bookshop/orders.py"]}
C_OK = {"id": "c-1", "path": "python/bookshop/pricing.py", "name": "calculate_vat",
        "requirements": "Return the VAT in pence.",
        "tests": [{"name": "t", "code": "assert True\n"}]}


@pytest.fixture(scope="module")
def units() -> list[CodeUnit]:
    return extract_units(ExtractionConfig(root_path=str(CODEBASE))).units


def _lines(*objs: object) -> str:
    return "\n".join(json.dumps(o) for o in objs) + "\n"


@pytest.mark.parametrize(("kind", "line2", "field", "message"), [
    ("function_selection", {k: v for k, v in FS_OK.items() if k != "description"},
     "description", "missing"),
    ("function_selection", {**FS_OK, "id": "fs-2", "candidates": []}, "candidates",
     "the candidate list is empty"),
    ("function_selection", {**FS_OK, "id": "fs-2", "correct": {"path": "a.py"}}, "correct.name",
     "missing"),
    ("bug_localisation", {**BL_OK, "id": "bl-2", "candidateFiles": []}, "candidateFiles",
     "the candidate list is empty"),
    ("bug_localisation", {k: v for k, v in BL_OK.items() if k != "buggyFile"}, "buggyFile",
     "missing"),
    ("bug_localisation", {**BL_OK, "id": "bl-2", "severity": "high"}, "severity",
     "unknown field"),
    ("completion", {**C_OK, "id": "c-2", "tests": [{"name": "t"}]}, "tests[0].code", "missing"),
    ("completion", {**C_OK, "id": "c-2", "requirements": "  "}, "requirements",
     "must not be empty"),
    ("completion", {**C_OK}, "id", "'c-1' is already used on line 1"),
])
def test_invalid_lines_name_the_line_and_the_field(kind: str, line2: dict, field: str,
                                                   message: str) -> None:
    first = {"function_selection": FS_OK, "bug_localisation": BL_OK, "completion": C_OK}[kind]
    with pytest.raises(TaskFileError) as info:
        parse_lines(_lines(first, line2), f"{kind}.jsonl", kind)  # type: ignore[arg-type]
    assert str(info.value) == f"{kind}.jsonl:2: field {field!r}: {message}"
    assert (info.value.line, info.value.field) == (2, field)


def test_bad_json_and_non_objects_are_named(tmp_path: Path) -> None:
    path = tmp_path / "completion.jsonl"
    path.write_text(json.dumps(C_OK) + "\n\n{not json\n")
    with pytest.raises(TaskFileError, match=r"completion.jsonl:3: field '\(line\)': not valid"):
        load_task_file(path, "completion")
    with pytest.raises(TaskFileError, match=r"x:1: field '\(line\)': expected a JSON object"):
        parse_lines("[1, 2]\n", "x", "completion")


@pytest.mark.parametrize(("kind", "obj", "field", "message"), [
    ("bug_localisation", {**BL_OK, "candidateFiles": ["python/bookshop/pricing.py",
                                                      "python/bookshop/nope.py"]},
     "candidateFiles[1]", "unknown file 'python/bookshop/nope.py'"),
    ("bug_localisation", {**BL_OK, "buggyFile": "python/bookshop/nope.py"}, "buggyFile",
     "unknown file 'python/bookshop/nope.py'"),
    ("bug_localisation", {**BL_OK, "buggyFile": "python/bookshop/audit.py"}, "buggyFile",
     "'python/bookshop/audit.py' is not among the candidates"),
    ("function_selection", {**FS_OK, "candidates": [
        FS_OK["correct"], {"path": "python/bookshop/pricing.py", "name": "no_such"}]},
     "candidates[1]", "unknown unit 'no_such' in python/bookshop/pricing.py"),
    ("function_selection", {**FS_OK, "correct": {"path": "go/nope.go", "name": "F"}}, "correct",
     "unknown file 'go/nope.go'"),
    ("function_selection", {**FS_OK, "correct": {"path": "python/bookshop/pricing.py",
                                                 "name": "parse_coupon"}}, "correct",
     "is not among the candidates"),
    ("completion", {**C_OK, "path": "typescript/src/currency.ts", "name": "formatMoney"},
     "tests", "tests run for Python targets only"),
    ("completion", {**C_OK, "name": "PriceBreakdown"}, "name", "is a class, not a function"),
    ("completion", {**C_OK, "context": [{"path": "python/bookshop/x.py", "name": "f"}]},
     "context[0]", "unknown file 'python/bookshop/x.py'"),
])
def test_unknown_references_name_the_line_and_the_field(units: list[CodeUnit], kind: str,
                                                        obj: dict, field: str,
                                                        message: str) -> None:
    (loaded,) = parse_lines(_lines(obj), f"{kind}.jsonl", kind)  # type: ignore[arg-type]
    with pytest.raises(TaskFileError) as info:
        resolve(loaded, UnitIndex(units))
    assert str(info.value).startswith(f"{kind}.jsonl:1: field {field!r}: ")
    assert message in str(info.value)


def test_one_file_with_a_type_per_line(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(_lines({"type": "bug_localisation", **BL_OK},
                           {"type": "function_selection", **FS_OK}))
    found = task_files(path)
    assert sorted(found) == ["bug_localisation", "function_selection"]
    path.write_text(_lines({"type": "refactoring", **BL_OK}))
    with pytest.raises(TaskFileError, match=r":1: field 'type': 'refactoring' is not one of"):
        task_files(path)


def test_bundled_task_set_resolves_against_the_extracted_units(units: list[CodeUnit]) -> None:
    found = task_files(TASKS)
    assert {k: len(v) for k, v in found.items()} == {
        "completion": 9, "bug_localisation": 10, "function_selection": 14}
    index = UnitIndex(units)
    by_id = {u.id: u for u in units}
    for kind, tasks in found.items():
        for loaded in tasks:
            done = resolve(loaded, index)
            target = by_id[done.target_id]
            if kind == "completion":
                assert target.type in ("function", "method") and done.unit_ids
                assert len(loaded.task.tests) >= 2
            else:
                assert len(done.unit_ids) >= 5
    languages = {by_id[resolve(t, index).target_id].language
                 for t in found["bug_localisation"]}
    assert {"python", "go", "typescript"} <= languages


def test_code_left_out_by_the_configuration_is_not_an_error(units: list[CodeUnit]) -> None:
    python_only = UnitIndex([u for u in units if u.language == "python"], CODEBASE)
    (left_out,) = parse_lines(_lines({**BL_OK, "candidateFiles": [
        "python/bookshop/pricing.py", "other/InvoiceRenderer.php"]}), "b.jsonl",
        "bug_localisation")
    with pytest.raises(TaskExcluded, match=r"b.jsonl:1: other/InvoiceRenderer.php exists"):
        resolve(left_out, python_only)
    (missing,) = parse_lines(_lines({**BL_OK, "candidateFiles": [
        "python/bookshop/pricing.py", "python/bookshop/nope.py"]}), "b.jsonl",
        "bug_localisation")
    with pytest.raises(TaskFileError, match="unknown file 'python/bookshop/nope.py'"):
        resolve(missing, python_only)
    (no_unit,) = parse_lines(_lines({**FS_OK, "candidates": [
        FS_OK["correct"], {"path": "python/bookshop/pricing.py", "name": "no_such"}]}),
        "f.jsonl", "function_selection")
    with pytest.raises(TaskFileError, match="unknown unit 'no_such'"):
        resolve(no_unit, python_only)
