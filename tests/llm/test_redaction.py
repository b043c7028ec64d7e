"""Attack: a provider echoes the key it was sent, and provider text carries terminal escape
sequences. Keys are masked by *value* wherever the run writes, whatever their variable's
name; control characters reach no terminal line or report as raw bytes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.llm import ModelCallError, complete, redact
from pytest_summarybench.settings import load_settings
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.project import session_results
from tests.fakes.security_project import KEY_ENV, make_project, output_files, run

#: Not shaped like any provider's key, in a variable whose name does not end in _KEY.
SECRET = "TEAMA-0123456789abcdefXYZ"
#: OSC 52 (write the clipboard), clear screen, cursor home, a C1 CSI and a bidi override.
ESCAPES = "\x1b]52;c;aGVsbG8=\x07\x1b[2J\x1b[H\x9b31m\u202e"


def _echo_key(body: dict[str, Any]) -> Reply:
    """A provider that refuses the model under test's key by quoting it, with escapes."""
    if body.get("model") == "gpt-4o-mini":
        return Reply(f"invalid api key {SECRET} {ESCAPES}", status=401)
    return Reply("Summary: applies a pricing rule")


def _store_text(out: Path) -> str:
    """Every value of every table of the run's store, as text."""
    conn = sqlite3.connect(out / "store.sqlite")
    try:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master "
                                             "WHERE type = 'table'")]
        return "\n".join(str(row) for t in tables for row in conn.execute(f"SELECT * FROM {t}"))
    finally:
        conn.close()


def test_a_401_quoting_a_key_named_by_apikeyenv_reaches_no_output(
        pytester: pytest.Pytester, fake_server: Any, monkeypatch: pytest.MonkeyPatch,
        run_mode: list[str]) -> None:
    """Payload: ``deployments: [{apiKeyEnv: OPENAI_KEY_TEAM_A}]`` (docs/hosts.md's example) and
    a provider answering 401 "invalid api key <the key>" plus escape sequences. Afterwards
    the key is in no file the run wrote (junit XML, pytest-html, results.json, report.md,
    report.html, explorer.html, the SQLite store and its WAL) nor in the terminal, and no
    output holds a raw ESC byte; with and without xdist workers."""
    server: FakeOpenAIServer = fake_server(respond=_echo_key)
    monkeypatch.setenv(KEY_ENV, SECRET)
    make_project(pytester, server.base_url)
    result = run(pytester, "--junitxml", "out/junit.xml", "--html", "out/page.html",
                 *run_mode)
    terminal = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in terminal
    assert server.authorizations == {f"Bearer {SECRET}"}  # the key did go to the provider
    assert "invalid api key ***" in terminal  # the reason is kept, the key masked
    assert SECRET not in terminal
    assert "\x1b" not in terminal and "\x9b" not in terminal and "\u202e" not in terminal
    out = pytester.path / "out"
    names = {p.name for p in output_files(out)}
    assert {"junit.xml", "page.html", "results.json", "report.md", "report.html",
            "explorer.html", "store.sqlite"} <= names
    for path in output_files(out):
        data = path.read_bytes()
        assert SECRET.encode() not in data, f"{path.name} holds the key"
        if not path.name.startswith("store.sqlite"):  # a database file is binary
            assert b"\x1b" not in data and b"\xc2\x9b" not in data, f"{path.name}: raw ESC"
    assert SECRET not in _store_text(out)
    assert "\x1b" not in _store_text(out)
    # Every item failed: a partial run ("nothing scored"), its results in runs/<id>/.
    errors = session_results(result)["errors"]
    assert errors and all("***" in e["examples"][0] for e in errors)


def _echo_key_in_answer(body: dict[str, Any]) -> Reply:
    """A provider that answers (200) with the key it was sent in the summary."""
    return Reply(f"Summary: applies a pricing rule; by the way your key is {SECRET}.")


