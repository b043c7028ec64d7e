"""A user name and password in an ``apiEndpoint`` (issue 34): refused at validation with
one line that does not repeat the password, and masked wherever a URL is printed.

Before: ``doctor`` printed ``connection refused at http://127.0.0.1:1 (redirected from
http://user:hunter2SECRET@...)`` (a redirect that never happened, the password in clear),
the store kept the URL as written, and with a live port ``doctor`` said ok (httpx sent the
credentials) while every call of the run failed as ``HTTP 500: Connection error`` after 6
attempts (aiohttp refuses credentials in the URL beside an ``Authorization`` header)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_summarybench.cli import main
from pytest_summarybench.llm.redaction import redact, scrub
from pytest_summarybench.llm.retry import _redirected
from pytest_summarybench.schemas.config import endpoint_problem

SECRET = "hunter2SECRET"
URL = f"http://user:{SECRET}@127.0.0.1:1/v1"


def test_credentials_in_an_endpoint_are_refused_in_one_line(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = project / "summarybench.yaml"
    cfg.write_text(cfg.read_text().replace(
        "  test: []\n", f'  test:\n    - {{provider: openai, model: m, apiEndpoint: "{URL}"}}\n',
        1))
    for argv in (["config"], ["doctor"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        assert SECRET not in err, err
        assert "models.test.0.apiEndpoint = 'http://user:***@127.0.0.1:1/v1'" in err, err
        assert ("it holds a user name or password (user:password@host): give the key in "
                "the environment variable apiKeyEnv names, not in the URL") in err, err


def test_the_problem_is_named_for_a_user_alone_too() -> None:
    assert endpoint_problem("https://token@api.example.com/v1") is not None
    assert endpoint_problem("https://api.example.com/v1") is None


def test_a_url_password_is_masked_wherever_text_is_redacted() -> None:
    line = f"connection refused at {URL}; {{\"apiEndpoint\": \"{URL}\"}}"
    for shown in (redact(line), redact(line, shapes=False), scrub(line, one_line=True)):
        assert SECRET not in shown
        assert "http://user:***@127.0.0.1:1/v1" in shown
    assert redact("see https://example.com/a@b and mailto:x@y") == \
        "see https://example.com/a@b and mailto:x@y"


class _Request:
    class url:  # noqa: N801 - the shape of httpx.URL
        scheme, netloc = "http", b"127.0.0.1:1"


class ConnectError(Exception):
    request = _Request()


ConnectError.__module__ = "httpx"


def test_no_redirect_is_invented_for_an_endpoint_with_user_information() -> None:
    # httpx's request URL never holds the user information; the endpoint did, and the
    # two were compared as they were: "(redirected from ...)" for a call that went
    # straight to the endpoint.
    assert _redirected(ConnectError(), URL) == URL
    assert _redirected(ConnectError(), "http://127.0.0.1:2/v1") == \
        "http://127.0.0.1:1 (redirected from http://127.0.0.1:2/v1)"


@pytest.mark.parametrize("command", [["add-model", "openai/x8"], ["add-judge", "openai/j8"]])
def test_credentials_given_on_the_command_line_are_refused_without_the_password(
        project: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    # Payload: the same URL through --api-endpoint. Before: argparse's error repeated it
    # as typed, password and all (the YAML was left alone).
    before = (project / "summarybench.yaml").read_bytes()
    with pytest.raises(SystemExit) as stop:
        main([*command, "--api-endpoint", URL])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert SECRET not in err, err
    assert "http://user:***@127.0.0.1:1/v1 is not a usable endpoint URL" in err, err
    assert (project / "summarybench.yaml").read_bytes() == before
