"""Issue 18, item 3: a completion cannot forge its tests' verdicts.

Each forger below is answered as the completion of every bundled completion task; a
forger that is not an implementation must pass no test. On the code before this issue,
the first one (print the harness's pass line for every test, then ``os._exit(0)``) got
pass rate 1.0 on all 9 tasks.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from pytest_summarybench.evaluators.downstream.sandbox_run import package_layout, run_tests
from pytest_summarybench.evaluators.downstream.splice import (
    completed_function,
    partial_code,
    splice,
)
from pytest_summarybench.evaluators.downstream.tasks import UnitIndex, load_task_file, resolve
from pytest_summarybench.extract import extract_units
from pytest_summarybench.extract.config import ExtractionConfig
from pytest_summarybench.sandbox import SandboxLimits
from tests.evaluators.downstream.conftest import CODEBASE, TASKS
from tests.sandbox.layers import limits_for

#: Body lines of a forging function (indented under its own signature).
FORGERS: dict[str, str] = {
    # Reports "start, every check, end" for every test it can find, then leaves.
    "fake-reports-then-exit": """
        import os, sys, json, re
        frame = sys._getframe()
        while frame is not None and "tests" not in frame.f_locals:
            frame = frame.f_back
        fd = frame.f_globals.get("_state", {}).get("fd") if frame else None
        fd = fd if fd is not None else sys.modules["__main__"].__dict__.get("channel_fd", 3)
        tests = frame.f_locals["tests"] if frame else []
        for i, (name, code) in enumerate(tests):
            os.write(fd, (json.dumps({"t": i, "start": 1}) + "\\n").encode())
            for k, values in re.findall(r"_sbh.check\\((\\d+), \\((.*?)\\)\\)", code):
                count = max(1, values.count(",") + (0 if values.rstrip().endswith(",") else 1))
                os.write(fd, (json.dumps({"t": i, "c": int(k), "o": [0] * count}) + "\\n").encode())
            os.write(fd, (json.dumps({"t": i, "end": 1}) + "\\n").encode())
        print("@@summarybench-test@@ " + json.dumps({"passed": True}))
        os._exit(0)
    """,
    # An answer that equals everything.
    "always-equal": """
        class Anything:
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            def __lt__(self, other): return True
            def __gt__(self, other): return True
            def __bool__(self): return True
            def __hash__(self): return 0
            def __getattr__(self, name): return Anything()
            def __iter__(self): return iter([])
            def __len__(self): return 1
            def __getitem__(self, key): return Anything()
        return Anything()
    """,
    # Reads the expected value out of the caller's code, as the old tests held it.
    "reads-the-expected-value": """
        import sys
        caller = sys._getframe(1)
        constants = [c for c in caller.f_code.co_consts
                     if isinstance(c, (int, str)) and not isinstance(c, bool)]
        return constants[-1] if constants else None
    """,
    # Switches the harness's reporting off, so that nothing can fail.
    "silences-the-harness": """
        import sys
        for module in list(sys.modules.values()):
            if getattr(module, "__name__", "") == "_sb_harness":
                module.check = lambda *a, **k: None
                module.fail = lambda *a, **k: None
        return None
    """,
    # Ends the process "successfully" before any check.
    "exits-zero": """
        import os
        os._exit(0)
    """,
}


@pytest.fixture(scope="module")
def tasks() -> list[tuple[Any, Any]]:
    units = extract_units(ExtractionConfig(root_path=str(CODEBASE))).units
    index = UnitIndex(units)
    by_id = {u.id: u for u in units}
    loaded = load_task_file(TASKS / "completion.jsonl", "completion")
    return [(t, by_id[resolve(t, index).target_id]) for t in loaded]


def _forge(body: str) -> Callable[[str], str]:
    def make(header: str) -> str:
        return f"{header.strip()}\n{textwrap.indent(textwrap.dedent(body).strip(), '    ')}\n"
    return make


@pytest.mark.parametrize("forger", sorted(FORGERS))
def test_forged_completions_pass_no_test(forger: str, tasks: list[tuple[Any, Any]]) -> None:
    limits = limits_for("all")
    passed: dict[str, list[str]] = {}
    total = 0
    for loaded, unit in tasks:
        task = loaded.task
        source = (CODEBASE / task.path).read_text(encoding="utf-8")
        partial = partial_code(source, unit)
        header = partial.split("\n\n")[-1] if partial.startswith("class ") else partial
        done = completed_function(_forge(FORGERS[forger])(header), unit, partial)
        run = run_tests(splice(source, unit, done), package_layout(CODEBASE, task.path),
                        task.tests, SandboxLimits(**{**limits.__dict__, "wall_s": 20.0}),
                        target=unit.name)
        total += run.total
        if run.passed:
            passed[task.id] = [r["name"] for r in run.results if r["passed"]]
    assert total == 33
    assert passed == {}, json.dumps(passed)


def test_what_leaves_the_sandbox_is_truncated_and_redacted(
        fake_server: Callable[..., Any], tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exception text and output of generated code reach the record (and so the store,
    results.json and the reports) bounded, without key material or control sequences."""
    from pytest_summarybench.context import RunContext
    from pytest_summarybench.evaluators.downstream.completion import CompletionEvaluator
    from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
    from pytest_summarybench.settings import load_settings
    from pytest_summarybench.store import Store

    secret = "sk-LEAKED-IN-A-TRACEBACK-9f2c77"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    code = ("def calculate_vat(net_cents, category):\n"
            f"    print('\\x1b]52;c;{secret}\\x07' * 3)\n"
            f"    raise RuntimeError('\\x1b[2J{secret} ' + 'A' * 20000)\n")
    server = fake_server(respond=lambda body: f"```python\n{code}\n```")
    units = extract_units(ExtractionConfig(root_path=str(CODEBASE))).units
    settings = load_settings(None, {
        "codebase.root": str(CODEBASE), "models.test": [{"provider": "builtin",
                                                         "model": "docstring"}],
        "output.directory": str(tmp_path / "out"),
        "evaluation.downstream.completionModel": "local/task-model",
        "evaluation.downstream.apiEndpoint": server.base_url}, base_dir=tmp_path,
                             families=BUILTIN_FAMILIES)
    store = Store(tmp_path / "store.sqlite")
    store.save_units("run", units, {u.id for u in units})
    ctx = RunContext(settings, store, "run")
    evaluator = CompletionEvaluator()
    evaluator.prepare(ctx)  # the summaries the task shows (the controller's, in a session)
    ctx = ctx.refreshed()
    item = next(i for i in evaluator.items(ctx) if i.variant == "c-calculate-vat")
    (record,) = evaluator.evaluate(item, ctx)
    text = json.dumps(record.details)
    assert secret not in text
    assert "\x1b" not in text and "\\u001b" not in text
    assert all(len(t.get("error", "")) <= 400 for t in record.details["tests"])
    assert len(record.details["reason"]) <= 450
    assert "RuntimeError" in record.details["reason"]