def test_a_key_echoed_in_an_answer_is_stored_masked(
        pytester: pytest.Pytester, fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Payload: the model under test answers every prompt with the key it was sent. The
    summaries and the response cache hold the answer with the key masked, so a report
    rebuilt later from the store (without the variable set) cannot show it either."""
    server: FakeOpenAIServer = fake_server(respond=_echo_key_in_answer)
    monkeypatch.setenv(KEY_ENV, SECRET)
    make_project(pytester, server.base_url)
    result = run(pytester)
    assert "INTERNALERROR" not in result.stdout.str()
    out = pytester.path / "out"
    stored = _store_text(out)
    assert "your key is ***" in stored
    assert SECRET not in stored
    assert "explorer.html" in {p.name for p in output_files(out)}  # it quotes the answers
    for path in output_files(out):
        assert SECRET.encode() not in path.read_bytes(), f"{path.name} holds the key"


def test_the_values_of_configured_key_variables_are_masked_whatever_their_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Payload: keys in variables whose names look like nothing secret (``TEAM_A_OPENAI``,
    named by ``apiKeyEnv``), echoed plainly, JSON-escaped and URL-encoded."""
    key = "k3y/with+odd\"chars-998877"
    monkeypatch.setenv("TEAM_A_OPENAI", key)
    path = tmp_path / "summarybench.yaml"
    path.write_text("models:\n  test:\n    - provider: openai\n      model: gpt-4o\n"
                    "      deployments: [{apiKeyEnv: TEAM_A_OPENAI}]\n")
    load_settings(path,
                  families=BUILTIN_FAMILIES)  # reading the configuration is what names the variable
    text = redact(f"plain {key}; json {json.dumps(key)}; url k3y%2Fwith%2Bodd%22chars-998877")
    assert "998877" not in text, text
    assert text.count("***") == 3


def test_other_spellings_of_a_key_are_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Payload (second adversarial pass): the key percent-encoded otherwise than
    ``quote`` does (``%2D`` for ``-``), partly encoded, and in upper case."""
    key = "canary-7f3a9c-not-a-real-key"
    monkeypatch.setenv("MY_SERVICE_KEY", key)
    spellings = ["canary%2D7f3a9c%2Dnot%2Da%2Dreal%2Dkey", "canary-7f3a9c%2dnot-a-real-key",
                 "%63anary-7f3a9c-not-a-real-key", key.upper()]
    text = redact(" | ".join(spellings))
    assert text == " | ".join(["***"] * len(spellings)), text


def test_secret_looking_variables_are_masked_by_value_with_sensible_lengths(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Payload: a key in ``MY_SERVICE_KEY_TEAM_B`` (KEY in the middle of the name) and in
    ``DB_PASSWD``; short flags in secret-looking names and a socket path are left alone."""
    monkeypatch.setenv("MY_SERVICE_KEY_TEAM_B", "b-5551234567")
    monkeypatch.setenv("DB_PASSWD", "hunter2hunter2")
    monkeypatch.setenv("ENABLE_TOKEN_CACHE", "true")
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock")
    text = redact("a b-5551234567 b hunter2hunter2 c true d /tmp/ssh-agent.sock")
    assert text == "a *** b *** c true d /tmp/ssh-agent.sock"


def test_a_model_call_error_never_carries_the_key_or_escapes(
        fake_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Payload: the provider's 401 message quotes the plain provider key (not ``sk-``
    shaped) with a screen clear; the ModelCallError the caller sees is clean."""
    server: FakeOpenAIServer = fake_server(
        respond=lambda body: Reply("bad key OPENKEY-77665544 \x1b[2J\x1b]0;pwned\x07",
                                   status=401))
    monkeypatch.setenv("OPENAI_API_KEY", "OPENKEY-77665544")
    from pytest_summarybench.schemas import ModelConfig

    model = ModelConfig(provider="openai", model_name="gpt-4o-mini",
                        api_endpoint=server.base_url)
    with pytest.raises(ModelCallError) as info:
        complete(model, [{"role": "user", "content": "hi"}])
    message = str(info.value)
    assert "HTTP 401" in message and "OPENKEY" not in message and "***" in message
    assert "\x1b" not in message and "\\x1b[2J" in message


def test_neutralise_makes_escape_sequences_and_controls_visible_and_inert() -> None:
    from pytest_summarybench.llm.redaction import neutralise

    text = neutralise(f"a{ESCAPES}b\r\nc\td\x00\ud800")
    assert text == ("a\\x1b]52;c;aGVsbG8=\\x07\\x1b[2J\\x1b[H\\x9b31m\\u202eb\nc\td"
                    "\\x00\\ud800")
    assert neutralise("one\ntwo\tthree\r\n", one_line=True) == "one two three "
    text.encode("utf-8")  # printable anywhere


def test_scrub_bounds_length_after_redacting(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key straddling the cut is masked before the cut, never left half visible."""
    from pytest_summarybench.llm.redaction import scrub, scrub_data

    monkeypatch.setenv("OPENAI_API_KEY", "ZZZZ-key-material-1234567890")
    text = "x" * 95 + "ZZZZ-key-material-1234567890" + "y" * 10_000
    out = scrub(text, max_chars=120)
    assert len(out) <= 120 and "ZZZZ" not in out and "more characters" in out
    assert scrub_data({"raw": ["ZZZZ-key-material-1234567890\x1b"], "n": 1}) == {
        "raw": ["***\\x1b"], "n": 1}


def test_a_model_name_ending_like_a_key_is_not_masked() -> None:
    """Issue 33's pass: doctor said a task model answered "as ta***" (task-7b-fake-1)."""
    from pytest_summarybench.llm.redaction import redact

    assert redact("answered as task-7b-fake-1") == "answered as task-7b-fake-1"
    assert redact("key=sk-abcdef123456 and 'sk-abcdef123456'") == "key=*** and '***'"
