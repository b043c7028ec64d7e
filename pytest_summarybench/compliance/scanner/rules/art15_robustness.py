"""Article 15, accuracy, robustness and cybersecurity: model output and user input are
untrusted data.

Model-written text must not reach an interpreter, a shell or a query string unchecked;
model-written code runs only in a sandbox; calls to other services have timeouts and
failures are handled rather than swallowed.
"""

from __future__ import annotations

import ast

from ..base import ArticleResult
from ..facts import CallFact, CodeFacts

_SHELL_CALLS = frozenset({"os.system", "os.popen", "commands.getoutput"})
_SUBPROCESS = frozenset({"run", "call", "check_call", "check_output", "Popen"})
_REPL_TOOLS = frozenset({"PythonREPLTool", "PythonREPL", "PythonAstREPLTool",
                         "create_python_agent", "LocalCommandLineCodeExecutor"})
_SQL_METHODS = frozenset({"execute", "executemany", "executescript", "raw", "read_sql"})
_HTTP = frozenset({"get", "post", "put", "patch", "delete", "request", "head"})
_HTTP_CLIENTS = frozenset({"requests", "httpx", "urllib3"})
_WEAK_TO_FAIL = 2
"""Weak findings (no timeout, swallowed error, path from input) needed for a violation."""


def _formatted(node: ast.expr) -> bool:
    """A string built from values: f-string, ``+``/``%`` concatenation or ``.format()``."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return True
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format")


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _dict_value(node: ast.expr | None, key: str) -> ast.expr | None:
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values, strict=True):
            if isinstance(k, ast.Constant) and k.value == key:
                return v
    return None


def _execution_findings(facts: CodeFacts) -> tuple[list[str], list[str]]:
    """(critical, high) findings: code execution and injection sinks."""
    critical: list[str] = []
    high: list[str] = []
    for call in facts.calls:
        if call.name in ("eval", "exec"):
            critical.append(f"line {call.line}: {call.name}() on dynamic input")
        elif call.last in _REPL_TOOLS:
            critical.append(f"line {call.line}: {call.last} executes model code on the host")
        elif call.name in _SHELL_CALLS:
            high.append(f"line {call.line}: {call.name}() runs a shell command")
        elif call.last in _SUBPROCESS and call.name.startswith("subprocess") \
                and _is_true(call.keyword("shell")):
            high.append(f"line {call.line}: {call.name}(shell=True)")
        elif call.last in _SQL_METHODS and call.node.args and _formatted(call.node.args[0]):
            high.append(f"line {call.line}: SQL built by string formatting in {call.name}()")
        elif call.name in ("pickle.loads", "pickle.load", "marshal.loads"):
            high.append(f"line {call.line}: {call.name}() deserialises untrusted data")
        elif call.name == "yaml.load" and call.keyword("Loader") is None:
            high.append(f"line {call.line}: yaml.load() without a safe Loader")
        use_docker = _dict_value(call.keyword("code_execution_config"), "use_docker")
        if isinstance(use_docker, ast.Constant) and use_docker.value is False:
            critical.append(f"line {call.line}: code_execution_config use_docker=False runs "
                            f"model code on the host")
        mode = call.keyword("code_execution_mode")
        if (_is_true(call.keyword("allow_code_execution")) and isinstance(mode, ast.Constant)
                and mode.value == "unsafe"):
            critical.append(f"line {call.line}: allow_code_execution with "
                            f"code_execution_mode='unsafe' (no sandbox)")
        for flag in ("allow_dangerous_code", "allow_dangerous_requests"):
            if _is_true(call.keyword(flag)):
                critical.append(f"line {call.line}: {flag}=True on {call.name}")
    return critical, high


def _handler_is_silent(handler: ast.ExceptHandler) -> bool:
    broad = handler.type is None or (isinstance(handler.type, ast.Name)
                                     and handler.type.id in ("Exception", "BaseException"))
    if not broad:
        return False
    for node in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
        if isinstance(node, ast.Raise):
            return False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("warning", "error", "exception", "critical", "info"):
            return False
    return True


def _uses_param(node: ast.expr, call: CallFact, facts: CodeFacts) -> bool:
    function = facts.functions.get(call.function or "")
    if function is None:
        return False
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return bool(names & set(function.params))


def _weak_findings(facts: CodeFacts) -> list[str]:
    found = []
    for call in facts.calls:
        client = call.name.split(".", 1)[0]
        if client in _HTTP_CLIENTS and call.last in _HTTP and call.keyword("timeout") is None:
            found.append(f"line {call.line}: {call.name}() without a timeout")
        if (call.name == "open" and call.node.args and _formatted(call.node.args[0])
                and _uses_param(call.node.args[0], call, facts)):
            found.append(f"line {call.line}: file path built from a tool argument "
                         f"(path traversal)")
    for node in ast.walk(facts.tree):
        if isinstance(node, ast.ExceptHandler) and _handler_is_silent(node):
            found.append(f"line {node.lineno}: broad except swallows the error silently")
    return found


class RobustnessRule:
    """Untrusted text must not reach interpreters, shells or queries; failures are handled."""

    article = 15
    title = "Accuracy, robustness and cybersecurity"
    checks = (
        "CRITICAL: eval()/exec(), Python REPL tools, autogen use_docker=False, CrewAI "
        "code_execution_mode='unsafe', allow_dangerous_code/requests=True",
        "HIGH: os.system/os.popen, subprocess with shell=True, SQL built by f-string, "
        "concatenation or .format(), pickle/marshal loads, yaml.load without Loader",
        "MEDIUM when at least two weak findings: HTTP calls without timeout, broad except "
        "that neither logs nor re-raises, open() on a path built from a tool argument",
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
