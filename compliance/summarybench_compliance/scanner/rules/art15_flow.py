"""Untrusted text reaching a query or a shell, followed through the syntax tree.

A query string is *built* when SQL text is formatted with a value that is not a literal
or a number cast (``f"... WHERE sku = '{sku}'"``, ``"..." % x``, ``"...".format(x)``); a
sanitising helper around the value does not make it a bound parameter. The built string
is followed to the call that runs it: directly, through a variable, through ``text()``,
through a module function that returns it, or into a helper whose parameter reaches
``execute`` (then the helper's call site is the finding). Shell commands are followed the
same way: a formatted command with ``shell=True``, ``os.system``/``os.popen``, or an
argument list that starts ``bash -c``/``sh -c``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ..facts import CodeFacts, FunctionFact, dotted

_SQL = re.compile(r"\b(select|insert\s+into|update|delete\s+from)\b[\s\S]*"
                  r"\b(from|where|set|values)\b|\bwhere\s+[\w.]+\s*(=|<|>|like\b|in\b)",
                  re.IGNORECASE)
"""Text that reads as an SQL statement, or as the WHERE clause of one."""
_SQL_RUNNERS = frozenset({"execute", "executemany", "executescript", "raw", "read_sql",
                          "read_sql_query", "exec_driver_sql", "fetch", "fetchrow",
                          "fetchval"})
"""Methods that run query text (DB-API cursors, SQLAlchemy, pandas, asyncpg)."""
_SAFE_CASTS = frozenset({"int", "float", "len", "round", "bool", "abs"})
_SHELLS = frozenset({"bash", "sh", "zsh", "cmd", "powershell", "pwsh"})
_WRAPPERS = frozenset({"text", "TextClause"})


def _literal_text(node: ast.expr) -> str:
    parts = []
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            parts.append(child.value)
    return " ".join(parts)


def _dynamic(value: ast.expr) -> bool:
    """A formatted value that may carry untrusted text (not a literal or number cast)."""
    if isinstance(value, ast.Constant):
        return False
    if isinstance(value, ast.Call):
        name = dotted(value.func).rsplit(".", 1)[-1]
        if name in _SAFE_CASTS:
            return False
        # ", ".join("?" * n) / ",".join(["%s"] * n): placeholders, not values
        if name == "join" and any(isinstance(c, ast.Constant) and c.value in ("?", "%s")
                                  for c in ast.walk(value)):
            return False
    return True


def formatted_values(node: ast.expr) -> list[ast.expr]:
    """The values formatted into a string expression (empty if it is not formatted)."""
    if isinstance(node, ast.JoinedStr):
        return [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) \
            and isinstance(node.left, (ast.Constant, ast.JoinedStr)):
        right = node.right
        return list(right.elts) if isinstance(right, ast.Tuple) else [right]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*formatted_values(node.left), *formatted_values(node.right),
                *(s for s in (node.left, node.right)
                  if not isinstance(s, (ast.Constant, ast.JoinedStr, ast.BinOp)))]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "format" and not isinstance(node.func.value, ast.Call):
        return [*node.args, *(kw.value for kw in node.keywords)]
    return []


def _built(node: ast.expr, kind: re.Pattern[str] | None) -> bool:
    values = formatted_values(node)
    if not values or not any(_dynamic(v) for v in values):
        return False
    return kind is None or bool(kind.search(_literal_text(node)))


class _Scopes:
    """The :class:`_Scope` of each function, built once per scan."""

    def __init__(self, facts: CodeFacts) -> None:
        self.facts = facts
        self._built: dict[str | None, _Scope] = {}

    def of(self, function: FunctionFact | None) -> _Scope:
        key = function.name if function is not None else None
        if key not in self._built:
            self._built[key] = _Scope(function, self)
        return self._built[key]


class _Scope:
    """Assignments and returns of one function, to follow a name back to its value."""

    def __init__(self, function: FunctionFact | None, scopes: _Scopes) -> None:
        self.scopes = scopes
        self.assigned: dict[str, list[ast.expr]] = {}
        self.returned: list[ast.expr] = []
        """The values it returns, in walk order."""
        self._builds: dict[tuple[object, str, int], bool] = {}
        """(the name, or the node's id; the pattern; depth) -> what ``builds`` found: a
        name assigned many times from names assigned many times is followed once per
        depth, not once per path."""
        if function is not None:
            for node in ast.walk(function.node):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            self.assigned.setdefault(target.id, []).append(node.value)
                elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                    self.assigned.setdefault(node.target.id, []).append(
                        ast.BinOp(left=ast.Constant(""), op=ast.Add(), right=node.value))
                elif isinstance(node, ast.Return) and node.value is not None:
                    self.returned.append(node.value)

    def builds(self, node: ast.expr, kind: re.Pattern[str], depth: int = 0) -> bool:
        """Whether ``node`` evaluates to text of ``kind`` formatted with dynamic values."""
        key = (node.id if isinstance(node, ast.Name) else id(node), kind.pattern, depth)
        if key not in self._builds:
            self._builds[key] = self._follow(node, kind, depth)
        return self._builds[key]

    def _follow(self, node: ast.expr, kind: re.Pattern[str], depth: int) -> bool:
        if depth > 4:
            return False
        if _built(node, kind):
            return True
        if isinstance(node, ast.Name):
            values = self.assigned.get(node.id, [])
            if any(self.builds(v, kind, depth + 1) for v in values):
                return True
            # sql = "SELECT ..."; sql += f"WHERE x = '{x}'": the text is SQL as a whole.
            text = " ".join(_literal_text(v) for v in values)
            return bool(kind.search(text)) and any(_built(v, None) for v in values)
        if isinstance(node, ast.Call):
            name = dotted(node.func).rsplit(".", 1)[-1]
            if name in _WRAPPERS and node.args:
                return self.builds(node.args[0], kind, depth + 1)
            builder = self.scopes.facts.functions.get(name)
            if builder is not None and depth < 2:
                scope = self.scopes.of(builder)
                return any(scope.builds(r, kind, depth + 1) for r in scope.returned)
        return False


def _param_index(function: FunctionFact, name: str) -> int | None:
    args = [a.arg for a in (*function.node.args.posonlyargs, *function.node.args.args)]
    if args and args[0] in ("self", "cls"):
        args = args[1:]
    return args.index(name) if name in args else None


def _calls_of(facts: CodeFacts, name: str) -> Iterator[tuple[ast.Call, FunctionFact | None]]:
    for call in facts.calls:
        if call.last == name:
            yield call.node, facts.functions.get(call.function or "")


def built_queries(facts: CodeFacts) -> list[str]:
    """Findings: query text built by formatting that reaches a call that runs it."""
    found: list[str] = []
    scope = _Scopes(facts).of
    for call in facts.calls:
        if call.last not in _SQL_RUNNERS or not call.node.args:
            continue
        query = call.node.args[0]
        function = facts.functions.get(call.function or "")
        if scope(function).builds(query, _SQL):
            found.append(f"line {call.line}: SQL built by string formatting reaches "
                         f"{call.name}()")
            continue
        # The query is a parameter of a helper: look at what the helper's callers pass.
        if isinstance(query, ast.Name) and function is not None:
            index = _param_index(function, query.id)
            for site, caller in _calls_of(facts, function.name):
                passed = [kw.value for kw in site.keywords if kw.arg == query.id]
                if index is not None and index < len(site.args):
                    passed.append(site.args[index])
                if any(scope(caller).builds(p, _SQL) for p in passed):
                    found.append(f"line {site.lineno}: SQL built by string formatting is "
                                 f"passed to {function.name}(), which runs it with "
                                 f"{call.name}()")
    return found


def _shell_command(call: ast.expr, scope: _Scope) -> bool:
    """Whether a command reaching a shell is built from values."""
    if isinstance(call, (ast.List, ast.Tuple)):
        elts = call.elts
        head = elts[0].value if elts and isinstance(elts[0], ast.Constant) else None
        if isinstance(head, str) and head.rsplit("/", 1)[-1] in _SHELLS \
                and any(isinstance(e, ast.Constant) and e.value == "-c" for e in elts):
            return any(not isinstance(e, ast.Constant) for e in elts)
        return False
    return isinstance(call, ast.Name) and call.id not in scope.assigned or \
        scope.builds(call, re.compile(".*", re.DOTALL))


def shell_injections(facts: CodeFacts) -> list[str]:
    """Findings: commands built from values that run through a shell."""
    found = []
    scopes = _Scopes(facts)
    for call in facts.calls:
        if not call.node.args:
            continue
        command = call.node.args[0]
        shell_kw = call.keyword("shell")
        via_shell = isinstance(shell_kw, ast.Constant) and shell_kw.value is True
        process = call.name.startswith(("subprocess", "asyncio"))
        shell = call.name in ("os.system", "os.popen", "commands.getoutput") or (
            process and via_shell) or call.last == "create_subprocess_shell"
        if not (shell or process):
            continue
        scope = scopes.of(facts.functions.get(call.function or ""))
        if shell:
            if _shell_command(command, scope):
                found.append(f"line {call.line}: a command built from values runs "
                             f"through a shell ({call.name})")
        elif isinstance(command, (ast.List, ast.Tuple)) \
                and _shell_command(command, scope):
            found.append(f"line {call.line}: a value is run as a shell script "
                         f"({call.name} with -c)")
    return found
