"""Hostile inputs and the child processes that measure them: code nested or chained to
make extraction quadratic, and calls to a provider that answers too much.

Each measurement runs in a child process under a 3 GiB address-space cap (a regression
fails instead of taking the machine's memory) and reports its own peak resident memory.
``tests/extract/test_extract_hostile.py`` and ``tests/llm/test_transport.py`` assert the
bounds; ``benchmarks/perf/hostile_inputs.py`` prints the figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]
GOOD = "def ok(a):\n    b = a\n    return b\n"


def lines(text: str, width: int = 80) -> str:
    """``text`` cut into lines (a file of one long line is skipped as minified)."""
    return "\n".join(text[i:i + width] for i in range(0, len(text), width)) + "\n"


#: name -> (file name, source): each nests its syntax past the limit per file.
DEEP_CODE = {
    "js-parentheses": ("a.js", "x = " + lines("(" * 100_000 + "1" + ")" * 100_000) + ";\n"),
    "js-nested-functions": ("a.js", "function f(){\n" * 20_000 + "}\n" * 20_000),
    "java-nested-classes": ("A.java", "class A {\n" * 20_000 + "}\n" * 20_000),
    "python-sum": ("a.py", "x = (" + lines("+".join(["a"] * 100_000)) + ")\n"),
    "python-and-chain": ("a.py", "x = (" + lines(" and ".join(["a"] * 100_000)) + ")\n"),
}


def call_chains(size: int = 900_000, depth: int = 900) -> tuple[str, str]:
    """A Java file of ``size`` bytes of ``depth``-call chains (under the depth limit)."""
    chain = lines("a" + ".b()" * depth, width=76).rstrip("\n")
    statement = "    x = " + chain + ";\n"
    body = statement * (size // len(statement))
    return "A.java", "class A {\n  void f() {\n" + body + "  }\n}\n"


def long_unit(index: int, lines: int = 497, width: int = 400) -> str:
    """One legal but long Python function: ``lines`` lines of ``width`` characters, mostly
    a comment of random words (some 200 KB at the defaults, under every extraction
    limit). Seeded by ``index``, so a codebase of them is the same on every machine."""
    import random

    rng = random.Random(index)
    out = [f"def big{index}(a):"]
    for n in range(lines - 2):
        line = f"    x{n} = a + {n}  #"
        while len(line) < width:
            line += f" {rng.choice(['alpha', 'beta', 'gamma', 'delta'])}{rng.randrange(10**5)}"
        out.append(line[:width])
    out.append("    return a")
    return "\n".join(out) + "\n"


def codebase(root: Path, name: str, text: str) -> Path:
    """A codebase of one good file and ``name`` holding ``text``."""
    root.mkdir(parents=True)
    (root / "ok.py").write_text(GOOD)
    (root / name).write_text(text)
    return root


#: The child's own peak resident memory: VmHWM of its address space. Not ru_maxrss, which
#: Linux carries over an exec, so a child of a large test process (an xdist worker of a
#: whole suite) would report its parent's peak.
PEAK = r"""
def peak_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""

EXTRACT = PEAK + r"""
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from pytest_summarybench.extract import ExtractionConfig, ExtractionFilters, extract_units
started = time.monotonic()
result = extract_units(ExtractionConfig(root_path=sys.argv[1], workers=1,
                                        filters=ExtractionFilters(min_lines=1, max_lines=10**6)))
print(json.dumps({
    "seconds": time.monotonic() - started,
    "units": sorted({u.path for u in result.units}),
    "skipped": {s.path: s.reason for s in result.skipped},
    "warnings": result.warnings,
    "peak_mb": peak_mb(),
}))
"""


def extract_in_child(root: Path, timeout_s: float) -> dict[str, Any] | None:
    """What ``extract_units`` finds under ``root``, its seconds and the child's peak
    memory; None when the child ran past ``timeout_s``. Raises on a crash."""
    try:
        done = subprocess.run([sys.executable, "-c", EXTRACT, str(root)],
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    found: dict[str, Any] = json.loads(done.stdout)
    return found


CALLS = PEAK + r"""
import asyncio, json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
sys.path.insert(0, sys.argv[1])
from tests.fakes.openai_server import FakeOpenAIServer, gzip_bomb
from pytest_summarybench.llm import ModelCallError, acomplete, complete
from pytest_summarybench.llm.providers import litellm
from pytest_summarybench.llm.retry import RetryPolicy
from pytest_summarybench.schemas import ModelConfig

litellm()  # imported, and the bomb made, before the clock starts
mode, max_tokens, timeout_s = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
kinds = sys.argv[5:]
if "gzip_bomb" in kinds:
    gzip_bomb()
policy = RetryPolicy(base_delay_s=0.1)
out = {}
for kind in kinds:
    with FakeOpenAIServer(faults=lambda n, body, kind=kind: kind) as server:
        model = ModelConfig(provider="local", model_name=f"hostile-{kind}",
                            api_endpoint=server.base_url, timeout_s=timeout_s,
                            max_tokens=max_tokens)
        messages = [{"role": "user", "content": kind}]
        started = time.monotonic()
        try:
            if mode == "async":
                asyncio.run(acomplete(model, messages, retry_policy=policy))
            else:
                complete(model, messages, retry_policy=policy)
            reason = "answered"
        except ModelCallError as exc:
            reason = exc.reason
        out[kind] = {"seconds": time.monotonic() - started, "reason": reason,
                     "requests": server.chat_requests, "sent": server.bytes_sent}
out["peak_mb"] = peak_mb()
print(json.dumps(out))
"""


def calls_in_child(mode: str, max_tokens: int, kinds: list[str],
                   timeout_s: float, call_timeout_s: float = 10.0) -> dict[str, Any] | None:
    """One call to each hostile answer ``kinds`` of the fake server (``sync`` or
    ``async``), each attempt bounded by ``call_timeout_s`` (the model's ``timeoutS``): its
    seconds, reason, requests and the bytes the server got to send, and the child's peak
    memory; None when the child ran past ``timeout_s``."""
    try:
        done = subprocess.run([sys.executable, "-c", CALLS, str(ROOT), mode, str(max_tokens),
                               str(call_timeout_s), *kinds],
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def ends_within(seconds: float, call: Callable[[], T]) -> T:
    """``call()``'s result (or its exception), run in a daemon thread so that a call that
    never ends fails the test after ``seconds`` instead of hanging it (and, being a daemon,
    does not hold the test process at its exit). Raises ``AssertionError`` then."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="ends-within", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise AssertionError(f"the call did not end within {seconds:g} s")
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value
