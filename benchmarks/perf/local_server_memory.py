"""Resident memory of the local model servers (``local/<name>`` GGUF models).

Two measurements, both reading ``VmRSS`` and ``VmHWM`` (the peak) from
``/proc/<pid>/status`` of each ``llama_cpp.server`` process:

``run -- COMMAND...`` runs a command (the local-model benchmark of docs/local-llm.md, or the
``local_llm`` tests) and watches every server process it starts, at any depth below it,
every ``--interval`` seconds. It prints, per model, how many server processes were
started (more than one is a restart), the peak resident size of each, the peak of all
servers' resident sizes added up, the command's wall time and its exit status::

    python benchmarks/perf/local_server_memory.py run -- \\
        pytest -p summarybench benchmarks/summary --sb-config docs/local-llm.yaml \\
        --sb-output /tmp/localrun

``requests MODEL`` starts one server for installed weights by itself (no supervisor),
with the plugin's server arguments or ``--flags`` of your own, sends ``--n`` judge
requests (pointwise and pairwise verdicts, in turn, over the fixture codebase's Python
files, with the grammar the plugin sends) and prints the resident size after each: how
``--cache`` and ``--logits_all`` were compared::

    python benchmarks/perf/local_server_memory.py requests gemma-3-270m --n 5 \\
        --flags="--cache true --logits_all true"

Both need the ``local`` extra (docs/local-llm.md); neither downloads anything.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pytest_summarybench.llm import local  # noqa: E402
from pytest_summarybench.llm.local_supervisor import read_rss  # noqa: E402

MIB = 1 << 20
SERVER_MODULE = "llama_cpp.server"
OLD_LAUNCHER = ["-m", "pytest_summarybench.llm.local"]


# -- run: watch the servers a command starts -------------------------------------------------
@dataclass
class Server:
    pid: int
    model: str
    peak: int = 0
    """Bytes: the largest VmHWM seen (the kernel's own peak, so nothing between polls is
    missed while the process lives)."""
    first_s: float = 0.0
    last_s: float = 0.0


@dataclass
class Watch:
    root: int
    started: float = field(default_factory=time.monotonic)
    servers: dict[int, Server] = field(default_factory=dict)
    peak_total: int = 0
    """Bytes: the largest sum of the servers' VmRSS at one poll."""

    def poll(self) -> None:
        parents: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        total = 0
        now = time.monotonic() - self.started
        for pid in parents:
            if not self._below_root(pid, parents):
                continue
            server = self.servers.get(pid) or self._server(pid, now)
            if server is None:
                continue
            memory = read_rss(pid)
            if memory is None:
                continue
            server.peak = max(server.peak, memory[1])
            server.last_s = now
            total += memory[0]
        self.peak_total = max(self.peak_total, total)

    def _below_root(self, pid: int, parents: dict[int, int]) -> bool:
        seen = 0
        while pid > 1 and seen < 64:
            if pid == self.root:
                return True
            pid, seen = parents.get(pid, 0), seen + 1
        return False

    def _server(self, pid: int, now: float) -> Server | None:
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            return None
        argv = args.split("\0")
        # the server itself, not the supervisor that names the module later on; before
        # the supervisor, the launcher ran the server in its own process (``serve``)
        if argv[1:3] != ["-m", SERVER_MODULE] and argv[1:4] != [*OLD_LAUNCHER, "serve"]:
            return None
        model = argv[argv.index("--model_alias") + 1] if "--model_alias" in argv else "?"
        self.servers[pid] = Server(pid, os.path.basename(model), first_s=now, last_s=now)
        return self.servers[pid]

    def report(self, status: int) -> dict[str, Any]:
        models: dict[str, dict[str, Any]] = {}
        for server in sorted(self.servers.values(), key=lambda s: s.first_s):
            entry = models.setdefault(server.model, {"server_processes": 0, "peak_mib": 0,
                                                     "processes": []})
            entry["server_processes"] += 1
            entry["peak_mib"] = max(entry["peak_mib"], round(server.peak / MIB))
            entry["processes"].append({"pid": server.pid, "peak_mib": round(server.peak / MIB),
                                       "seen_s": [round(server.first_s, 1),
                                                  round(server.last_s, 1)]})
        return {"exit_status": status, "wall_s": round(time.monotonic() - self.started, 1),
                "peak_all_servers_mib": round(self.peak_total / MIB), "models": models}


