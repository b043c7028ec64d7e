"""The rule scanner on hostile code (issue 34, item 7): whatever a snippet holds, its scan
ends, in bounded time and memory, either with a result or with that example's one-line
error, and the rest of the benchmark run scores as usual.

Each input runs in a subprocess of its own, which reports its peak resident memory; the
bounds (30 s, 600 MB) are the issue's, far above what a scan takes (under 10 s and 100 MB
on a loaded 2-core machine), so that they hold under load. How the work grows with the
code is measured by counting the interpreter's call events, which does not depend on load.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import compliance_project as project
import pytest

from summarybench_compliance.dataset import DATA_DIR
from summarybench_compliance.scanner import MAX_CODE_CHARS, ScanError, Scanner

README = Path(__file__).resolve().parents[1] / "README.md"
TIME_LIMIT_S = 30.0
RSS_LIMIT_MB = 600


def _logging_functions(n: int) -> str:
    """``n`` functions that each write a record's field to a log (a sink of art. 10)."""
    return "import logging\nlogger = logging.getLogger()\n" + "".join(
        f"def f{i}(row):\n    logger.info(row['email'])\n" for i in range(n))


def _assignment_chain(n: int) -> str:
    """One tool whose result passes through ``n`` locals, each assigned the one before."""
    return ("from langchain_core.tools import tool\n\n@tool\ndef lookup(customer_id):\n"
            "    '''Look a customer up.'''\n    v0 = db.fetchone(customer_id)\n"
            + "".join(f"    v{i + 1} = v{i}\n" for i in range(n)) + f"    return v{n}\n")


def _group_chats(n: int) -> str:
    """``n`` Semantic Kernel group chats, each with a manager of its own."""
    return ("from semantic_kernel.agents import GroupChatOrchestration, "
            "RoundRobinGroupChatManager\n" + "".join(
                f"m{i} = RoundRobinGroupChatManager()\n"
                f"chat{i} = GroupChatOrchestration(members=[a], manager=m{i})\n"
                for i in range(n)))


def _shell_commands(n: int) -> str:
    """One function running ``n`` formatted commands through a shell."""
    return "import subprocess\n\ndef run_all(x):\n" + "".join(
        f"    cmd{i} = f'ls {{x}}'\n    subprocess.run(cmd{i}, shell=True)\n"
        for i in range(n))


def _writes(n: int) -> str:
    """One function posting ``n`` payloads."""
    return "import requests\n\ndef notify(url):\n" + "".join(
        f"    payload{i} = {{'status': 'sent', 'n': {i}}}\n"
        f"    requests.post(url, json=payload{i})\n" for i in range(n))


def _name_fan_out(n: int) -> str:
    """A command held by a local assigned ``n`` times from another assigned ``n`` times
    from it: followed path by path, the names' values fan out to n**4 paths."""
    return ("import subprocess\n\ndef run(x):\n" + "    a = b\n    b = a\n" * n
            + "    subprocess.run(a, shell=True)\n")


