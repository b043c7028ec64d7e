"""A pytest plugin for ``peak_memory.py``: the process's resident memory at the run's steps.

Loaded into the measured run with ``-p memory_marks`` (``benchmarks/perf`` on the path), it
records ``VmRSS`` and ``VmHWM`` (the kernel's peak resident size so far) from
``/proc/self/status``, with the process's CPU seconds and the clock, around extraction
and sampling (``ensure_units``), around litellm's import (in whichever thread), when
collection ends, before and after every
``Embedder.embed`` call and every evaluator's ``prepare``, and at the end of the session,
and writes them as JSON lines to the file named by ``SB_MEMORY_MARKS``. ``VmHWM`` never
falls, so the step during which it rose holds the peak. Measurement only: it wraps
functions, it changes no result.
"""

from __future__ import annotations

import functools
import json
import os
import time
from typing import Any

import pytest

_STARTED = time.monotonic()


def status() -> dict[str, int]:
    """VmRSS and VmHWM of this process, in kB."""
    out: dict[str, int] = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            key = line.split(":", 1)[0]
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(line.split()[1])
    return out


def mark(step: str, **extra: Any) -> None:
    path = os.environ.get("SB_MEMORY_MARKS")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"step": step, "t": round(time.monotonic() - _STARTED, 2),
                             "cpu": round(time.process_time(), 2),
                             "unix": round(time.time(), 3), **status(), **extra}) + "\n")


def _wrap(owner: Any, name: str, label: Any) -> None:
    original = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        what = label(*args, **kwargs)
        mark(f"before {what}")
        try:
            return original(*args, **kwargs)
        finally:
            mark(f"after {what}")

    setattr(owner, name, wrapper)


def pytest_configure(config: pytest.Config) -> None:
    import pytest_summarybench
    from pytest_summarybench.embeddings import Embedder
    from pytest_summarybench.engine import pipeline
    from pytest_summarybench.evaluators import BUILTIN_EVALUATORS, load_builtin

    mark("configure", package=pytest_summarybench.__file__)  # which checkout is measured
    _wrap(pipeline, "ensure_units", lambda *a, **k: "units")
    from pytest_summarybench.llm import providers

    if hasattr(providers, "_import_litellm"):  # an older checkout imports it inline
        _wrap(providers, "_import_litellm", lambda *a, **k: "litellm import")
    _wrap(Embedder, "embed", lambda self, texts, *a, **k: f"embed {len(texts)} texts")
    for name in BUILTIN_EVALUATORS:
        cls = type(load_builtin(name))
        if "prepare" in vars(cls):
            _wrap(cls, "prepare", lambda self, ctx, n=name: f"prepare {n}")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    mark("collection finished")  # before the controller generates and prepares


def pytest_sessionfinish(session: pytest.Session) -> None:
    mark("session finish")


def pytest_unconfigure(config: pytest.Config) -> None:
    import atexit

    mark("end")
    atexit.register(mark, "exit handlers")  # registered last: the first to run
