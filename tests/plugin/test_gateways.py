"""The matrix over pytest-xdist gateways (``--tx``), as on several hosts.

Remote gateways do not start in the controller's directory: xdist rewrites path
arguments relative to the gateway's ``chdir`` (so every host needs the project at the
same place under it), and a path given in ``summarybench.yaml`` is used as written. The
recipe docs/hosts.md gives for ssh hosts is tested here with two popen gateways in a
directory of their own, the project copied there by ``--rsyncdir``: with the codebase
and the output named by absolute paths in the YAML (a shared mount on real hosts), every
process uses the one store, and the scores equal a plain run's.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.reliability_project import make_project

FUNCTIONS = 6


def test_popen_gateways_share_the_store_named_in_the_yaml(
        pytester: pytest.Pytester, fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    server: FakeOpenAIServer = fake_server()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-gateway-test")
    make_project(pytester, server.base_url, functions=FUNCTIONS)
    shared = pytester.path / "shared"
    config = pytester.path / "summarybench.yaml"
    # Absolute paths, as on hosts that mount the code and the output at the same place.
    text = config.read_text().replace("root: code", f"root: {pytester.path / 'code'}")
    config.write_text(text.rstrip() + f"\noutput:\n  directory: {shared}\n")
    hosts = pytester.path.parent / f"{pytester.path.name}-hosts"
    hosts.mkdir()
    items = FUNCTIONS * 2
    args = ("-p", "summarybench", "-p", "no:cacheprovider", "-p", "no:randomly")

    plain = pytester.runpytest_subprocess(*args, "test_bench.py")
    plain.assert_outcomes(passed=items)
    expected = (shared / "results.json").read_text()
    calls = server.successes
    (shared / "results.json").unlink()

    remote = pytester.runpytest_subprocess(
        *args, "--tx", f"2*popen//chdir={hosts}", "--rsyncdir", str(pytester.path),
        "--dist", "load", "--sb-config", str(config), str(pytester.path / "test_bench.py"))
    remote.assert_outcomes(passed=items)
    remote.stdout.fnmatch_lines(["*2 workers*"])
    assert (json.loads((shared / "results.json").read_text())["rankings"]
            == json.loads(expected)["rankings"])
    # The gateways read the controller's store: every answer came from its cache.
    assert server.successes == calls
    conn = sqlite3.connect(shared / "store.sqlite")
    try:
        # Both sessions' records are in the one store; the gateway run's node ids carry
        # the project directory (its rootdir is the gateway's), so they sit beside the
        # plain run's instead of replacing them.
        rows = conn.execute("SELECT nodeid, unit_id, model_id, evaluator FROM records")
        by_run: dict[bool, set[tuple[str, str, str]]] = {True: set(), False: set()}
        for nodeid, *key in rows.fetchall():
            by_run[nodeid.startswith(pytester.path.name + "/")].add(tuple(key))
        assert len(by_run[True]) == len(by_run[False]) == items
        assert by_run[True] == by_run[False]
    finally:
        conn.close()