def run(command: list[str], interval: float) -> dict[str, Any]:
    process = subprocess.Popen(command)
    watch = Watch(process.pid)
    while process.poll() is None:
        watch.poll()
        time.sleep(interval)
    return watch.report(process.returncode)


# -- requests: one server, judge requests, memory after each ----------------------------------
def _judge_bodies(name: str, n: int) -> list[dict[str, Any]]:
    from pytest_summarybench.evaluators.judge.prompts import pairwise_messages, pointwise_messages
    from pytest_summarybench.evaluators.judge.verdicts import (
        PAIRWISE_JSON_SCHEMA,
        POINTWISE_JSON_SCHEMA,
    )

    files = sorted((ROOT / "fixtures" / "sample_codebase").rglob("*.py"))
    codes = [f.read_text()[:3000] for f in files]
    bodies = []
    for i in range(n):
        code = codes[i % len(codes)]
        if i % 2 == 0:
            messages = pointwise_messages("python", code, "Does a thing with the data.")
            schema = POINTWISE_JSON_SCHEMA
        else:
            messages = pairwise_messages("python", code, "Does a thing.", "Handles input.")
            schema = PAIRWISE_JSON_SCHEMA
        bodies.append({"model": name, "messages": messages, "temperature": 0,
                       "max_tokens": 200,
                       "response_format": local.llama_cpp_response_format(schema)})
    return bodies


def requests(name: str, n: int, flags: str | None, log: Path) -> dict[str, Any]:
    weights = local.resolve_weights(name)
    options = local.ServerOptions.from_env()
    port = local._free_port()
    args = options.server_args(weights, name, port)
    if flags is not None:  # the plugin's memory flags replaced by the given ones
        args = args[:args.index("--cache")] + shlex.split(flags)
    env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ}
    with log.open("w") as sink:
        server = subprocess.Popen([sys.executable, "-m", SERVER_MODULE, *args],
                                  stdout=sink, stderr=subprocess.STDOUT, env=env)
    out: dict[str, Any] = {"model": name, "flags": args[args.index("--n_threads") + 2:],
                           "requests": []}
    try:
        deadline = time.monotonic() + options.start_timeout_s
        while not local.healthy(port):
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start; see {log}")
            time.sleep(0.5)
        memory = read_rss(server.pid) or (0, 0)
        out["started_mib"] = round(memory[0] / MIB)
        for body in _judge_bodies(name, n):
            started = time.perf_counter()
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/chat/completions", data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=900) as response:
                answer = json.load(response)
            memory = read_rss(server.pid) or (0, 0)
            out["requests"].append({
                "prompt_tokens": answer["usage"]["prompt_tokens"],
                "completion_tokens": answer["usage"]["completion_tokens"],
                "seconds": round(time.perf_counter() - started, 1),
                "rss_mib": round(memory[0] / MIB), "peak_mib": round(memory[1] / MIB)})
            print(json.dumps(out["requests"][-1]), file=sys.stderr, flush=True)
    finally:
        server.terminate()
        server.wait(30)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    watch = sub.add_parser("run", help="watch the servers a command starts")
    watch.add_argument("--interval", type=float, default=0.25, help="seconds between polls")
    watch.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    single = sub.add_parser("requests", help="one server, judge requests, memory after each")
    single.add_argument("model", help="installed weights, e.g. gemma-3-270m")
    single.add_argument("--n", type=int, default=5, help="how many requests")
    single.add_argument("--flags", help="server flags instead of the plugin's "
                                        "(e.g. '--cache true --logits_all true')")
    single.add_argument("--log", type=Path, default=Path("/tmp/local_server_memory.log"))
    args = parser.parse_args()
    if args.mode == "run":
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        if not command:
            parser.error("run needs a command after --")
        result = run(command, args.interval)
    else:
        result = requests(args.model, args.n, args.flags, args.log)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
