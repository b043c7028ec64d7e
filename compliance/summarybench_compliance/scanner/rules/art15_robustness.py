"""Article 15, accuracy, robustness and cybersecurity: model output and user input are
untrusted data.

Model-written text must not reach an interpreter, a shell or a query string; model-written
code runs only in a sandbox; calls to other services have timeouts and failures are
handled rather than swallowed. Values are followed through the syntax tree: sandbox
settings through configuration (``ConfigResolver``: dicts, dataclasses, env defaults,
parsed YAML/JSON), query text and shell commands from where they are built to where they
run (``art15_flow``). A sanitising helper around a formatted value does not make it a bound
parameter; a docstring that calls the code safe is not evidence.

Checks (each has a firing and a quiet example in tests/test_rules_art14_15.py):

1. CRITICAL, model code on the host: ``eval``/``exec`` of a non-literal, classes that run
   model code in-process (Python REPL tools, ``LocalCommandLineCodeExecutor``,
   ``PandasQueryEngine``, ``ShellTool``...), ``use_docker=False`` and
   ``code_execution_mode='unsafe'`` (read through configuration), any ``*unsafe*`` or
   ``*dangerous*`` keyword set to True.
2. CRITICAL, a command built from values run through a shell: ``shell=True``,
   ``os.system``/``os.popen``, ``create_subprocess_shell``, ``[bash|sh, -c, value]``.
3. HIGH, SQL text formatted with a non-literal value (f-string, ``%``, ``+``/``+=``,
   ``.format``; number casts and ``?`` placeholder lists are fine) that reaches a call
   running it, directly, through a variable, ``text()``, a builder function or a helper's
   parameter; ``pickle``/``marshal`` loads; ``yaml.load`` without a Loader.
4. MEDIUM, any weak finding: an HTTP call (requests/httpx/urllib3, a ``requests.Session``,
   ``urlopen``) without a timeout; any ``*timeout*`` keyword or settings key that
   resolves to None; a broad ``except``, or one naming an external-call failure
   (``RequestException``, ``APIError``...) with an empty body, that neither re-raises,
   reports (log, print, exit) nor uses the error; ``suppress(Exception)``; ``open()`` on a
   path formatted from a tool argument.
"""

from __future__ import annotations

import ast

from ..base import ArticleResult
from ..facts import CallFact, CodeFacts, dotted, tokens
from ..values import ConfigResolver
from .art15_flow import built_queries, shell_injections

_REPL_TOOLS = frozenset({"PythonREPLTool", "PythonREPL", "PythonAstREPLTool",
                         "create_python_agent", "LocalCommandLineCodeExecutor",
                         "PandasQueryEngine", "PandasAI", "SmartDataframe", "ShellTool",
                         "LocalShellTool", "CodeInterpreterToolSpec"})
"""Framework classes that run model-written code in the host process."""
_HTTP = frozenset({"get", "post", "put", "patch", "delete", "request", "head"})
_HTTP_CLIENTS = frozenset({"requests", "httpx", "urllib3"})
_WEAK_TO_FAIL = 1
"""Weak findings (no timeout, swallowed error, path from input) needed for a violation:
one, as the requirement asks every external call for a timeout (it was two)."""