#: name -> (code, what the scan ends with: None for a result, else the start of the error)
HOSTILE: dict[str, tuple[str, str | None]] = {
    "attribute-chain": ("x = a" + ".b" * 900 + "\n", "the code nests deeper than 100 levels"),
    "chained-calls": ("x = f" + "()" * 2_000 + "\n", "the code nests deeper than 100 levels"),
    # the 100,000 terms, 200,000 characters with the newline: at the size cap, so
    # that the parser meets it
    "long-sum": ("+".join(["a"] * 100_000) + "\n", "the code nests too deeply"),
    "nested-lambdas": ("x = " + "lambda: " * 20_000 + "0\n", "the code nests too deeply"),
    "lone-surrogate": ("x = '\ud800'\n", "the code is not valid text: surrogates not allowed"),
    "null-byte": ("x = 1\0\n", "cannot parse the code"),
    "over-the-size-cap": ("x = 1\n" * 1_400_000, "the code is 8,400,000 characters long"),
    "assignment-chain": (_assignment_chain(10_000), None),
    "many-logging-functions": (_logging_functions(4_000), None),
    # 0.9 KB: house's art. 15 rule followed its n**4 paths (465 characters took 67 s)
    "name-fan-out": (_name_fan_out(40), None),
    # 150 KB and 120 KB: walking a function's body compared every child of the
    # definition with every decorator (50,000 names: 96 s of scanner time; 30,000 calls:
    # 54 s, now about 7 s, and 20,000 here to leave room under load: a call costs more
    # than a name in every rule)
    "stacked-decorators": ("ok\n" + "@d\n" * 50_000 + "def g(): pass\n", None),
    "stacked-decorator-calls": ("@d(1)\n" * 20_000 + "def g(): pass\n", None),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_snippet_ends_as_a_scan_or_one_line(name: str) -> None:
    code, expected = HOSTILE[name]
    if expected is None:
        assert Scanner().scan(code).articles
        return
    with pytest.raises(ScanError) as caught:
        Scanner().scan(code)
    message = str(caught.value)
    assert message.startswith(expected), message
    assert "\n" not in message and message.isprintable() and message.isascii(), message
    assert len(message) <= 300


#: Run in a fresh interpreter: scan the input named on the command line, print how it
#: ended, then the process's peak resident memory in kB. VmHWM, not ru_maxrss: Linux
#: carries ru_maxrss over an exec, so a child would report its parent's peak.
PROBE = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    from test_hostile_code import HOSTILE
    from summarybench_compliance.scanner import ScanError, Scanner
    try:
        Scanner().scan(HOSTILE[sys.argv[2]][0])
        print("scanned")
    except ScanError as err:
        print("error:", err)
    with open("/proc/self/status", encoding="ascii") as status:
        print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
""")


@pytest.mark.skipif(not Path("/proc/self/status").is_file(),
                    reason="reads the peak resident memory from Linux's /proc")
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_snippet_is_scanned_within_the_time_and_memory_bounds(name: str) -> None:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", PROBE, str(Path(__file__).parent), name],
                          capture_output=True, text=True, timeout=4 * TIME_LIMIT_S)
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-2000:]
    outcome, rss_kb = proc.stdout.strip().splitlines()
    expected = HOSTILE[name][1]
    assert outcome.startswith("scanned" if expected is None else f"error: {expected}")
    assert elapsed < TIME_LIMIT_S, f"{name}: {elapsed:.1f} s"
    assert int(rss_kb) / 1024 < RSS_LIMIT_MB, f"{name}: {int(rss_kb) / 1024:.0f} MB"


def _call_events(run: Callable[[], object]) -> int:
    """How many Python calls (and generator steps) and built-in calls ``run`` makes."""
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        count += 1

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("shape", [_logging_functions, _assignment_chain],
                         ids=["functions-with-sinks", "assignment-chain"])
def test_article_10_flow_work_grows_linearly_with_the_code(
        shape: Callable[[int], str]) -> None:
    # Article 10's flow rule alone, so that its own work is what is counted: 4 times the
    # code must cost about 4 times the calls (4.0 now; house's quadratic rule took 7.7
    # times the calls for the functions, and the chain ended in a RecursionError).
    from summarybench_compliance.scanner.facts import collect
    from summarybench_compliance.scanner.rules.art10_flow import leaks
    from summarybench_compliance.scanner.values import module_values

    def work(n: int) -> int:
        facts = collect(shape(n))
        values = module_values(facts)
        return _call_events(lambda: leaks(facts, values))

    small, large = work(500), work(2_000)
    assert large / small < 5, (small, large)


@pytest.mark.parametrize("shape", [_group_chats, _shell_commands, _writes, _name_fan_out],
                         ids=["group-chats", "shell-commands", "writes", "name-fan-out"])
def test_a_scan_s_work_grows_linearly_with_the_code(shape: Callable[[int], str]) -> None:
    # The shapes that made one rule's work grow with the square of the code (or faster)
    # on house: 4 times the code costs about 4 times the calls (house: 10 to 13 times,
    # and the name fan-out did not end).
    small, large = (_call_events(lambda n=n: Scanner().scan(shape(n))) for n in (25, 100))
    assert large / small < 5, (small, large)


class _CountingName(ast.Name):
    """A name that counts how often it is compared for equality."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        type(self).compared += 1
        return self is other

    __hash__ = ast.Name.__hash__


def test_a_function_s_body_is_walked_without_comparing_its_decorators() -> None:
    # Each child of a definition was looked up in its decorator list by equality: n**2 / 2
    # comparisons for n stacked decorators (50,000 of them: 96 s of scanner time).
    from summarybench_compliance.scanner.flow import body_nodes

    tree = ast.parse("@d\n" * 2_000 + "def g():\n    return h()\n")
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    for decorator in function.decorator_list:
        decorator.__class__ = _CountingName
    _CountingName.compared = 0
    walked = list(body_nodes(function))
    assert _CountingName.compared == 0
    assert not any(isinstance(node, _CountingName) for node in walked)
    assert any(isinstance(node, ast.Call) for node in walked)


def test_the_size_cap_is_the_documented_one() -> None:
    readme = README.read_text(encoding="utf-8")
    assert f"{MAX_CODE_CHARS:,} characters" in readme


def test_hostile_examples_fail_alone_and_the_rest_of_the_run_scores(
        bench: pytest.Pytester) -> None:
    lines = (DATA_DIR / "eval_data.jsonl").read_text(encoding="utf-8").splitlines()[:6]
    for name in ("attribute-chain", "lone-surrogate", "over-the-size-cap"):
        row = json.loads(lines[0])
        row["input"] = HOSTILE[name][0]
        lines.append(json.dumps(row))
    (bench.path / "data.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = project.run(bench, "--compliance-no-llm", "--compliance-data", "data.jsonl",
                         "-k", "test_scanner")
    result.assert_outcomes(passed=6, failed=3, deselected=9)
    result.stdout.fnmatch_lines([
        "*the code nests deeper than 100 levels (at line 1)",
        "*the code is not valid text: surrogates not allowed '\\ud800' at character 5",
        f"*the code is 8,400,000 characters long, over the scanner's limit of "
        f"{MAX_CODE_CHARS:,}",
        "rule-scanner: 6 examples scored, 3 failed*",
    ], consecutive=False)
    results = project.results(bench.path)
    assert results["rule_based_num_scored"] == 6
    assert len(results["rule_based_failed"]) == 3
    assert results["rule_based_metrics"]["n"] == 6
