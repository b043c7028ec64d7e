"""Containment tests of the sandbox: each claim of ``downstream/sandbox.py`` proven.

Every hostile program runs under two layer combinations where the platform allows: the
operating-system layers alone (no audit-hook guard) and the guard with the process limits
alone (no namespaces), so that each layer is shown to hold by itself. Each must end as a
failure with a reason, and nothing outside the sandbox may change. The default (every
layer) is exercised through the completion evaluator in ``test_evaluators.py``.
"""

from __future__ import annotations

import os
import socket
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_summarybench.downstream.sandbox import (
    SandboxLimits,
    SandboxResult,
    namespaces_available,
    run_sandboxed,
)

FAST = SandboxLimits(wall_s=3.0, cpu_s=1, memory_mb=256, processes=16)
LAYERS: dict[str, dict[str, bool]] = {
    "os-only": {"guard": False},
    "guard-only": {"namespaces": False},
}


@pytest.fixture(params=sorted(LAYERS))
def limits(request: pytest.FixtureRequest) -> SandboxLimits:
    extra = LAYERS[request.param]
    if extra.get("guard") is False and not namespaces_available(os.geteuid() == 0):
        pytest.skip("the OS-only combination needs Linux namespaces (unshare)")
    return replace(FAST, **extra)


def run(code: str, limits: SandboxLimits) -> SandboxResult:
    result = run_sandboxed(textwrap.dedent(code), limits=limits)
    _assert_nothing_left(result)
    return result


def _assert_nothing_left(result: SandboxResult) -> None:
    """No process of the run survives it (a fork bomb included)."""
    assert result.directory and not Path(result.directory).exists()
    leftovers = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if result.directory.encode() in cmdline:
            leftovers.append(pid)
    assert leftovers == []


def test_a_normal_program_runs_with_a_clean_environment(limits: SandboxLimits) -> None:
    result = run("""
        import os, sys
        print("cwd-is-box", os.getcwd().endswith("/box"))
        print(sorted(os.environ))
        open("scratch.txt", "w").write("fine")   # writing inside the sandbox is allowed
        print(open("scratch.txt").read())
        """, limits)
    assert result.ok and result.failure_reason(limits) is None
    assert "cwd-is-box True" in result.stdout and "fine" in result.stdout
    assert "API_KEY" not in result.stdout
    assert "process" in result.layers
    assert ("guard" in result.layers) == limits.guard


def test_loop_forever_is_stopped_by_the_cpu_limit(limits: SandboxLimits) -> None:
    # A generous wall clock, so that the CPU limit is what ends it on a loaded machine.
    limits = replace(limits, wall_s=15.0)
    result = run("while True:\n    pass\n", limits)
    assert not result.ok
    assert "CPU time limit exceeded" in (result.failure_reason(limits) or "")


def test_sleep_forever_is_stopped_by_the_wall_clock(limits: SandboxLimits) -> None:
    limits = replace(limits, wall_s=1.5)
    result = run("import time\nwhile True:\n    time.sleep(0.2)\n", limits)
    assert result.timed_out
    assert "timed out after 1.5s" in (result.failure_reason(limits) or "")


def test_fork_bomb_fails_and_leaves_no_process(limits: SandboxLimits) -> None:
    limits = replace(limits, wall_s=2.0)
    result = run("""
        import os
        while True:
            os.fork()
        """, limits)
    assert not result.ok
    reason = result.failure_reason(limits) or ""
    if limits.guard:
        assert "process creation" in reason
    else:
        assert reason


@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "no-namespaces"])
def test_process_limit_caps_children_without_the_guard(namespaces: bool) -> None:
    limits = replace(FAST, processes=8, guard=False, namespaces=namespaces)
    result = run("""
        import os, time
        made = 0
        for _ in range(50):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            made += 1
        print("children", made)
        """, limits)
    if os.geteuid() == 0 and "pids-cgroup" not in result.layers:
        pytest.skip("root is exempt from RLIMIT_NPROC and no pids cgroup is available")
    made = int(result.stdout.split("children", 1)[1].split()[0])
    assert made < 8


def test_unbounded_allocation_fails_with_memory_error(limits: SandboxLimits) -> None:
    # About 0.2 s of CPU on a quiet machine; in a loaded full run it once took over the
    # 1 s of FAST, and the CPU limit fired first. The subject here is the memory limit.
    result = run("""
        hoard = []
        while True:
            hoard.append(bytearray(10 ** 7))
        """, replace(limits, cpu_s=5, wall_s=10.0))
    assert not result.ok
    assert "memory limit of 256 MB exceeded" in (result.failure_reason(limits) or "")


