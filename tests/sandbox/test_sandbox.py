"""The sandbox's limits and layers, each shown to hold by itself where the machine allows.

Every program runs under the combinations of ``tests/sandbox/layers.py`` that are meant
to stop it (a kernel boundary alone, seccomp alone, the guard alone, all layers); it must
end as a failure with a reason, and nothing outside the sandbox may change. Escapes of
the guard and host-file attacks are in ``tests/sandbox/test_sandbox_escape.py``.
"""

from __future__ import annotations

import os
import socket
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_summarybench.sandbox import (
    SandboxLimits,
    SandboxResult,
    SandboxUnavailable,
    boundary_status,
    run_sandboxed,
)
from tests.sandbox.layers import COMBINATIONS, FAST, KERNEL, as_root, limits_for

ALL = sorted(COMBINATIONS)
CONTAINING = [*KERNEL, "guard-only"]


def run(code: str, limits: SandboxLimits, **kwargs: object) -> SandboxResult:
    result = run_sandboxed(textwrap.dedent(code), limits=limits, **kwargs)  # type: ignore[arg-type]
    assert_nothing_left(result)
    return result


def assert_nothing_left(result: SandboxResult) -> None:
    """No process of the run survives it (a fork bomb included), nor its directory."""
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


@pytest.mark.parametrize("combo", ALL)
def test_a_normal_program_runs_with_a_clean_environment(combo: str) -> None:
    limits = limits_for(combo)
    result = run("""
        import os, sys
        print("cwd-is-box", os.getcwd().endswith("/box"))
        print(sorted(os.environ))
        open("scratch.txt", "w").write("fine")   # writing inside the sandbox is allowed
        print(open("scratch.txt").read())
        """, limits)
    assert result.ok and result.failure_reason(limits) is None, result.stderr
    assert "cwd-is-box True" in result.stdout and "fine" in result.stdout
    assert "API_KEY" not in result.stdout
    assert "rlimits" in result.layers
    assert ("guard" in result.layers) == limits.guard
    if combo in KERNEL:
        assert boundary_status().choose(limits.boundary) in result.layers
        assert "unprivileged" in result.layers
    assert ("seccomp" in result.layers) == (limits.seccomp and combo != "guard-only")


def test_every_layer_holds_by_default() -> None:
    limits = limits_for("all")
    result = run("print('ok')\n", SandboxLimits())
    assert result.ok and result.stdout == "ok\n"
    expected = {boundary_status().usable[0], "unprivileged", "seccomp", "rlimits", "guard"}
    if as_root():
        expected.add("cgroup")
    assert expected <= set(result.layers), result.layers
    assert limits.boundary == "auto"


def test_without_a_boundary_nothing_runs_unless_allowed() -> None:
    with pytest.raises(SandboxUnavailable, match="allowWithoutBoundary"):
        run_sandboxed("print('x')\n", limits=replace(FAST, boundary="none"))


@pytest.mark.parametrize("combo", ALL)
def test_loop_forever_is_stopped_by_the_cpu_limit(combo: str) -> None:
    # A generous wall clock, so that the CPU limit is what ends it on a loaded machine.
    limits = replace(limits_for(combo), wall_s=15.0, cpu_s=1)
    result = run("while True:\n    pass\n", limits)
    assert not result.ok
    assert "CPU time limit exceeded" in (result.failure_reason(limits) or "")


@pytest.mark.parametrize("combo", ALL)
def test_sleep_forever_is_stopped_by_the_wall_clock(combo: str) -> None:
    limits = replace(limits_for(combo), wall_s=1.5)
    result = run("import time\nwhile True:\n    time.sleep(0.2)\n", limits)
    assert result.timed_out
    assert "timed out after 1.5s" in (result.failure_reason(limits) or "")


@pytest.mark.parametrize("combo", ALL)
def test_fork_bomb_fails_and_leaves_no_process(combo: str) -> None:
    limits = replace(limits_for(combo), wall_s=2.0)
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


@pytest.mark.parametrize("combo", [*KERNEL, "none"])
def test_process_limit_caps_children_without_the_guard(combo: str) -> None:
    limits = replace(limits_for(combo), processes=8, guard=False)
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
    if as_root() and "cgroup" not in result.layers and combo == "none":
        pytest.skip("root is exempt from RLIMIT_NPROC and no pids cgroup is available")
    made = int(result.stdout.split("children", 1)[1].split()[0])
    assert made < 8


@pytest.mark.parametrize("combo", ALL)
def test_unbounded_allocation_fails_with_memory_error(combo: str) -> None:
    # The subject is the memory limit: CPU and wall clock get room.
    limits = replace(limits_for(combo), cpu_s=5, wall_s=10.0)
    result = run("""
        hoard = []
        while True:
            hoard.append(bytearray(10 ** 7))
        """, limits)
    assert not result.ok
    assert "memory limit of 256 MB exceeded" in (result.failure_reason(limits) or "")


@pytest.mark.parametrize("combo", [*KERNEL, "none"])
def test_many_processes_are_capped_in_total_memory(combo: str) -> None:
    """Each process under its own address-space limit, together over the run's total."""
    limits = replace(limits_for(combo), guard=False, memory_mb=256, total_memory_mb=300,
                     wall_s=20.0, cpu_s=10)
    result = run("""
        import os, time
        children = []
        for _ in range(6):
            pid = os.fork()
            if pid == 0:
                block = bytearray(150 * 1024 * 1024)   # zero-filled: resident
                time.sleep(1.5)
                os._exit(0)
            children.append(pid)
        for pid in children:
            os.waitpid(pid, 0)
        """, limits)
    if "cgroup" not in result.layers:
        pytest.skip("no memory cgroup here (needs root or a delegated cgroup)")
    assert result.memory_exhausted, result.failure_reason(limits)


