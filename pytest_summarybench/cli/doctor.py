"""``summarybench doctor`` (also ``check``): one real, cheap request to every model the
configuration would call (models under test, judges, the helper, the task model) and one
text to every embedding model, saying what each answered before a run spends anything:
model not found, bad key, refused connection, no JSON where JSON is needed.

``run``, ``generate`` and ``evaluate`` offer it on the first use of a configuration whose
models it has not checked (``offer``): on a terminal they ask; otherwise (CI) they print
the suggestion once and go on, never waiting for an answer.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import CONFIG_FILE, EXIT_FAILURE, EXIT_OK, add_config_argument, found_config

if TYPE_CHECKING:
    from ..schemas import ModelConfig
    from ..settings import Settings

#: Where the output directory remembers the configurations doctor checked or offered.
CHECKED_FILE = ".summarybench-doctor.json"


def add_parser(sub: argparse._SubParsersAction) -> None:
    for command in ("doctor", "check"):
        p = sub.add_parser(
            command, help="ask every configured model one cheap question before a run"
            + (" (the same as doctor)" if command == "check" else ""),
            description="Send one real, cheap request (a few tokens) to every model the "
                        "configuration calls (models under test, judges, the helper, the "
                        "task model) and embed one text with every embedding model, and say "
                        "what each answered: model not found, bad key, refused connection, "
                        "no JSON where JSON is needed. Built-in summarizers are not asked. "
                        "Exit code 1 when one failed.",
            epilog=f"example: summarybench {command} --config summarybench.yaml")
        add_config_argument(p)


@dataclass
class Target:
    """A model the configuration calls, with every role it plays there."""

    model: ModelConfig
    roles: list[str] = field(default_factory=list)
    json_needed: bool = False

    def label(self) -> str:
        return f"{self.model.id} ({', '.join(self.roles)})"


def targets(settings: Settings) -> tuple[list[Target], list[str], list[str]]:
    """(the chat models to ask, by id; the embedding models to try; problems found without
    asking anything, such as a task model that names nothing usable)."""
    from ..roles.assign import Roles
    from ..roles.task import TaskModelError

    found: dict[str, Target] = {}
    problems: list[str] = []

    def add(model: ModelConfig, role: str, json_needed: bool) -> None:
        if model.provider == "builtin":
            return
        target = found.setdefault(model.id, Target(model))
        if role not in target.roles:
            target.roles.append(role)
        target.json_needed = target.json_needed or json_needed

    models, judges = settings.test_models(), settings.judge_models()
    for m in models:
        add(m, "model under test", False)
    for j in judges:
        add(j, "judge", True)
    roles = Roles(settings=settings, models=tuple(models), judges=tuple(judges))
    ev = settings.evaluation
    if judges and ((ev.contrastive.enabled and "llm" in ev.contrastive.methods)
                   or ev.retrieval.enabled) and roles.helper is not None:
        add(roles.helper, "helper", True)
    if ev.downstream.enabled:
        try:
            task = roles.task
        except TaskModelError as exc:
            problems.append(f"task model: {exc}")
        else:
            if task is not None:
                add(task, "task model", True)
    embedders: list[str] = []
    if ev.contrastive.enabled and {"embedding", "lexical"} & set(ev.contrastive.methods):
        embedders.append(ev.contrastive.embedding_model)
    if ev.retrieval.enabled:
        embedders.append(ev.retrieval.embedding_model)
    return list(found.values()), list(dict.fromkeys(embedders)), problems


def probe_embedder(spec: str) -> tuple[bool, str]:
    """Embed one short text with ``spec``: (ok, what happened)."""
    from ..embeddings import EmbeddingError, load_backend
    from ..llm.probe import failure_words

    started = time.perf_counter()
    try:
        vectors = load_backend(spec).embed_batch(["def add(a, b): return a + b"])
    except EmbeddingError as exc:
        return False, failure_words(str(exc), None)
    except Exception as exc:  # noqa: BLE001 - a provider's error, said in one line
        from ..llm.redaction import failure

        return False, failure_words(failure(exc), getattr(exc, "status_code", None))
    seconds = time.perf_counter() - started
    return True, f"embedded a text into {len(vectors[0])} dimensions in {seconds:.1f}s"


def check(settings: Settings, out: Any = None) -> bool:
    """Ask every model and embedder (see the module docstring), one line each to ``out``;
    True when every one answered as its role needs."""
    from ..llm.probe import probe
    from ..llm.redaction import scrub

    out = out or sys.stdout
    chat, embedders, problems = targets(settings)

    def say(line: str) -> None:
        print(scrub(line, one_line=True), file=out, flush=True)

    if not chat and not embedders and not problems:
        say("doctor: this configuration calls no model (built-in summarizers only): nothing "
            "to check")
        return True
    failed = 0
    for text in problems:
        say(f"FAIL {text}")
        failed += 1
    for target in chat:
        result = probe(target.model, json_needed=target.json_needed)
        took = f" in {result.seconds:.1f}s" if result.seconds else ""
        say(f"{'ok  ' if result.ok else 'FAIL'} {target.label()}: {result.text}"
            f"{took if result.ok else ''}")
        failed += not result.ok
    for spec in embedders:
        ok, text = probe_embedder(spec)
        say(f"{'ok  ' if ok else 'FAIL'} {spec} (embedding model): {text}")
        failed += not ok
    total = len(chat) + len(embedders) + len(problems)
    say(f"doctor: {total - failed} of {total} answered as the run needs"
        + ("" if not failed else f"; fix the {failed} above before a run spends anything"))
    return not failed


def run(args: argparse.Namespace) -> int:
    from ._common import load_checked
    from .checks import config_warnings, warn

    path = found_config(args.config if args.config != CONFIG_FILE else None,
                        "pass --config PATH")
    if path is None:
        print("doctor: no summarybench.yaml here: the default run calls no model, nothing "
              "to check (`summarybench init` writes one)")
        return EXIT_OK
    settings = load_checked(path)
    # What no request can show: a judge or task model the family rule keeps from its work.
    for text in config_warnings(settings):
        warn(args.command, text)
    ok = check(settings)
    remember(settings, checked=True)
    return EXIT_OK if ok else EXIT_FAILURE


# -- the offer on first use -----------------------------------------------------------------
def fingerprint(settings: Settings) -> str:
    """What doctor checks of a configuration: its models, endpoints and key variables, the
    task model and the embedding models (a change in any is a new configuration here)."""
    chat, embedders, problems = targets(settings)
    data = [[t.model.model_dump(mode="json") for t in chat], embedders, problems]
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _memory(settings: Settings) -> Path:
    return settings.output_dir / CHECKED_FILE


def _seen(settings: Settings) -> dict[str, Any]:
    from ..core.regular import read_regular

    try:  # a FIFO or a device planted there is no memory, and never blocks
        data = json.loads(read_regular(_memory(settings), 1 << 20))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remember(settings: Settings, *, checked: bool) -> None:
    """Note that this configuration's models were checked (or that doctor was offered)."""
    from ..report.files import write_text_atomic

    seen = _seen(settings)
    seen[fingerprint(settings)] = {"checked": checked, "at": time.time()}
    try:
        settings.output_dir.mkdir(parents=True, exist_ok=True)
        write_text_atomic(_memory(settings), json.dumps(seen, indent=1))
    except OSError:
        pass  # a read-only output directory: the offer comes again, nothing else is lost