# -- values too large to report whole (the adversarial pass of 2026-11-24) ---------------------
#: A module of the task's package (the originals); the object ``is`` compares with lives in
#: another module of the package (``CONFIG``), so the check pins it from the reference run.
CONFIG = '''
class Config:
    def __init__(self):
        self.level = 3


DEFAULT_CONFIG = Config()
'''
LARGE_ORIGINAL = '''
from large.config import DEFAULT_CONFIG, Config


def big_power(n):
    return 7 ** n


def first_n_squares(n):
    return [i * i for i in range(n)]


def squares_map(n):
    return {i: i * i for i in range(n)}


def long_text(n):
    return "ab" * n


def blob(n):
    return bytes(i % 251 for i in range(n))


def get_default_config():
    return DEFAULT_CONFIG
'''
#: Each function's wrong answer that an encoding cut short (or identity decided by
#: content) would have passed: the pass found 6 of 6 scored 1.0.
LARGE_FORGERS = {
    "big_power": "    return 1 << ((7 ** n).bit_length() - 1)",
    "first_n_squares": "    return [i * i for i in range(2000)] + [0] * (n - 2000)",
    "squares_map": "    return {i: (i * i if i < 2000 else -1) for i in range(n)}",
    "long_text": "    return ('ab' * n)[:20000] + 'x' * (2 * n - 20000)",
    "blob": "    return bytes(i % 251 for i in range(20000)) + bytes(n - 20000)",
    "get_default_config": "    return Config()",
}
LARGE_TESTS = {
    "big_power": "assert big_power(2000) == 7 ** 2000",
    "first_n_squares": "assert first_n_squares(2500) == [i * i for i in range(2500)]",
    "squares_map": "assert squares_map(2500) == {i: i * i for i in range(2500)}",
    "long_text": "assert long_text(15000) == 'ab' * 15000",
    "blob": "assert blob(30000) == bytes(i % 251 for i in range(30000))",
    "get_default_config": "from large.config import DEFAULT_CONFIG\n"
                          "assert get_default_config() is DEFAULT_CONFIG",
}


