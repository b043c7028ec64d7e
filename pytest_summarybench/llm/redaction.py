"""Text on its way out of the process: secrets masked by value, terminal controls made
inert, size bounded. The one place that redacts; every writer calls it.

Provider errors echo what they were sent (a 401 may quote the key), model answers and
sandboxed code print whatever they like, and all of it reaches the terminal, pytest's
failure messages (hence junit XML and pytest-html), the store and the reports. Masking
keys by the *name* of their variable missed keys named like ``OPENAI_KEY_TEAM_A``, so
``redact`` masks the *values* of

- every variable the configuration names for a key (``apiKeyEnv`` of a deployment,
  registered by ``register_secret_env`` when the configuration is read) and the
  providers' own key variables (``providers.KEY_ENV``), from 6 characters;
- every variable whose name looks like a secret (``KEY``, ``TOKEN``, ``SECRET``,
  ``PASSWORD``, ``CREDENTIAL``, ``AUTH``... anywhere in the name), from 8 characters, so
  that ``FEATURE_KEY=true`` does not mask "true" everywhere;

in their plain, JSON-escaped, percent-encoded and HTML-escaped forms, in any case, plus
anything shaped like a key or a bearer token, and the password of any URL
(``http://user:***@host``). ``neutralise`` (``core/printable.py``, where
``shown_path`` and ``shown_name`` quote paths and names for the terminal) turns C0/C1 control
characters (but newline and tab), escape sequences, bidirectional overrides and lone
surrogates into visible ``\\x1b`` style text, so that an answer cannot clear a screen,
write the clipboard (OSC 52) or hide text in a report. ``scrub`` does both and bounds the length.
"""

from __future__ import annotations

import html
import json
import os
import re
import threading
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from ..core.printable import neutralise

#: What a masked secret is replaced with.
MASK = "***"
#: Shortest value masked for a variable the configuration or a provider names as a key.
MIN_NAMED_CHARS = 6
#: Shortest value masked for a variable that merely has a secret-looking name.
MIN_LOOKALIKE_CHARS = 8

_LOOKALIKE_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW(?:OR)?D|PASSPHRASE|CREDENTIAL|AUTH(?!OR)|_PWD$", re.IGNORECASE)
#: Secret-looking names whose values are locations, not secrets (SSH_AUTH_SOCK).
_LOCATION_NAME = re.compile(r"_(?:SOCK|SOCKET|FILE|PATH|DIR|HOME)$", re.IGNORECASE)
#: A key shape starts a word: ``task-7b-fake-1`` (a model name) is no ``sk-`` key.
_KEY_SHAPES = re.compile(
    r"((?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{6,}|(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{10,}|"
    r"Bearer\s+\S+|"
    r"(?i:api[_-]?key)[\"']?\s*[:=]\s*[\"']?[^\s\"',}]+)")

# The variables known to hold keys are the process's, not a session's: a key must stay
# masked for the life of the process, whoever writes (a later session, a thread still
# logging, an error printed at exit), and they are learnt where no session is at hand
# (a configuration's validator). Only ever added to: sharing can mask more, never less.
_registered: set[str] = set()
_registered_lock = threading.Lock()
_lookalike_names: dict[str, bool] = {}
#: (registered names, environment snapshot) -> secret values: the last answer of
#: ``secret_values``, reused while neither changed (a scan of the environment costs some
#: 30 us, and every record of a run is scrubbed).
_last: tuple[frozenset[str], object, tuple[str, ...]] | None = None


def register_secret_env(*names: str | None) -> None:
    """Mask the values of the environment variables ``names`` from now on in this
    process (the configuration names them as holding keys)."""
    with _registered_lock:
        _registered.update(n for n in names if n)


def _environment_state() -> object:
    """A cheap value that changes whenever the environment does (CPython keeps
    ``os.environ``'s encoded items in ``_data``: comparing them is a tenth of decoding)."""
    data = getattr(os.environ, "_data", None)
    return tuple(data.items()) if isinstance(data, dict) else tuple(os.environ.items())


def _named_variables(registered: frozenset[str]) -> set[str]:
    from .providers import KEY_ENV, KEY_ENV_ALIASES

    named = set(registered)
    named.update(n for n in KEY_ENV.values() if n)
    named.update(a for aliases in KEY_ENV_ALIASES.values() for a in aliases)
    return named


def _lookalike(name: str) -> bool:
    # Names repeat on every call; their verdict is cached (the environment's names are few).
    verdict = _lookalike_names.get(name)
    if verdict is None:
        verdict = bool(_LOOKALIKE_NAME.search(name)) and not _LOCATION_NAME.search(name)
        _lookalike_names[name] = verdict
    return verdict


