"""Article 10, where record fields go: personal data read from a record and the sink it
reaches (a model prompt, a tool result, a log, a trace or dataset file).

Within each function a value is *personal* when it reads a personal-data field of a
record (``row["email"]``, ``rec.get("dob")``, ``patient.nhs_number``), serialises a
record class that declares such fields (``asdict(candidate)``), projects a field list
that names them, or is a local assigned from such a value (or a local container such a
value is stored into; the key it is stored under and ``self`` are not tainted). A minimisation call
(redact, mask, pseudonymise, hash, ...) on the way cleans it, as does a call of a module
function whose result is minimised (it returns an allow-listed projection, or a decorator
wraps it in a wrapper that does); so do ``len()`` and
comparisons, which keep nothing of the value, and the reply of a service a payload is
posted or sent to is not the payload. A comprehension carries what its elements read of
each item. Values read from configuration (module constants, ``os.environ``) are
settings, not records.
"""

from __future__ import annotations

import ast
import json
import re
from bisect import bisect_left
from dataclasses import dataclass

from ..facts import CodeFacts, dotted, tokens
from ..flow import scope_nodes
from ..prompts import instruction_texts, is_model_call
from ..surface import agent_tools
from ..values import ModuleValues
from ..vocabulary import LOGGER_METHODS, PROTECTION_TOKENS
from .art10_fields import classify

_CLEANING_CALLS = frozenset({"len", "bool", "isinstance", "type", "id", "hmac", "sha256",
                             "sha1", "blake2b", "md5", "uuid5", "hexdigest"})
_MINIMISING_TOKENS = frozenset({"allowlist", "allowed", "whitelist", "project", "projection",
                                "pick", "minimal", "minimize", "minimise", "sanitise",
                                "sanitize", "deidentify", "generalise", "generalize",
                                "coarsen", "pseudonymize", "pseudonymise", "tokenise",
                                "tokenize"})
"""Helper-name words that say the helper keeps less of a record than it was given."""
_SERIALISERS = frozenset({"asdict", "model_dump", "dict", "vars", "to_dict", "astuple"})
_GENERIC_WORDS = frozenset({"record", "records", "data", "model", "info", "item", "row",
                            "obj", "self", "dto", "schema", "entry"})
_BUSINESS_OWNERS = frozenset({"supplier", "vendor", "merchant", "carrier", "company",
                              "clinic", "store", "shop", "warehouse", "office", "business",
                              "partner", "organisation", "organization", "org", "hospital",
                              "pharmacy", "branch", "site", "sender", "smtp", "team"})
"""Owners whose contact fields describe an organisation, not a person."""
_FILE_SINKS = frozenset({"write", "writelines", "writerow", "writerows", "dump",
                         "add_documents", "insert_one", "insert_many", "to_json", "to_csv",
                         "set_attribute", "set_attributes", "add_event", "log_event",
                         "update_current_trace", "update_current_observation"})
"""Files, datasets, tables and trace spans: anything written to persists."""
_WRITE_CALLS = frozenset({"post", "put", "patch", "send", "send_message", "sendmail",
                          "publish"})
"""Calls that send a payload out and return the receiver's reply."""
_WRITE_VERBS = frozenset({"post", "send", "publish", "sendmail", "upload", "submit"})
"""Words of a method that sends a payload out (``chat_postMessage``, ``send_email``)."""


def _writes(method: str) -> bool:
    """A call that sends a payload out and returns the receiver's reply."""
    return method in _WRITE_CALLS or bool(_WRITE_VERBS & set(tokens(method)))


_INDEX_SINKS = frozenset({"Document", "TextNode", "from_texts", "from_documents",
                          "add_texts", "upsert"})
"""Text put into a retrieval index reaches the model with every query that finds it."""
_LOG_RECEIVERS = frozenset({"log", "logger", "logging", "audit", "_log", "_logger", "LOG",
                            "LOGGER"})
_PROMPT_RECEIVER_TOKENS = frozenset({"prompt", "template", "messages", "history", "chat"})
_RAW_RECORD_CALLS = frozenset({"json", "fetchone", "fetchall", "find_one", "mappings"})
_PERSON_NOUNS = frozenset({"customer", "patient", "employee", "candidate", "applicant",
                           "student", "member", "client", "tenant", "user", "person",
                           "profile", "contact", "policyholder", "claimant", "guest"})