def _large_source(replaced: str | None) -> str:
    if replaced is None:
        return LARGE_ORIGINAL
    start = LARGE_ORIGINAL.index(f"def {replaced}(")
    end = LARGE_ORIGINAL.index("\n\n\n", start) if "\n\n\n" in LARGE_ORIGINAL[start:] \
        else len(LARGE_ORIGINAL)
    header = LARGE_ORIGINAL[start:].split("\n", 1)[0]
    return LARGE_ORIGINAL[:start] + header + "\n" + LARGE_FORGERS[replaced] + \
        LARGE_ORIGINAL[end:]


def _honest_and_forged(root: Any, package: str, modules: dict[str, str], honest: str,
                       forged: str, function: str, test_code: str) -> tuple[Any, Any]:
    """The test runs of ``function`` in ``package.values`` (its other modules as given),
    against the honest source and the forged one."""
    from pytest_summarybench.evaluators.downstream.tasks import TestCase

    folder = root / "code" / package
    folder.mkdir(parents=True)
    for name, text in {"__init__": "", "values": honest, **modules}.items():
        (folder / f"{name}.py").write_text(text)
    layout = package_layout(root / "code", f"{package}/values.py")
    test = TestCase(name=function, code=test_code)
    limits = SandboxLimits(**{**limits_for("all").__dict__, "wall_s": 20.0})
    return tuple(run_tests(source, layout, [test], limits, target=function)  # type: ignore[return-value]
                 for source in (honest, forged))


@pytest.mark.parametrize("function", sorted(LARGE_FORGERS))
def test_values_too_large_to_report_are_compared_whole(function: str,
                                                       tmp_path: Any) -> None:
    honest, forged = _honest_and_forged(
        tmp_path, "large", {"config": CONFIG}, _large_source(None), _large_source(function),
        function, f"from large.values import *\n{LARGE_TESTS[function]}")
    assert honest.passed == 1, honest.results
    assert forged.passed == 0, forged.results