@pytest.mark.parametrize("combo", [*KERNEL, "seccomp-only", "guard-only"])
def test_network_connection_is_refused(combo: str) -> None:
    limits = limits_for(combo)
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
    elif limits.seccomp:
        assert "Operation not permitted" in reason
    else:  # the boundary's own network: no interface up but its loopback (bubblewrap)
        assert "Network is unreachable" in reason or "Connection refused" in reason


@pytest.mark.parametrize("combo", ALL)
def test_environment_holds_no_keys(combo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    limits = limits_for(combo)
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


@pytest.mark.parametrize("combo", CONTAINING)
def test_writes_outside_the_sandbox_are_prevented(combo: str, tmp_path: Path) -> None:
    limits = limits_for(combo)
    os.chmod(tmp_path, 0o777)
    keep = tmp_path / "keep.txt"
    keep.write_text("original")
    os.chmod(keep, 0o666)
    target = tmp_path / "planted.txt"
    result = run(f"""
        import os
        results = []
        for attempt in (
            lambda: open({str(target)!r}, "w").write("x"),
            lambda: open({str(keep)!r}, "a").write("tampered"),
            lambda: os.remove({str(keep)!r}),
            lambda: os.mkdir({str(tmp_path / "newdir")!r}),
            lambda: open("/planted-at-root", "w").write("x"),
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
    assert not result.ok and result.failure_reason(limits)
    assert keep.read_text() == "original"
    assert not target.exists() and not (tmp_path / "newdir").exists()
    assert not Path("/planted-at-root").exists()
    if combo == "guard-only":
        assert {v["kind"] for v in result.violations} == {
            "writing outside the sandbox directory"}


@pytest.mark.parametrize("combo", KERNEL)
def test_the_writable_directory_is_capped_in_size(combo: str) -> None:
    limits = replace(limits_for(combo), disk_mb=4, file_size_mb=64)
    result = run("""
        with open("big", "wb") as fh:
            for _ in range(64):
                fh.write(b"x" * 1024 * 1024)
        """, limits)
    assert not result.ok
    assert "No space left on device" in (result.failure_reason(limits) or "")


def test_output_is_captured_and_truncated() -> None:
    limits = replace(limits_for("all"), output_chars=1000)
    result = run("print('x' * 50000)\nimport sys\nprint('err', file=sys.stderr)\n", limits)
    assert result.ok
    assert len(result.stdout) < 1100 and "more characters truncated" in result.stdout
    assert result.stderr.strip() == "err"


@pytest.mark.parametrize("combo", KERNEL)
def test_readonly_inputs_are_importable_but_not_writable(combo: str, tmp_path: Path) -> None:
    limits = limits_for(combo)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("VALUE = 41\n")
    result = run("""
        import pkg
        print(pkg.VALUE + 1)
        try:
            open("pkg/__init__.py", "w").write("VALUE = 0")
        except OSError as exc:
            print("refused", type(exc).__name__)
        """, limits, readonly_dirs={"pkg": pkg}, files={"extra/data.txt": "d"})
    assert result.exit_code == 0, result.stderr
    assert "42" in result.stdout and "refused" in result.stdout
    assert (pkg / "__init__.py").read_text() == "VALUE = 41\n"


@pytest.mark.parametrize("combo", [*KERNEL, "guard-only"])
def test_the_callers_home_is_not_readable(combo: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    limits = limits_for(combo)
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    secret = "sk-HOME-SECRET-0b7f"
    (home / ".config" / "credentials").write_text(secret)
    monkeypatch.setenv("HOME", str(home))
    result = run(f"""
        import os
        found = []
        for attempt in (lambda: open({str(home / ".config" / "credentials")!r}).read(),
                        lambda: os.listdir({str(home / ".config")!r}),
                        lambda: open(os.path.expanduser("~root/.bashrc")).read()[:20]):
            try:
                found.append(attempt())
            except OSError as exc:
                found.append(type(exc).__name__)
        print(found)
        import json   # the standard library stays importable
        """, limits)
    assert secret not in result.full_stdout and "credentials" not in result.full_stdout
    if combo == "guard-only":
        assert {v["kind"] for v in result.violations} == {"reading the caller's home directory"}


@pytest.mark.parametrize("combo", [*KERNEL, "guard-only"])
def test_other_processes_cannot_be_signalled(combo: str) -> None:
    limits = limits_for(combo)
    result = run(f"""
        import os, signal
        try:
            os.kill({os.getpid()}, signal.SIGTERM)
            print("SIGNALLED")
        except OSError as exc:
            print("refused", type(exc).__name__)
        """, limits)
    assert "SIGNALLED" not in result.full_stdout


@pytest.mark.parametrize("combo", [*KERNEL, "seccomp-only"])
def test_native_calls_cannot_mount_or_make_namespaces(combo: str) -> None:
    """Without capabilities no mount works; creating a user namespace (kernel attack
    surface, and capabilities inside it) is refused by the syscall filter."""
    limits = limits_for(combo)
    result = run("""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        print("mount", libc.mount(b"tmpfs", b"/sandbox/box", b"tmpfs", 0, None),
              ctypes.get_errno())
        print("unshare", libc.unshare(0x10000000), ctypes.get_errno())
        """, limits)
    if limits.guard:
        assert [v["kind"] for v in result.violations] == ["native code loading"]
        return
    assert "mount -1 1" in result.stdout, result.stdout
    if limits.seccomp:
        assert "unshare -1 1" in result.stdout, result.stdout