def test_network_connection_is_refused(limits: SandboxLimits) -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    port = server.getsockname()[1]
    try:
        result = run(f"""
            import socket
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(1)
            s.connect(("127.0.0.1", {port}))
            s.sendall(b"stolen")
            """, limits)
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody ever connected
    finally:
        server.close()
    assert not result.ok
    reason = result.failure_reason(limits) or ""
    if limits.guard:
        assert "network access" in reason
    else:
        assert "Network is unreachable" in reason


def test_environment_holds_no_keys(limits: SandboxLimits, monkeypatch: pytest.MonkeyPatch
                                   ) -> None:
    sentinel = "sk-SANDBOX-SENTINEL-7d1e0b"
    monkeypatch.setenv("OPENAI_API_KEY", sentinel)
    monkeypatch.setenv("SECRET_TOKEN", sentinel)
    result = run(f"""
        import os
        print(dict(os.environ))
        for pid in ("self", "1", "{os.getpid()}"):
            try:
                print(open(f"/proc/{{pid}}/environ", "rb").read())
            except OSError as exc:
                print("no access", pid, exc)
        key = os.environ["OPENAI_API_KEY"]
        """, limits)
    assert not result.ok
    assert "KeyError: 'OPENAI_API_KEY'" in (result.failure_reason(limits) or "")
    assert sentinel not in result.full_stdout + result.stderr


def test_writes_outside_the_sandbox_are_prevented(limits: SandboxLimits, tmp_path: Path
                                                  ) -> None:
    keep = tmp_path / "keep.txt"
    keep.write_text("original")
    target = tmp_path / "planted.txt"
    result = run(f"""
        import os
        results = []
        for attempt in (
            lambda: open({str(target)!r}, "w").write("x"),
            lambda: open({str(keep)!r}, "a").write("tampered"),
            lambda: os.remove({str(keep)!r}),
            lambda: os.mkdir({str(tmp_path / "newdir")!r}),
            lambda: open("/dev/shm/sb-planted", "w").write("x"),
        ):
            try:
                attempt()
                results.append("WROTE")
            except OSError as exc:
                results.append(type(exc).__name__)
        print(results)
        if "WROTE" not in results:
            raise PermissionError("every write outside was refused")
        """, limits)
    assert "WROTE" not in result.stdout
    assert not result.ok and result.failure_reason(limits)
    assert keep.read_text() == "original"
    assert not target.exists() and not (tmp_path / "newdir").exists()
    assert not Path("/dev/shm/sb-planted").exists()
    if limits.guard:
        assert {v["kind"] for v in result.violations} == {
            "writing outside the sandbox directory"}


def test_output_is_captured_and_truncated() -> None:
    limits = replace(FAST, output_chars=1000)
    result = run("print('x' * 50000)\nimport sys\nprint('err', file=sys.stderr)\n", limits)
    assert result.ok
    assert len(result.stdout) < 1100 and "more characters truncated" in result.stdout
    assert result.stderr.strip() == "err"


def test_readonly_inputs_are_importable_but_not_writable(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("VALUE = 41\n")
    limits = FAST
    result = run_sandboxed(textwrap.dedent("""
        import pkg
        print(pkg.VALUE + 1)
        try:
            open("pkg/__init__.py", "w").write("VALUE = 0")
        except OSError as exc:
            print("refused", type(exc).__name__)
        """), readonly_dirs={"pkg": pkg}, files={"extra/data.txt": "d"}, limits=limits)
    assert result.ok, result.stderr
    assert "42" in result.stdout and "refused PermissionError" in result.stdout
    assert (pkg / "__init__.py").read_text() == "VALUE = 41\n"


def test_default_limits_use_every_layer_available_here() -> None:
    result = run("print('ok')\n", SandboxLimits())
    assert result.ok and result.stdout == "ok\n"
    expected = {"process", "guard"}
    if namespaces_available(os.geteuid() == 0):
        expected |= {"namespaces", "unprivileged"}
    assert expected <= set(result.layers)


def test_the_callers_home_is_not_readable(limits: SandboxLimits, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    secret = "sk-HOME-SECRET-0b7f"
    (home / ".config" / "credentials").write_text(secret)
    monkeypatch.setenv("HOME", str(home))
    result = run(f"""
        import os
        found = []
        for attempt in (lambda: open({str(home / ".config" / "credentials")!r}).read(),
                        lambda: os.listdir({str(home / ".config")!r})):
            try:
                found.append(attempt())
            except OSError as exc:
                found.append(type(exc).__name__)
        print(found)
        import json   # the standard library stays importable
        """, limits)
    assert secret not in result.full_stdout and "credentials" not in result.full_stdout
    if limits.guard:
        assert {v["kind"] for v in result.violations} == {"reading the caller's home directory"}