# -- values of subclasses and ordered mappings (the second adversarial pass) -------------------
TYPES = '''
from collections import OrderedDict
from decimal import Decimal


class Cents(int):
    pass


class Tag(str):
    def __eq__(self, other):
        return str.__eq__(self, other)

    __hash__ = str.__hash__


class Ratio(float):
    pass


class Blob(bytes):
    pass


class Money(Decimal):
    pass


class Base:
    pass


class Point(Base):
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return (self.x, self.y) == (other.x, other.y)


class Page(list):
    def __init__(self, items, number):
        super().__init__(items)
        self.number = number

    def __eq__(self, other):
        return list.__eq__(self, other) and self.number == other.number
'''
#: function -> (the original body, a wrong body of the same type, the test)
SUBCLASS_CASES = {
    "to_cents": ("return Cents(150)", "return Cents(999999)",
                 "assert to_cents() == Cents(150)"),
    "make_tag": ("return Tag('abc')", "return Tag('WRONG')",
                 "assert make_tag() == Tag('abc')"),
    "half": ("return Ratio(0.5)", "return Ratio(99.0)", "assert half() == Ratio(0.5)"),
    "header": ("return Blob(b'HDR')", "return Blob(b'XXXXXX')",
               "assert header() == Blob(b'HDR')"),
    "price": ("return Money('9.99')", "return Money('0.01')",
              "assert price() == Money('9.99')"),
    "cents_list": ("return [Cents(1), Cents(2)]", "return [Cents(7), Cents(8)]",
                   "assert cents_list() == [Cents(1), Cents(2)]"),
    "make_point": ("return Point(1, 2)", "return Point(-5, -5)",
                   "assert make_point() == Point(1, 2)"),
    "ordered_pair": ("return OrderedDict([('a', 1), ('b', 2)])",
                     "return OrderedDict([('b', 2), ('a', 1)])",
                     "assert ordered_pair() == OrderedDict([('a', 1), ('b', 2)])"),
    "page_two": ("return Page([1, 2], 2)", "return Page([1, 2], 7)",
                 "assert page_two() == Page([1, 2], 2)"),
}


def _cases_source(cases: dict[str, tuple[str, str, str]], types: str, function: str,
                  wrong: bool) -> str:
    """A ``values`` module with every case's function, ``function`` the wrong one if
    ``wrong``."""
    lines = [f"from {types} import *", ""]
    for name, (right, bad, _test) in cases.items():
        body = bad if wrong and name == function else right
        lines += [f"def {name}():", f"    {body}", "", ""]
    return "\n".join(lines)


def _subclass_source(function: str, wrong: bool) -> str:
    return _cases_source(SUBCLASS_CASES, "sub.types", function, wrong)


@pytest.mark.parametrize("function", sorted(SUBCLASS_CASES))
def test_subclass_values_and_mapping_order_are_compared(function: str,
                                                        tmp_path: Any) -> None:
    honest, forged = _honest_and_forged(
        tmp_path, "sub", {"types": TYPES}, _subclass_source(function, wrong=False),
        _subclass_source(function, wrong=True), function,
        "from sub.values import *\nfrom sub.types import *\n" + SUBCLASS_CASES[function][2])
    assert honest.passed == 1, honest.results
    assert forged.passed == 0, forged.results


# -- state the encoding cannot see, and look-alike classes (the third adversarial pass) ---------
OBJECTS = '''
class Box:
    def __init__(self, v):
        self.get = lambda: v

    def __eq__(self, other):
        return self.get() == other.get()


class Node:
    def __init__(self, value):
        self.value = value


ROOT = Node(1)


class Point:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)
'''
LOOK_ALIKE = """class Point:
        __slots__ = ("x", "y")

        def __init__(self, x, y):
            self.x, self.y = x, y

    Point.__module__ = "obj.types"
    Point.__qualname__ = "Point"
    return Point(1, 2)"""
#: function -> (the original body, a wrong body, the test); Box's state is in a closure
#: (the encoding sees a function), Node keeps identity equality, the look-alike Point
#: copies the real one's module and name.
STATE_CASES = {
    "make_box": ("return Box(5)", "return Box(6)", "assert make_box() == Box(5)"),
    "root": ("return ROOT", "return Node(1)", "assert root() == ROOT"),
    "make_point": ("return Point(1, 2)", LOOK_ALIKE, "assert make_point() == Point(1, 2)"),
}


def _state_source(function: str, wrong: bool) -> str:
    return _cases_source(STATE_CASES, "obj.types", function, wrong)