"""Nouns naming a record about a person (a tool returning such a record raw)."""
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
WHOLE_RECORD = "whole record"
_LOADER_VERBS = frozenset({"get", "load", "fetch", "read", "find", "lookup", "query"})


@dataclass(frozen=True)
class Leak:
    """Personal fields reaching a sink."""

    fields: tuple[str, ...]
    sink: str
    line: int


def _is_cleaning(call: ast.Call) -> bool:
    name = dotted(call.func)
    last = name.rsplit(".", 1)[-1]
    return last in _CLEANING_CALLS or name.startswith(("hashlib.", "hmac.")) or bool(
        (PROTECTION_TOKENS | _MINIMISING_TOKENS) & set(tokens(last)))


def _minimises(call: ast.Call, minimisers: set[str]) -> bool:
    """A call of a helper named for minimising (redact, pseudonymise, allow-list, ...)
    or a module function whose result is minimised; not ``len()`` and the like."""
    last = dotted(call.func).rsplit(".", 1)[-1]
    return last in minimisers or bool((PROTECTION_TOKENS | _MINIMISING_TOKENS)
                                      & set(tokens(last)))


def _business(owner: ast.expr) -> bool:
    """``supplier["email"]``, ``clinic.phone``: an organisation's contact data."""
    last = dotted(owner).rsplit(".", 1)[-1]
    return bool({t.rstrip("s") for t in tokens(last)} & _BUSINESS_OWNERS)