def offer(settings: Settings, command: str, *, interactive: bool | None = None) -> bool:
    """Offer doctor on the first use of a configuration that calls models; False when the
    user, asked on a terminal, chose to stop. Without a terminal it prints the suggestion
    once and never waits."""
    chat, embedders, _ = targets(settings)
    if not chat and not any(not e.startswith("builtin/") for e in embedders):
        return True  # nothing that can be misspelt or refuse a connection
    if fingerprint(settings) in _seen(settings):
        return True
    if interactive is None:
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if not interactive:
        print(f"summarybench {command}: tip: this configuration's models were never "
              "checked; `summarybench doctor` asks each one cheap question (model not "
              "found, bad key, refused connection) before a run spends anything",
              file=sys.stderr)
        remember(settings, checked=False)
        return True
    answer = input(f"summarybench {command}: this configuration's models were never "
                   "checked. Ask each one cheap question first (summarybench doctor)? "
                   "[Y/n] ").strip().lower()
    if answer not in ("", "y", "yes"):
        remember(settings, checked=False)
        return True
    ok = check(settings)
    remember(settings, checked=True)
    if ok:
        return True
    again = input(f"summarybench {command}: some models did not answer as the run needs; "
                  "run anyway? [y/N] ").strip().lower()
    return again in ("y", "yes")