def secret_values() -> tuple[str, ...]:
    """The values ``redact`` masks now, longest first (as the environment is now: a key
    exported after start-up is masked too)."""
    global _last
    with _registered_lock:
        registered = frozenset(_registered)
    state = _environment_state()
    last = _last
    if last is not None and last[0] == registered and last[1] == state:
        return last[2]
    found = _scan(registered)
    _last = (registered, state, found)
    return found


def _scan(registered: frozenset[str]) -> tuple[str, ...]:
    named = _named_variables(registered)
    values: set[str] = set()
    for name in named:
        value = os.environ.get(name)
        if value and len(value.strip()) >= MIN_NAMED_CHARS:
            values.add(value)
    for name in list(os.environ):
        if name not in named and _lookalike(name):
            value = os.environ.get(name)
            if value and len(value.strip()) >= MIN_LOOKALIKE_CHARS:
                values.add(value)
    return tuple(sorted(values, key=lambda v: (-len(v), v)))


@lru_cache(maxsize=16)
def _value_pattern(values: tuple[str, ...]) -> re.Pattern[str] | None:
    forms: set[str] = set()
    for value in values:
        # As written, and as a JSON string, a URL or an HTML page would spell it.
        forms.update((value, value.strip(), json.dumps(value)[1:-1],
                      json.dumps(value, ensure_ascii=False)[1:-1], quote(value, safe=""),
                      html.escape(value)))
    forms.discard("")
    if not forms:
        return None
    alternatives = [re.escape(f) for f in sorted(forms, key=lambda f: -len(f))]
    # Any percent-encoding of it, each character written as is or as %XX (a quoting
    # other than ours: "%2D" for "-"); letters and hex digits in either case.
    alternatives += [_percent_tolerant(v.strip()) for v in values if v.strip()]
    return re.compile("|".join(alternatives), re.IGNORECASE)


def _percent_tolerant(value: str) -> str:
    parts = []
    for ch in value:
        encoded = "".join(f"%{byte:02x}" for byte in ch.encode("utf-8"))
        parts.append(f"(?:{re.escape(ch)}|{encoded})")
    return "".join(parts)


def redact(text: str, *, shapes: bool = True) -> str:
    """``text`` with every secret value (see the module docstring) replaced by ``***``.

    ``shapes`` also masks what looks like a key or a bearer token whatever its source;
    pass False for a whole JSON or HTML document, where those patterns could eat markup.
    """
    return _redact(text, _value_pattern(secret_values()), shapes)


#: The password of a URL's user information (``http://user:password@host``).
_URL_PASSWORD = re.compile(r"(?<=://)([^\s/?#@:\"'<>]*):[^\s/?#@\"'<>]+@")


def _redact(text: str, pattern: re.Pattern[str] | None, shapes: bool) -> str:
    if not text:
        return text
    if pattern is not None:
        text = pattern.sub(MASK, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(rf"\1:{MASK}@", text)
    return _KEY_SHAPES.sub(MASK, text) if shapes else text


def truncate(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` characters, saying how much was left out."""
    if len(text) <= max_chars:
        return text
    note = f" ... [{len(text) - max_chars:,} more characters]"
    return text[:max(0, max_chars - len(note))] + note if max_chars > len(note) \
        else text[:max_chars]


def scrub(text: str, *, max_chars: int | None = None, one_line: bool = False) -> str:
    """``text`` ready to be printed, stored or reported: redacted, neutralised and (with
    ``max_chars``) truncated. Usable on any text: exception messages, program output,
    model answers."""
    return _scrub(text, _value_pattern(secret_values()), max_chars, one_line)


def _scrub(text: str, pattern: re.Pattern[str] | None, max_chars: int | None,
           one_line: bool) -> str:
    if max_chars is not None and len(text) > 2 * max_chars + 4096:
        # Cut long text before the work (but not at the limit itself: a key straddling
        # the cut would be left half-masked; redaction first, then the final cut).
        text = text[:2 * max_chars + 4096]
    text = neutralise(_redact(text, pattern, True), one_line=one_line)
    return truncate(text, max_chars) if max_chars is not None else text


def scrub_data(value: Any, *, max_chars: int | None = None) -> Any:
    """``value`` (JSON-like: dicts, lists, strings, numbers) with every string in it
    scrubbed as ``scrub`` does; dict keys are left alone (they are ours, not a model's)."""
    pattern = _value_pattern(secret_values())

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return _scrub(v, pattern, max_chars, False)
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        return v

    return walk(value)


def failure(exc: BaseException) -> str:
    """One line naming the exception, without key material or control characters."""
    first = (str(exc).strip().splitlines() or [""])[0]
    return scrub(f"{type(exc).__name__}: {first}", max_chars=1000, one_line=True)