def _chain(node: ast.expr) -> bool:
    """``a``, ``a.b``, ``a["b"]``: a path into a value, with no call in it."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant):
            return False
        node = node.value
    return isinstance(node, ast.Name)


def _filters_keys(comp: ast.DictComp | ast.ListComp | ast.SetComp | ast.GeneratorExp) -> bool:
    """``{k: v for k, v in rec.items() if k in ALLOWED}``: an allow- or drop-list."""
    return any(isinstance(n, ast.Compare) and isinstance(n.ops[0], (ast.In, ast.NotIn))
               for g in comp.generators for cond in g.ifs for n in ast.walk(cond))


def _config_owner(owner: ast.expr, values: ModuleValues) -> bool:
    """Whether ``owner`` is configuration (env, an ALL_CAPS or dict-literal constant, a
    settings object) rather than a record."""
    name = dotted(owner)
    head = name.split(".", 1)[0]
    if not head:
        return False
    if "environ" in name or head.isupper() or {"config", "settings", "cfg", "conf"} \
            & set(tokens(head)):
        return True
    return isinstance(values.constants.get(head), ast.Dict)


class _Minimisation:
    """Which values of one function are minimised: an allow-/drop-list comprehension, a
    minimisation call, or a local every assignment of which is one.

    A local's assignments are read once per function, and whether each local holds only
    minimised values is settled for all of them at once, without recursion: a local is
    minimised unless one of its assignments is not (directly, or through another local
    that is not), so ``a = redact(r)``, ``b = a`` makes both minimised, and a local
    assigned only from itself or a cycle of locals keeps what its other assignments say.
    """

    def __init__(self, function: ast.AST) -> None:
        self._function = function
        self._clean: set[str] | None = None

    def __call__(self, expr: ast.expr | None) -> bool:
        if isinstance(expr, ast.Name):
            if self._clean is None:
                self._clean = self._minimised_locals()
            return expr.id in self._clean
        return _directly_minimised(expr)

    def _minimised_locals(self) -> set[str]:
        sources: dict[str, list[ast.expr]] = {}
        for node in ast.walk(self._function):
            if isinstance(node, ast.Assign):
                for name in {t.id for t in node.targets if isinstance(t, ast.Name)}:
                    sources.setdefault(name, []).append(node.value)
        users: dict[str, list[str]] = {}
        dirty: list[str] = []
        for name, values in sources.items():
            for value in values:
                if isinstance(value, ast.Name) and value.id in sources:
                    users.setdefault(value.id, []).append(name)
                elif not _directly_minimised(value):
                    dirty.append(name)
                    break
        unclean: set[str] = set()
        while dirty:  # a local assigned from one that is not minimised is not either
            name = dirty.pop()
            if name not in unclean:
                unclean.add(name)
                dirty.extend(users.get(name, ()))
        return set(sources) - unclean


def _directly_minimised(expr: ast.expr | None) -> bool:
    """An allow-/drop-list comprehension or a minimisation call (not a local)."""
    if isinstance(expr, (ast.DictComp, ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return _filters_keys(expr)
    if isinstance(expr, ast.Call):
        return _is_cleaning(expr)
    return False


def _returns_minimised(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    returns = [n.value for n in ast.walk(function)
               if isinstance(n, ast.Return) and n.value is not None]
    minimised = _Minimisation(function)
    return bool(returns) and all(minimised(r) for r in returns)


def minimising_functions(facts: CodeFacts) -> set[str]:
    """Module functions whose result is minimised: every return is an allow-listed
    projection or a minimisation call, or a module decorator wraps the function in a
    wrapper whose result is (``@view("plan", "price")`` around a record loader)."""
    out = {name for name, f in facts.functions.items() if _returns_minimised(f.node)}
    wraps_minimised: dict[str, bool] = {}
    """Decorator name -> whether its wrapper's result is minimised (each read once)."""
    for name, function in facts.functions.items():
        for decorator in function.decorators:
            outer = facts.functions.get(decorator.rsplit(".", 1)[-1])
            if outer is None or outer.node is function.node:
                continue
            if outer.name not in wraps_minimised:
                wrappers = [n for n in ast.walk(outer.node) if n is not outer.node
                            and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
                wraps_minimised[outer.name] = bool(wrappers) \
                    and _returns_minimised(wrappers[-1])
            if wraps_minimised[outer.name]:
                out.add(name)
    return out


class FieldReader:
    """Personal fields an expression carries, given tainted locals and record classes."""

    def __init__(self, facts: CodeFacts, values: ModuleValues) -> None:
        self.values = values
        self.minimisers = minimising_functions(facts)
        self.record_classes = {
            cls: personal for cls, fields in values.class_fields.items()
            if (personal := [f for f in fields if classify(f)])}
        self._fields_by_class_word: dict[str, set[str]] = {}
        """A word of a record class's name -> the personal fields of the classes named
        with it (what ``_serialised`` looks up, once per word rather than per class)."""
        for cls, personal in self.record_classes.items():
            for word in set(tokens(cls)) - _GENERIC_WORDS:
                self._fields_by_class_word.setdefault(word, set()).update(personal)
        self.json_lists = _json_lists(facts)

    def fields(self, node: ast.AST | None, tainted: dict[str, set[str]]) -> set[str]:
        if node is None:
            return set()
        out: set[str] = set()
        stack: list[ast.AST] = [node]
        while stack:
            item = stack.pop()
            base: ast.expr | None = None
            if isinstance(item, ast.Call):
                last = dotted(item.func).rsplit(".", 1)[-1]
                if _is_cleaning(item) or last in self.minimisers:
                    continue
                if _writes(last) and isinstance(item.func, ast.Attribute):
                    # The reply of a service written to (a message id, a status) is not
                    # the payload sent to it.
                    stack.append(item.func.value)
                    continue
                if last in _SERIALISERS:
                    out.update(self._serialised(item))
                if last == "get" and item.args and isinstance(item.args[0], ast.Constant) \
                        and isinstance(item.args[0].value, str) \
                        and isinstance(item.func, ast.Attribute):
                    base = item.func.value
                    if classify(item.args[0].value) and not _config_owner(base, self.values) \
                            and not _business(base):
                        out.add(item.args[0].value)
                    out.update(self._base(base, tainted))
                    stack.extend(item.args[1:])
                    continue
            elif isinstance(item, ast.Compare):
                continue
            elif isinstance(item, ast.Subscript) and isinstance(item.slice, ast.Constant) \
                    and isinstance(item.slice.value, str):
                base = item.value
                if classify(item.slice.value) and not _config_owner(base, self.values) \
                        and not _business(base):
                    out.add(item.slice.value)
            elif isinstance(item, ast.Attribute):
                base = item.value
                if item.attr != "name" and classify(item.attr) \
                        and not _config_owner(base, self.values) and not _business(base):
                    out.add(item.attr)
            elif isinstance(item, ast.Name) and item.id in tainted:
                out.update(tainted[item.id])
            elif isinstance(item, (ast.DictComp, ast.ListComp, ast.SetComp,
                                   ast.GeneratorExp)):
                if _filters_keys(item):
                    continue
                out.update(self._projection(item))
                out.update(self._comprehension(item, tainted))
                continue
            if base is not None and _chain(base):
                # One field of a record carries that field, not the whole record.
                out.update(self._base(base, tainted))
                continue
            stack.extend(ast.iter_child_nodes(item))
        return out

    def _comprehension(self, comp: ast.DictComp | ast.ListComp | ast.SetComp
                       | ast.GeneratorExp, tainted: dict[str, set[str]]) -> set[str]:
        """What a comprehension's elements carry: its loop variables stand for the items
        of what they iterate, so ``[r["label"] for r in rows]`` carries one field of each
        row and ``[r for r in rows]`` the rows whole; the ``if`` filters keep nothing."""
        scope = dict(tainted)
        for generator in comp.generators:
            carried = self.fields(generator.iter, scope)
            for target in ast.walk(generator.target):
                if isinstance(target, ast.Name):
                    if carried:
                        scope[target.id] = set(carried)
                    else:
                        scope.pop(target.id, None)
        parts = [comp.key, comp.value] if isinstance(comp, ast.DictComp) else [comp.elt]
        return {f for part in parts for f in self.fields(part, scope)}

    def _serialised(self, call: ast.Call) -> set[str]:
        """``asdict(candidate)``, ``customer.model_dump()``: the personal fields of the
        record class the serialised value is named after (``candidate`` ->
        ``Candidate``, ``customer`` -> ``CustomerRecord``)."""
        target = call.args[0] if call.args else (
            call.func.value if isinstance(call.func, ast.Attribute) else None)
        if target is None:
            return set()
        words = set(tokens(dotted(target).rsplit(".", 1)[-1])) - _GENERIC_WORDS
        out: set[str] = set()
        for word in words:
            out.update(self._fields_by_class_word.get(word, ()))
        return out

    @staticmethod
    def _base(base: ast.expr, tainted: dict[str, set[str]]) -> set[str]:
        root = base
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        if isinstance(root, ast.Name):
            return tainted.get(root.id, set()) - {WHOLE_RECORD}
        return set()

    def _projection(self, comp: ast.DictComp | ast.ListComp | ast.SetComp
                    | ast.GeneratorExp) -> set[str]:
        """``{f: row[f] for f in FIELDS}``: the personal fields FIELDS names."""
        out: set[str] = set()
        for generator in comp.generators:
            listed = self._field_list(generator.iter)
            filtered = any(isinstance(c, ast.Compare) for c in generator.ifs)
            if listed and not filtered:
                out.update(f for f in listed if classify(f))
        return out

    def _field_list(self, node: ast.expr) -> list[str]:
        resolved = self.values.resolve(node)
        if isinstance(resolved, (ast.List, ast.Tuple, ast.Set)):
            return [e.value for e in resolved.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        elif isinstance(node, ast.Attribute):
            key = node.attr
        return self.json_lists.get(key, []) if isinstance(key, str) else []


_YAML_KEY = re.compile(r"^\s*([A-Za-z_][\w-]*):\s*(\[(.*)\])?\s*$")
_YAML_ITEM = re.compile(r"^\s*-\s*[\"']?([A-Za-z_][\w.]*)[\"']?\s*$")


def _yaml_lists(text: str) -> dict[str, list[str]]:
    """``key:`` followed by ``- item`` lines, or ``key: [a, b]``, in YAML text."""
    out: dict[str, list[str]] = {}
    key = None
    for line in text.splitlines():
        head = _YAML_KEY.match(line)
        if head:
            key = head.group(1)
            if head.group(2):
                out[key] = [i.strip().strip("\"'") for i in head.group(3).split(",")
                            if i.strip()]
            continue
        item = _YAML_ITEM.match(line)
        if item and key:
            out.setdefault(key, []).append(item.group(1))
    return out


def _json_lists(facts: CodeFacts) -> dict[str, list[str]]:
    """Lists of strings under each key of JSON or YAML configuration text."""
    out: dict[str, list[str]] = {}
    for text, _line in facts.strings:
        stripped = text.strip()
        if not stripped.startswith("{"):
            if "\n" in stripped and ":" in stripped:
                out.update(_yaml_lists(stripped))
            continue
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):  # not JSON, or nested past json's limit
            continue
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                for key, value in item.items():
                    if isinstance(value, list) and all(isinstance(v, str) for v in value):
                        out[key] = value
                    stack.append(value)
    return out


def _sink(call: ast.Call) -> str | None:
    name = dotted(call.func)
    receiver, _, last = name.rpartition(".")
    if is_model_call(call):
        return f"model call {name}"
    if last in LOGGER_METHODS and receiver.rsplit(".", 1)[-1] in _LOG_RECEIVERS:
        return f"log {name}"
    if last in _FILE_SINKS:
        return f"file {name}"
    if last in _INDEX_SINKS:
        return f"index {name}"
    words = set(tokens(receiver.replace(".", "_"))) | set(tokens(last))
    if words & _PROMPT_RECEIVER_TOKENS and (last.startswith(("add", "append", "format"))
                                            or "message" in last):
        return f"prompt {name}"
    return None


def _names_a_person(target: str, value: ast.expr) -> bool:
    """The fetched record is about a person: the local's name, the loader's name or the
    literal parts of the request (a URL path, a table name) use a person noun."""
    words = set(tokens(target))
    for node in ast.walk(value):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            words.update(w.rstrip("s") for w in re.findall(r"[a-z]+", node.value.lower()))
        elif isinstance(node, ast.Call):
            words.update(t.rstrip("s") for t in tokens(dotted(node.func).rsplit(".", 1)[-1]))
    return bool(words & _PERSON_NOUNS)


def _loads_a_person(node: ast.Call) -> bool:
    """``load_patient(id)``, ``crm.get_customer(id)``: a loader of a person record."""
    words = tokens(dotted(node.func).rsplit(".", 1)[-1])
    return len(words) >= 2 and words[0] in _LOADER_VERBS and bool(
        {w.rstrip("s") for w in words[1:]} & _PERSON_NOUNS)


def _about_a_person(name: str, body: list[ast.stmt]) -> bool:
    """A tool about a person record: its name, or the literal parts of its f-strings (a
    URL path) and SQL, use a person noun. Docstrings are not read."""
    words = {t.rstrip("s") for t in tokens(name)}
    for node in (n for stmt in body for n in ast.walk(stmt)):
        if isinstance(node, ast.JoinedStr):
            parts = [v.value for v in node.values
                     if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and "from " in node.value.lower():
            parts = [node.value]
        else:
            continue
        for part in parts:
            words.update(w.rstrip("s") for w in re.findall(r"[a-z]+", part.lower()))
    return bool(words & _PERSON_NOUNS)


def _raw_record(node: ast.expr | None, raw_locals: set[str],
                minimisers: frozenset[str] | set[str] = frozenset()) -> bool:
    """A whole record fetched from an API or a database, returned unprojected (a
    loader whose result is minimised does not return one)."""
    while isinstance(node, ast.Call) and dotted(node.func).rsplit(".", 1)[-1] in (
            "dumps", "str", "dict"):
        if not node.args:
            return False
        node = node.args[0]
    if isinstance(node, ast.Await):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id in raw_locals
    return isinstance(node, ast.Call) and dotted(node.func).rsplit(".", 1)[-1] not in \
        minimisers and (dotted(node.func).rsplit(".", 1)[-1] in _RAW_RECORD_CALLS
                        or _loads_a_person(node))


def _stored_names(target: ast.expr) -> list[ast.Name]:
    """The locals an assignment stores into: the names unpacked into, and the container
    of ``d[k] = v`` / ``d.k = v``; not the key ``k``, nor ``self`` (a value stored on one
    attribute of the instance says nothing of its other attributes)."""
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _stored_names(e)]
    if isinstance(target, ast.Starred):
        return _stored_names(target.value)
    root = target
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    if isinstance(root, ast.Name) and root.id not in ("self", "cls"):
        return [root]
    return []


def leaks(facts: CodeFacts, values: ModuleValues) -> list[Leak]:
    """Personal fields that reach a model, a tool result, a log or a file unminimised."""
    reader = FieldReader(facts, values)
    tools = {f.name for f in agent_tools(facts)}
    out: list[Leak] = []
    # Only scopes that hold a sink (or are tools) can leak: nested functions (wrappers,
    # hooks) are scopes of their own.
    sink_lines = sorted(c.line for c in facts.calls if _sink(c.node))
    scopes: list[tuple[str | None, list[ast.stmt]]] = []
    if any(c.function is None and _sink(c.node) for c in facts.calls):
        scopes.append((None, facts.tree.body))
    for node in values.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        end = node.end_lineno or node.lineno
        first = bisect_left(sink_lines, node.lineno)  # the first sink at or after its start
        if node.name in tools or (first < len(sink_lines) and sink_lines[first] <= end):
            scopes.append((node.name, node.body))
    for name, body in scopes:
        tainted: dict[str, set[str]] = {}
        raw: set[str] = set()
        about_a_person: bool | None = None
        """Whether the tool is about a person record (read once, when a return asks)."""
        nodes = [n for stmt in body for n in scope_nodes(stmt)]
        for _ in range(2):
            for node in nodes:
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    found = reader.fields(node.value, tainted)
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        for t in _stored_names(target):
                            if isinstance(t, ast.Name):
                                if found:
                                    tainted.setdefault(t.id, set()).update(found)
                                if _raw_record(node.value, raw, reader.minimisers):
                                    raw.add(t.id)
                                    if _names_a_person(t.id, node.value):
                                        tainted.setdefault(t.id, set()).add(WHOLE_RECORD)
        # A raw record the code itself hands to a minimisation helper is one it knows
        # holds personal data: handed over raw elsewhere, it leaks whole.
        for node in nodes:
            if isinstance(node, ast.Call) and _minimises(node, reader.minimisers):
                for arg in node.args:
                    if isinstance(arg, ast.Name) and arg.id in raw:
                        tainted.setdefault(arg.id, set()).add(WHOLE_RECORD)
        for node in nodes:
            if isinstance(node, ast.Call):
                sink = _sink(node)
                if sink is None:
                    continue
                found = set()
                for arg in (*node.args, *(k.value for k in node.keywords)):
                    found |= reader.fields(arg, tainted)
                if found:
                    out.append(Leak(tuple(sorted(found)), sink, node.lineno))
            elif isinstance(node, ast.Return) and name in tools:
                found = reader.fields(node.value, tainted)
                if found:
                    out.append(Leak(tuple(sorted(found)), f"result of tool {name}",
                                    node.lineno))
                elif _raw_record(node.value, raw, reader.minimisers):
                    if about_a_person is None:
                        about_a_person = _about_a_person(name, body)
                    if about_a_person:
                        out.append(Leak((WHOLE_RECORD,), f"result of tool {name}",
                                        node.lineno))
    return out


def _filled_after_the_model(facts: CodeFacts) -> set[str]:
    """Placeholders the code itself fills in the model's text afterwards
    (``body.replace("{first_name}", person["first_name"])``) and never formats into a
    prompt: the model writes the placeholder and never sees the value."""
    replaced = {m for c in facts.calls if c.last == "replace" and c.node.args
                and isinstance(c.node.args[0], ast.Constant)
                and isinstance(c.node.args[0].value, str)
                for m in _PLACEHOLDER.findall(c.node.args[0].value)}
    formatted = {k.arg for c in facts.calls for k in c.node.keywords if k.arg} | {
        str(k.value) for c in facts.calls for a in c.node.args if isinstance(a, ast.Dict)
        for k in a.keys if isinstance(k, ast.Constant)}
    return replaced - formatted


def template_leaks(facts: CodeFacts, values: ModuleValues) -> list[Leak]:
    """Prompt templates (task descriptions, instructions, prompt constants) whose
    ``{placeholders}`` name personal fields: the record is filled into the prompt."""
    out = []
    late = _filled_after_the_model(facts)
    for text, line in instruction_texts(facts, values, with_templates=True):
        fields = {p for p in _PLACEHOLDER.findall(text.replace("{{", ""))
                  if classify(p) and p not in late}
        if fields:
            out.append(Leak(tuple(sorted(fields)), "prompt template", line))
    return out

