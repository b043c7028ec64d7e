"""Issue 33: ``summarybench doctor`` asks every configured model one cheap question and
says what each answered before a run spends anything; ``run``, ``generate`` and
``evaluate`` offer it on the first use of a configuration, and never wait without a
terminal. The models answer over real HTTP from the fake server, or refuse a connection.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.cli import main
from pytest_summarybench.cli.doctor import offer
from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.settings import load_settings
from tests.fakes.hostile import ends_within
from tests.fakes.openai_server import Reply


def answer(body: dict[str, Any]) -> str | Reply:
    model = body["model"]
    if model == "lazy-codr":
        return Reply("The model `lazy-codr` does not exist or you do not have access to it.",
                     status=404)
    if model == "chatty-judge":
        return "Sure thing! Happy to help with that."
    prompt = body["messages"][-1]["content"]
    return '{"ok": true}' if "JSON" in prompt else "ok"


def _lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    out = capsys.readouterr().out
    assert "Traceback" not in out
    return out.splitlines()


def test_doctor_says_what_each_model_answered(project: Path, fake_server: Any,
                                             refusing_port: int,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    url = fake_server(respond=answer).base_url
    dead = f"http://127.0.0.1:{refusing_port}/v1"
    for argv in (["add-model", "openai/good-coder", "--api-endpoint", url],
                 ["add-model", "openai/lazy-codr", "--api-endpoint", url],
                 ["add-model", "builtin/docstring"],
                 ["add-model", "openai/gated", "--api-endpoint", url,
                  "--api-key-env", "GATED_KEY_NOT_SET"],
                 ["add-judge", "local/chatty-judge", "--api-endpoint", url,
                  "--family", "gamma"],
                 ["add-judge", "local/judge-7b", "--api-endpoint", dead, "--family", "delta"],
                 ["config", "--task-model", "local/task-7b", "--task-endpoint", url,
                  "--eval", "judge,contrastive,downstream"]):
        assert main(argv) == 0, argv
    capsys.readouterr()
    assert main(["doctor"]) == 1
    lines = _lines(capsys)
    said = {line.split(" (", 1)[0].split()[-1]: line for line in lines if " (" in line}
    assert said["openai/good-coder"].startswith("ok   openai/good-coder (model under test): "
                                                "answered 'ok'")
    assert said["openai/lazy-codr"].startswith(
        "FAIL openai/lazy-codr (model under test): model not found: HTTP 404")
    assert "builtin/docstring" not in said                        # nothing to ask
    assert said["openai/gated"] == ("FAIL openai/gated (model under test): no key: "
                                    "GATED_KEY_NOT_SET is not set; export it to call openai "
                                    "models")
    assert said["local/chatty-judge"].startswith(
        "FAIL local/chatty-judge (judge): no JSON where JSON is needed: answered 'Sure thing!")
    assert said["local/judge-7b"].startswith(
        f"FAIL local/judge-7b (judge): refused connection: connection refused at {dead}")
    assert said["local/task-7b"].startswith("ok   local/task-7b (task model): answered "
                                            "'{\"ok\": true}'")
    assert said["builtin/minilm"].startswith("ok   builtin/minilm (embedding model): "
                                             "embedded a text into 384 dimensions")
    assert lines[-1] == ("doctor: 3 of 7 answered as the run needs; fix the 4 above before a "
                         "run spends anything")


def test_a_configuration_of_built_ins_has_nothing_to_check(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "--eval", "judge"]) == 0
    capsys.readouterr()
    assert main(["check"]) == 0
    assert _lines(capsys) == ["doctor: this configuration calls no model (built-in "
                              "summarizers only): nothing to check"]


def test_the_first_use_offers_doctor_once_and_never_waits_without_a_terminal(
        project: Path, fake_server: Any, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    url = fake_server(respond=answer).base_url
    assert main(["add-model", "openai/good-coder", "--api-endpoint", url]) == 0
    settings = load_settings(project / "summarybench.yaml", families=BUILTIN_FAMILIES)

    def no_input(prompt: str = "") -> str:
        raise AssertionError("asked without a terminal")

    monkeypatch.setattr("builtins.input", no_input)
    capsys.readouterr()
    assert offer(settings, "evaluate", interactive=False)
    assert "tip: this configuration's models were never checked; `summarybench doctor`" \
        in capsys.readouterr().err
    assert offer(settings, "evaluate", interactive=False)   # the second time: quiet
    assert capsys.readouterr().err == ""
    # Another model: a new configuration for doctor; on a terminal it asks, and checks.
    assert main(["add-model", "openai/lazy-codr", "--api-endpoint", url]) == 0
    settings = load_settings(project / "summarybench.yaml", families=BUILTIN_FAMILIES)
    answers = iter(["", "n"])          # yes, check them; then: no, do not run anyway
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    capsys.readouterr()
    assert not offer(settings, "run", interactive=True)
    out = capsys.readouterr().out
    assert "FAIL openai/lazy-codr (model under test): model not found" in out
    seen = json.loads((settings.output_dir / ".summarybench-doctor.json").read_text())
    assert len(seen) == 2 and [v["checked"] for v in seen.values()] == [False, True]


def test_a_provider_dripping_its_headers_ends_at_the_models_timeout(
        project: Path, fake_server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A provider that sends its status line and then its headers a byte every 0.2 s:
    every read is well within the socket timeout, so before the sync client's sockets were
    bounded on the wall clock ``summarybench doctor`` never ended. With ``timeoutS: 2`` each
    attempt ends 2 s after its request and the probe gives up after its second, with one
    line naming the model and the reason (the bound of 60 s is generous on purpose: a
    loaded machine, the embedding model loaded after)."""
    server = fake_server(faults=lambda n, body: "drip_headers")
    assert main(["add-model", "openai/dripper", "--api-endpoint", server.base_url,
                 "--api-key-env", "DRIPPER_KEY"]) == 0
    config = project / "summarybench.yaml"
    config.write_text(config.read_text().replace(
        f"apiEndpoint: {server.base_url}\n",
        f"apiEndpoint: {server.base_url}\n      timeoutS: 2\n", 1))
    assert "timeoutS: 2" in config.read_text()
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DRIPPER_KEY", "sk-fake-dripper-key")
        assert ends_within(60.0, lambda: main(["doctor"])) == 1
    [line] = [line for line in _lines(capsys) if "openai/dripper" in line]
    assert line.startswith("FAIL openai/dripper (model under test): slow answer: the answer "
                           "was still arriving 2 s after the request (timeoutS), "), line
    assert "bytes of it so far (gave up after 2 attempts in " in line, line
    assert server.chat_requests == 2