def _formatted(node: ast.expr) -> bool:
    """A string built from values: f-string, ``+``/``%`` concatenation or ``.format()``."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return True
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format")


def _execution_findings(facts: CodeFacts) -> tuple[list[str], list[str]]:
    """(critical, high) findings: code execution and injection sinks."""
    critical: list[str] = []
    high: list[str] = []
    config = ConfigResolver(facts.tree)
    for call in facts.calls:
        if call.name in ("eval", "exec") and call.node.args \
                and not isinstance(call.node.args[0], ast.Constant):
            critical.append(f"line {call.line}: {call.name}() on dynamic input")
        elif call.last in _REPL_TOOLS:
            critical.append(f"line {call.line}: {call.last} executes model code on the host")
        elif call.name in ("pickle.loads", "pickle.load", "marshal.loads"):
            high.append(f"line {call.line}: {call.name}() deserialises untrusted data")
        elif call.name == "yaml.load" and call.keyword("Loader") is None:
            high.append(f"line {call.line}: yaml.load() without a safe Loader")
        execution = config.value(call.keyword("code_execution_config"))
        if isinstance(execution, dict) and execution.get("use_docker") is False:
            critical.append(f"line {call.line}: code_execution_config use_docker=False runs "
                            f"model code on the host")
        mode = config.value(call.keyword("code_execution_mode"))
        if config.value(call.keyword("allow_code_execution")) is True and mode == "unsafe":
            critical.append(f"line {call.line}: allow_code_execution with "
                            f"code_execution_mode='unsafe' (no sandbox)")
        for kw in call.node.keywords:
            if kw.arg and {"unsafe", "dangerous"} & set(tokens(kw.arg)) \
                    and config.value(kw.value) is True:
                critical.append(f"line {call.line}: {kw.arg}=True on {call.name}")
    # Code running on the host through a shell is the rubric's CRITICAL case.
    critical.extend(shell_injections(facts))
    high.extend(built_queries(facts))
    return critical, high


_REPORTING = frozenset({"warning", "warn", "error", "exception", "critical", "info",
                        "debug", "log", "print", "exit", "abort", "fail", "set_status",
                        "record_exception"})


_EXTERNAL_FAILURES = frozenset({"request", "http", "api", "timeout", "connection",
                                "connect", "network", "socket", "url"})
"""Words of exception classes raised by calls to other services."""


def _external_failure(node: ast.expr | None) -> bool:
    """Whether an except clause names a failure of an external call (``RequestException``,
    ``httpx.HTTPError``, ``APIError``, ``TimeoutError``...)."""
    if node is None:
        return False
    names = node.elts if isinstance(node, ast.Tuple) else [node]
    return any(_EXTERNAL_FAILURES & set(tokens(dotted(n).rsplit(".", 1)[-1]))
               for n in names)


def _empty(body: list[ast.stmt]) -> bool:
    """A handler body that does nothing: pass, continue, or returns an empty value."""
    for statement in body:
        if isinstance(statement, (ast.Pass, ast.Continue)):
            continue
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue
        if isinstance(statement, ast.Return) and (
                statement.value is None
                or isinstance(statement.value, ast.Constant) and not statement.value.value
                or isinstance(statement.value, (ast.List, ast.Dict, ast.Tuple))
                and not getattr(statement.value, "elts", getattr(statement.value, "keys", []))):
            continue
        return False
    return True


def _handler_is_silent(handler: ast.ExceptHandler) -> bool:
    """A broad ``except`` (or one naming an external-call failure with an empty body)
    that neither re-raises, reports (log, print, exit) nor uses the error: the failure
    disappears and the caller sees a normal result."""
    broad = handler.type is None or (isinstance(handler.type, ast.Name)
                                     and handler.type.id in ("Exception", "BaseException"))
    if not broad and not (_external_failure(handler.type) and _empty(handler.body)):
        return False
    for node in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
        if isinstance(node, ast.Raise):
            return False
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) \
                else getattr(node.func, "id", "")
            if name in _REPORTING:
                return False
        if handler.name and isinstance(node, ast.Name) and node.id == handler.name:
            return False
    return True


def _uses_param(node: ast.expr, call: CallFact, facts: CodeFacts) -> bool:
    function = facts.functions.get(call.function or "")
    if function is None:
        return False
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return bool(names & set(function.params))


def _sessions(facts: CodeFacts) -> set[str]:
    """Names bound to HTTP client sessions created without a timeout."""
    out = set()
    for name, call in facts.assignments.items():
        if call.name.split(".", 1)[0] in _HTTP_CLIENTS and call.last in ("Session",):
            out.add(name)
    return out


def _weak_findings(facts: CodeFacts) -> list[str]:
    found = []
    config = ConfigResolver(facts.tree)
    sessions = _sessions(facts)
    for call in facts.calls:
        client = call.name.split(".", 1)[0]
        if (client in _HTTP_CLIENTS or client in sessions) and call.last in _HTTP:
            timeout = call.keyword("timeout")
            spread = any(kw.arg is None for kw in call.node.keywords)
            if timeout is None and not spread or (
                    timeout is not None and config.value(timeout) is None):
                found.append(f"line {call.line}: {call.name}() without a timeout")
        http = (client in _HTTP_CLIENTS or client in sessions) and call.last in _HTTP
        for kw in call.node.keywords:
            # timeout=None on an HTTP verb is reported above; elsewhere (model clients,
            # connection pools) an explicit None switches the timeout off.
            if kw.arg and "timeout" in tokens(kw.arg) and not (http and kw.arg == "timeout"):
                value = config.value(kw.value)
                if config.known(value) and value is None:
                    found.append(f"line {call.line}: {kw.arg}=None on {call.name}() "
                                 f"disables its timeout")
        if call.name in ("urllib.request.urlopen", "urlopen") and call.keyword("timeout") \
                is None and len(call.node.args) < 3:
            found.append(f"line {call.line}: {call.name}() without a timeout")
        if (call.name == "open" and call.node.args and _formatted(call.node.args[0])
                and _uses_param(call.node.args[0], call, facts)):
            found.append(f"line {call.line}: file path built from a tool argument "
                         f"(path traversal)")
    for node in ast.walk(facts.tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) \
                        and "timeout" in tokens(key.value) \
                        and isinstance(value, ast.Constant) and value.value is None:
                    found.append(f"line {key.lineno}: '{key.value}': None disables a "
                                 f"timeout")
        if isinstance(node, ast.ExceptHandler) and _handler_is_silent(node):
            found.append(f"line {node.lineno}: broad except swallows the error silently")
    for call in facts.calls_named("suppress"):
        if any(isinstance(a, ast.Name) and a.id in ("Exception", "BaseException")
               for a in call.node.args):
            found.append(f"line {call.line}: suppress(Exception) swallows errors silently")
    return found


class RobustnessRule:
    """Untrusted text must not reach interpreters, shells or queries; failures are handled."""

    article = 15
    title = "Accuracy, robustness and cybersecurity"
    checks = (
        "CRITICAL, model code on the host: eval()/exec() of a non-literal, in-process code "
        "runners (Python REPL tools, LocalCommandLineCodeExecutor, PandasQueryEngine, "
        "ShellTool, ...), use_docker=False or code_execution_mode='unsafe' read through "
        "configuration, any *unsafe*/*dangerous* keyword set True",
        "CRITICAL, a command built from values run by a shell: shell=True, os.system, "
        "os.popen, create_subprocess_shell, [bash|sh, -c, value]",
        "HIGH, SQL text formatted with a non-literal value (f-string, %, +, +=, .format; "
        "number casts and ? placeholders are fine) reaching execute() directly, through a "
        "variable, text(), a builder function or a helper's parameter; pickle/marshal "
        "loads; yaml.load without a Loader",
        "MEDIUM, any weak finding: an HTTP call without a timeout (also on a "
        "requests.Session or urlopen), any *timeout* keyword or settings key resolving "
        "to None, a broad except (or an empty one naming an external-call failure) that "
        "neither re-raises, reports nor uses the error, suppress(Exception), open() on a "
        "path formatted from a tool argument",
    )

    def check(self, facts: CodeFacts) -> ArticleResult:
        critical, high = _execution_findings(facts)
        weak = _weak_findings(facts)
        if critical:
            return ArticleResult.violation(self.article, "CRITICAL", *critical, *high, *weak)
        if high:
            return ArticleResult.violation(self.article, "HIGH", *high, *weak)
        if len(weak) >= _WEAK_TO_FAIL:
            return ArticleResult.violation(self.article, "MEDIUM", *weak)
        return ArticleResult.ok(self.article, *(weak or ["no unsafe sinks found"]))
