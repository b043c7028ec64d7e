"""Attacks through summarybench.yaml (issue 18, item 10).

Each test writes the payload and checks what must hold afterwards: the load ends in one
bounded error naming the file and the line, within bounded time and memory; no
RecursionError, no INTERNALERROR; a duplicate key is refused, not silently last-wins. The
YAML bombs are loaded in a child process under a 1 GiB address-space limit and a timeout,
so that a loader without limits fails the test instead of taking the machine down.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.settings import SettingsError, load_settings
from tests.fakes.project import write_bench_module

BILLION_LAUGHS = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n"
              for i in range(8)))

LOAD_IN_CHILD = """
import resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from pytest_summarybench.settings import SettingsError, load_settings
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
start = time.process_time()  # CPU time: a loaded machine's waiting is not the load's
try:
    load_settings(sys.argv[1], families=BUILTIN_FAMILIES)
except SettingsError as exc:
    print(f"{time.process_time() - start:.2f}")
    print(exc)
    sys.exit(0)
print("loaded")
sys.exit(1)
"""


def _load_bounded(path: Path, timeout_s: float = 30.0) -> tuple[float, str]:
    """Load ``path`` in a child under 1 GiB and ``timeout_s``: (CPU seconds of the load,
    the message)."""
    try:
        done = subprocess.run([sys.executable, "-c", LOAD_IN_CHILD, str(path)],
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading {path.name} took more than {timeout_s} s")
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    seconds, message = done.stdout.split("\n", 1)
    return float(seconds), message.strip()


def test_billion_laughs_under_an_unknown_key_is_refused_quickly(tmp_path: Path) -> None:
    # Payload: nine levels of nine aliases each (9**9 = 387 million strings) under a key
    # the schema does not know. Before: 87 s and 3 GB, then a MemoryError while the error
    # message formatted the expanded value.
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text("unknownKey:\n" + textwrap.indent(BILLION_LAUGHS, "  "))
    seconds, message = _load_bounded(cfg)
    assert seconds < 5
    assert message.startswith(f"config file {cfg}:")
    assert "aliases" in message and len(message) < 400


def test_many_aliases_are_refused(tmp_path: Path) -> None:
    # Payload: 200 uses of one small anchor (a flat fan-out, no nesting).
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text("x: &a [1, 2]\n" + "".join(f"y{i}: *a\n" for i in range(200)))
    with pytest.raises(SettingsError, match=r"summarybench\.yaml:\d+: more than 100 aliases"):
        load_settings(cfg, families=BUILTIN_FAMILIES)


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    # Payload: a list that contains itself (PyYAML builds such a cycle).
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text("unknownKey: &x [1, *x]\n")
    with pytest.raises(SettingsError) as info:
        load_settings(cfg, families=BUILTIN_FAMILIES)
    assert str(info.value) == (f"config file {cfg}:1: an alias refers to a value that "
                               "contains it (a recursive structure)")


@pytest.mark.parametrize("document", [
    "codebase: " + "[" * 20_000 + "]" * 20_000 + "\n",
    "codebase: " + "{a: " * 20_000 + "1" + "}" * 20_000 + "\n",
    "codebase:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(300)),
], ids=["flow-list", "flow-map", "block"])
def test_deep_nesting_is_refused_without_recursion_error(tmp_path: Path,
                                                         document: str) -> None:
    # Payload: 20,000 nested lists (or maps; or 300 indented levels). Before: a
    # RecursionError (an INTERNALERROR in pytest).
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text(document)
    seconds, message = _load_bounded(cfg)
    assert seconds < 5
    assert message.startswith(f"config file {cfg}:")
    assert "nested deeper than 100 levels" in message


def test_deep_nesting_in_a_pytest_run_is_one_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", summarybench="codebase: " + "[" * 20_000 + "]" * 20_000)
    write_bench_module(pytester)
    result = pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                           timeout=120)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stdout.str() + result.stderr.str()
    assert "RecursionError" not in text and "INTERNALERROR" not in text
    result.stderr.fnmatch_lines(["ERROR: config file *summarybench.yaml:1: nested deeper *"])


def test_duplicate_keys_are_refused_naming_key_and_lines(tmp_path: Path) -> None:
    # Payload: evaluation.sampleSize given twice. Before: the last one won silently.
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text("name: a\nevaluation:\n  sampleSize: 3\n  seed: 1\n  sampleSize: 500\n")
    with pytest.raises(SettingsError) as info:
        load_settings(cfg, families=BUILTIN_FAMILIES)
    assert str(info.value) == (f"config file {cfg}:5: duplicate key 'sampleSize' (first on "
                               "line 3); each key may appear once in a mapping")


def test_merge_keys_may_still_be_overridden(tmp_path: Path) -> None:
    # Not an attack: ``<<: *base`` then an explicit key is YAML's override, not a duplicate.
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text("evaluation:\n  retrieval: &r {enabled: true, queriesPerUnit: 2}\n"
                   "  contrastive:\n    distractors: 4\n"
                   "  judge:\n    <<: {enabled: false, minJudges: 1}\n    enabled: true\n")
    settings = load_settings(cfg, families=BUILTIN_FAMILIES)
    assert settings.evaluation.judge.enabled is True
    assert settings.evaluation.judge.min_judges == 1


@pytest.mark.parametrize("text", [
    "unknownKey: " + "x" * 500_000 + "\n",
    "models:\n  test: " + json.dumps([{"provider": "openai", "model": "m" * 1000,
                                       "junk": list(range(10_000))}]) + "\n",
    "".join(f"bad{i}: {i}\n" for i in range(5000)),
], ids=["long-string", "big-list", "many-errors"])
def test_error_messages_are_bounded(tmp_path: Path, text: str) -> None:
    # Payload: values of half a megabyte, or 5,000 bad keys. Before: each was quoted
    # whole in the message (one line of 500 KB).
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text(text)
    with pytest.raises(SettingsError) as info:
        load_settings(cfg, families=BUILTIN_FAMILIES)
    assert len(str(info.value)) < 4000
    assert "\n" not in str(info.value)


def test_an_oversized_config_file_is_refused(tmp_path: Path) -> None:
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text("name: x\n" + "# padding\n" * 200_000)
    with pytest.raises(SettingsError, match="at most 1048576"):
        load_settings(cfg, families=BUILTIN_FAMILIES)


def test_the_cli_refuses_a_bomb_before_editing(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # Payload: a deep list in the file ``summarybench config`` edits (ruamel's round-trip
    # loader recurses without a limit).
    from pytest_summarybench.cli import main

    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text("name: x\ncodebase: " + "[" * 20_000 + "]" * 20_000 + "\n")
    monkeypatch.chdir(tmp_path)
    assert main(["config", "--sample-size", "5"]) == 2
    err = capsys.readouterr().err
    assert "nested deeper than 100 levels" in err and "Traceback" not in err


def test_a_900_kb_value_is_one_line_in_milliseconds(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    # Payload: a 900 KB string as a value. Before: `summarybench config` read it four
    # times in pure Python (the bounded loader twice, ruamel's round trip in and out),
    # about 2 s of CPU (12 s on a loaded machine), and then stored it.
    import time

    from pytest_summarybench.cli import main

    cfg = tmp_path / "summarybench.yaml"
    text = 'name: "' + "a" * 900_000 + '"\nevaluation: {sampleSize: 10}\n'
    cfg.write_text(text)
    monkeypatch.chdir(tmp_path)
    started = time.process_time()
    assert main(["config", "--sample-size", "5"]) == 2
    cpu = time.process_time() - started
    err = capsys.readouterr().err
    assert err == ("summarybench config: error: summarybench.yaml:1: a value of 900,000 "
                   "characters; a configuration holds names, paths and numbers (at most "
                   "16,384 characters each)\n")
    assert cfg.read_text() == text  # not edited
    assert cpu < 1.0, f"{cpu:.2f} s of CPU"