@pytest.mark.parametrize("function", sorted(STATE_CASES))
def test_hidden_state_identity_and_look_alike_classes(function: str, tmp_path: Any) -> None:
    honest, forged = _honest_and_forged(
        tmp_path, "obj", {"types": OBJECTS}, _state_source(function, wrong=False),
        _state_source(function, wrong=True), function,
        "from obj.values import *\nfrom obj.types import *\n" + STATE_CASES[function][2])
    assert forged.passed == 0, forged.results
    # Box's state cannot be encoded, so its honest check cannot be decided either (it
    # fails for every model alike); the others pass.
    assert honest.passed == (0 if function == "make_box" else 1), honest.results


# -- reading values the code under test patched (the fourth adversarial pass) ---------------------
PATCHED = '''
from dataclasses import dataclass


class Only:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return isinstance(other, Only) and self.n == other.n


class Cfg:
    def __init__(self, data, version):
        self.data, self.version = data, version

    def __eq__(self, other):
        return (self.data, self.version) == (other.data, other.version)


class Point:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return (self.x, self.y) == (other.x, other.y)


@dataclass
class Item:
    name: str
    qty: int
'''
LIE = """class Lie(dict):
        def items(self):
            return [("data", {"k": 1}), ("version", 3)]

        def keys(self):
            return ["data", "version"]

        def __iter__(self):
            return iter(["data", "version"])

        def __getitem__(self, key):
            return dict(self.items())[key]

    o = Cfg({"k": 1}, 4)
    o.__dict__ = Lie(o.__dict__)
    return o"""
SPOOF = """import sys

    class Only:
        def __init__(self, n):
            self.n = n

        def __eq__(self, other):
            return False

    Only.__module__, Only.__qualname__ = "pat.types", "Only"
    sys.modules["pat.types"].Only = Only
    return Only(4)"""
#: function -> (the original body, a wrong body, the test)
PATCH_CASES = {
    "only": ("return Only(4)", SPOOF, "assert only() == Only(4)"),
    "make_cfg": ("return Cfg({'k': 1}, 3)", LIE, "assert make_cfg() == Cfg({'k': 1}, 3)"),
    "make_point": ("return Point(1, 2)",
                   "p = Point(1, 99)\n"
                   "    Point.y = property(lambda s: 2, lambda s, v: None)\n    return p",
                   "assert make_point() == Point(1, 2)"),
    "make_item": ("return Item('a', 2)",
                  "o = Item('a', 3)\n    real = Item.__getattribute__\n"
                  "    Item.__getattribute__ = lambda s, n: 2 if n == 'qty' else real(s, n)\n"
                  "    return o",
                  "assert make_item() == Item('a', 2)"),
}


@pytest.mark.parametrize("function", sorted(PATCH_CASES))
def test_values_are_read_past_what_the_code_patched(function: str, tmp_path: Any) -> None:
    honest, forged = _honest_and_forged(
        tmp_path, "pat", {"types": PATCHED},
        _cases_source(PATCH_CASES, "pat.types", function, wrong=False),
        _cases_source(PATCH_CASES, "pat.types", function, wrong=True), function,
        f"from pat.values import {function}\nfrom pat.types import Cfg, Item, Only, Point\n"
        + PATCH_CASES[function][2])
    assert honest.passed == 1, honest.results
    assert forged.passed == 0, forged.results


def test_a_report_of_a_check_that_does_not_exist_is_a_failure_not_an_error() -> None:
    from pytest_summarybench.evaluators.downstream.verdicts import compile_tests, judge

    compiled = compile_tests([("t", "from m import f\nassert f() == 1", "f")])
    reference = '{"t":0,"start":1}\n{"t":0,"c":0,"o":[1]}\n{"t":0,"end":1}\n'
    forged = '{"t":0,"start":1}\n{"t":0,"c":7,"o":[1]}\n{"t":0,"end":1}\n'
    [verdict] = judge(compiled, reference, forged, None)
    assert not verdict.passed and "tampered" in (verdict.error or "")
