"""Which functions act on the world, read from what their bodies do.

A function acts when its body performs an outbound write (an HTTP POST/PUT/PATCH/DELETE,
a mail or message send, a payment-SDK ``create``, a verb-first client call such as
``bank.pay(...)``, a client update such as ``apps.patch_namespaced_deployment(...)``, an
SQL UPDATE/DELETE, a subprocess) whose target is consequential: the function's name, the
called method or the literal parts of the request (URL path, SQL) carry a generic verb or
noun of action (pay, refund, send, suspend, revoke, deploy, ...). Writes whose function
drafts, saves, notes, queues or proposes are internal bookkeeping (a person acts on them
later) and do not count, nor do records created in a state a person still has to release
(``"status": "pending_release"``, ``"draft": True``); a payload marked public
(``"public": True``) or an endpoint that sends (``/tickets/email``) reaches people
whatever record it is written on, and a function
named with a leading verb of messaging or paying acts whatever record noun follows
(``send_progress_note``). A function that calls an acting function of the module acts
too, through it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..facts import CodeFacts, FunctionFact, dotted, tokens
from ..flow import body_nodes

_WORD = re.compile(r"[a-z]+")
_HTTP_WRITES = frozenset({"post", "put", "patch", "delete"})
_HTTP_METHOD_LITERALS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_SENDS = frozenset({"send_message", "sendmail", "send_mail", "send_email", "send"})
_SUBPROCESS = frozenset({"run", "call", "check_call", "check_output", "Popen"})
_PLUMBING = frozenset({"ctx", "context", "queue", "agent", "proxy", "runner", "crew",
                       "kernel", "workflow", "handler", "graph", "log", "logger", "logging",
                       "event", "events", "websocket", "ws", "stream"})
"""Receivers and method words of in-process plumbing (agent chats, workflow events,
queues, loggers): sending on them reaches no one outside."""

FINANCIAL = frozenset({
    "pay", "paid", "payment", "payments", "payout", "payouts", "refund", "refunds",
    "transfer", "transfers", "wire", "charge", "charges", "credit", "credits", "disburse",
    "disbursement", "withdraw", "withdrawal", "purchase", "buy", "sell", "trade", "remit",
    "remittance", "reimburse", "reimbursement", "compensation", "compensate",
})
"""Generic words of moving money."""
OUTREACH = frozenset({
    "send", "email", "emails", "mail", "mails", "notify", "notification", "message",
    "messages", "sms", "reply", "publish", "tweet", "announce", "remind",
    "reminder", "reminders", "invite", "broadcast", "dm",
})
"""Generic words of reaching people outside the team."""
ACCOUNT = frozenset({
    "ban", "bans", "suspend", "suspension", "suspensions", "block", "disable",
    "deactivate", "deactivation", "revoke", "delete", "remove", "purge", "terminate",
    "termination", "cancel", "cancellation", "close", "grant", "reset", "lock", "unlock",
    "offboard", "deploy", "deployment", "deployments", "deploys", "release", "rollout",
    "promote", "promotion",
    "rollback", "restart", "scale", "merge", "change", "upgrade", "downgrade", "enrol",
    "enroll", "reject", "decline", "expel", "evict", "wipe", "destroy", "erase", "kill",
    "shutdown", "lifecycle", "roles", "permissions", "password", "mfa", "approve",
    "deny", "prescribe", "hire", "admit", "discharge", "unpublish", "takedown",
})
"""Generic words of changing accounts, access and production systems."""
BOOKKEEPING = frozenset({
    "draft", "drafts", "save", "store", "note", "notes", "record", "log", "queue",
    "enqueue", "propose", "proposal", "suggest", "prepare", "stage", "file", "track",
    "flag", "tag", "annotate", "classify", "route", "assign", "ticket",
    "review", "request",
})
"""Leading verbs (and path words) of internal writes a person acts on later."""
_WEAK_VERBS = frozenset({"change", "close", "remove", "release", "scale", "lifecycle"})
"""Verbs that act on the world only when what they change is an account or access
(``close_account`` acts, ``close_session`` or ``remove_item`` do not)."""
_ACCOUNT_NOUNS = frozenset({
    "account", "accounts", "plan", "subscription", "role", "roles", "permission",
    "permissions", "password", "access", "user", "users", "member", "membership",
    "contract", "limit", "tier", "production", "prod", "service", "deployment"})
_RECORDS = frozenset({"draft", "drafts", "ticket", "tickets", "queue", "case", "cases",
                      "note", "notes", "proposal", "proposals", "proposed", "approval",
                      "approvals", "pending", "requests", "review", "reviews"})
"""Words of a write's target (URL, SQL) that make it a record a person acts on later."""
_REVIEW_RECORDS = frozenset({"draft", "drafts", "approval", "approvals", "review",
                             "reviews", "proposal", "proposals", "pending"})
"""Target words of a record that waits for a person: sending to it asks them."""
_VERBS = FINANCIAL | OUTREACH | ACCOUNT | {"book", "comment"}
DESTRUCTIVE = frozenset({"delete", "purge", "destroy", "wipe", "erase", "drop", "truncate"})
"""Words of destroying data or resources (irreversible, like moving money)."""
_MONEY_HINTS = frozenset({"amount", "eur", "usd", "gbp", "payroll", "ledger", "iban",
                          "salary", "invoice", "book"})
"""Parameter and receiver words that put an action's consequence in money."""
_CLIENT_VERBS = FINANCIAL | OUTREACH | DESTRUCTIVE | frozenset({
    "suspend", "ban", "deactivate", "revoke", "deploy", "disable", "terminate", "grant",
    "comment", "book", "cancel", "merge", "publish", "restart", "rollback", "reboot"})
"""Words of a client method that acts by itself (``bank.pay``, ``mailer.send``,
``inventory.delete``, ``issue.create_comment``)."""
_READS = frozenset({"get", "list", "read", "fetch", "search", "lookup", "find", "load",
                    "query", "check", "count", "describe", "is", "has", "preview", "draft"})
_CLIENT_UPDATES = frozenset({"patch", "replace"})
"""Leading words of a client method that overwrites a resource in another system
(``apps.patch_namespaced_deployment``): a write whose consequence the function's and
the method's words decide, as for an HTTP PATCH."""
_PUBLIC_KEYS = frozenset({"public", "is_public", "visibility"})
"""Payload keys that mark a write as visible to people outside (a public comment on a
ticket is e-mailed to the requester)."""
_HELD_STATES = frozenset({"pending", "draft", "drafts", "proposed", "review", "hold",
                          "held", "unreleased", "approval"})
"""Words of a status a record is created in when a person still has to release it."""


@dataclass(frozen=True)
class Action:
    """A consequential write, attributed to the module function that performs it."""

    function: str
    node: ast.AST
    """The write call, or the call of another acting function."""
    grave: bool
    """It moves money or destroys data."""
    via: str

    @property
    def line(self) -> int:
        return getattr(self.node, "lineno", 0)


def _literal_words(call: ast.Call) -> set[str]:
    words: set[str] = set()
    for node in ast.walk(call):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and len(node.value) < 400:
            words.update(_WORD.findall(node.value.lower()))
    return words


def _target_words(call: ast.Call) -> set[str]:
    """Words of the write's target: URL paths and SQL text, not payload keys."""
    words: set[str] = set()
    for node in ast.walk(call):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                "/" in node.value or re.match(r"\s*(insert|update|delete)\b", node.value,
                                              re.IGNORECASE)):
            words.update(_WORD.findall(node.value.lower()))
    return words


def _is_model_call(call: ast.Call) -> bool:
    return any(kw.arg in ("model", "messages", "prompt") for kw in call.keywords)


def _write_kind(call: ast.Call) -> str | None:
    """What kind of outbound write ``call`` is, or None."""
    name = dotted(call.func)
    last = name.rsplit(".", 1)[-1]
    receiver = name.rpartition(".")[0]
    if _is_model_call(call):
        return None
    if receiver and last in _HTTP_WRITES:
        return f"HTTP {last.upper()}"
    first = call.args[0] if call.args else None
    method = next((kw.value for kw in call.keywords if kw.arg == "method"), first)
    if isinstance(method, ast.Constant) and method.value in _HTTP_METHOD_LITERALS:
        return f"HTTP {method.value}"
    if receiver and last in _SENDS:
        return "send"
    if receiver and last == "create" and set(tokens(receiver.replace(".", "_"))) & _VERBS:
        return "create"
    plumbing = set(tokens(receiver.replace(".", "_"))) | set(tokens(last))
    words = tokens(last)
    if receiver and not plumbing & _PLUMBING and words and words[0] not in _READS \
            and set(words) & _CLIENT_VERBS:
        return "client call"
    if receiver and not plumbing & _PLUMBING and words[:1] and words[0] in _CLIENT_UPDATES:
        return "client update"
    if last in ("execute", "executemany") and first is not None:
        sql = " ".join(_literal_words(call))
        if re.match(r"\s*(update|delete)\b", sql):
            return "SQL write"
    if receiver == "subprocess" and last in _SUBPROCESS:
        return "subprocess"
    return None


def is_outbound_write(call: ast.Call) -> bool:
    """Whether ``call`` writes to another system (what it says is then no one's answer:
    a retry loop re-reading a send's response waits for nobody)."""
    return _write_kind(call) is not None


def _words_of(function: FunctionFact, call: ast.Call) -> set[str]:
    words = set(tokens(function.name)) | _literal_words(call)
    name = dotted(call.func)
    words.update(tokens(name.replace(".", "_")))
    return words - {"post", "put", "patch", "self", "client", "session", "requests", "httpx"}


LocalDicts = dict[str, list[ast.Dict]]
"""A local's name -> the dicts (and the dicts nested in them) assigned to it."""


def _local_dicts(function: FunctionFact) -> LocalDicts:
    """The dicts ``function`` binds to its locals, read in one walk (what a write's
    payload may name)."""
    out: LocalDicts = {}
    for node in ast.walk(function.node):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            dicts = [n for n in ast.walk(node.value) if isinstance(n, ast.Dict)]
            for name in {t.id for t in node.targets if isinstance(t, ast.Name)}:
                out.setdefault(name, []).extend(dicts)
    return out


def _payload(call: ast.Call, local_dicts: LocalDicts) -> list[tuple[str, ast.expr]]:
    """Literal-keyed entries of the dicts a write sends: written in the call, or bound to
    a local (``local_dicts``, the function's) that the call passes."""
    passed = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)}
    dicts = [n for n in ast.walk(call) if isinstance(n, ast.Dict)]
    for name in passed:
        dicts.extend(local_dicts.get(name, ()))
    return [(k.value, v) for d in dicts for k, v in zip(d.keys, d.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def _public(entries: list[tuple[str, ast.expr]]) -> bool:
    """The payload marks the write as visible outside (``"public": True``)."""
    return any(key in _PUBLIC_KEYS and isinstance(value, ast.Constant)
               and value.value in (True, "public") for key, value in entries)


def _held(entries: list[tuple[str, ast.expr]]) -> bool:
    """The payload creates the record in a state a person still has to release
    (``"status": "PENDING_RELEASE"``, ``"draft": True``)."""
    for key, value in entries:
        if not isinstance(value, ast.Constant):
            continue
        if key == "draft" and value.value is True:
            return True
        if key in ("status", "state") and isinstance(value.value, str) \
                and set(_WORD.findall(value.value.lower())) & _HELD_STATES:
            return True
    return False


def _classify(function: FunctionFact, call: ast.Call,
              local_dicts: LocalDicts) -> tuple[bool, bool]:
    """(consequential, grave) for a write inside ``function`` (``local_dicts``: its
    :func:`_local_dicts`): grave when it moves money or destroys data, the irreversible
    cases."""
    name = tokens(function.name)
    if name[:1] and name[0] in BOOKKEEPING:
        return False, False
    entries = _payload(call, local_dicts)
    # A public comment on a ticket reaches the requester, whatever record it sits on.
    if _public(entries):
        return True, False
    if _held(entries):
        return False, False
    # A function whose leading verb reaches people or moves money acts whatever it
    # calls the thing it sends (``send_progress_note`` is an email, not a note).
    named_nouns = set() if name[:1] and name[0] in OUTREACH | FINANCIAL else set(name)
    target = _target_words(call)
    # An endpoint that sends (``/tickets/email``, ``/cases/{id}/reply``) reaches people
    # whatever record it hangs off; one that messages reviewers (``/approvals/notify``)
    # asks them.
    sends = bool(target & OUTREACH) and not target & _REVIEW_RECORDS
    if (target | named_nouns) & _RECORDS and not sends:
        return False, False
    words = _words_of(function, call)
    verbs = words & _VERBS
    if not verbs or verbs <= _WEAK_VERBS and not words & _ACCOUNT_NOUNS:
        return False, False
    hints = {t for p in function.params for t in tokens(p)} | words
    # A message about money (a payment reminder) is still a message: money hints only
    # make a non-message action grave.
    money = bool(hints & _MONEY_HINTS) and not words & OUTREACH
    return True, bool(words & (FINANCIAL | DESTRUCTIVE)) or money


def _local_callee(call: ast.Call, facts: CodeFacts) -> str | None:
    """The module function ``call`` invokes (``f(...)`` or ``self.f(...)``), if any."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in facts.functions:
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
            and func.value.id in ("self", "cls") and func.attr in facts.functions:
        return func.attr
    return None


def _function_calls(facts: CodeFacts) -> dict[str, list[ast.Call]]:
    """Module function -> the calls its body makes (decorators excluded)."""
    return {f.name: [n for n in body_nodes(f.node) if isinstance(n, ast.Call)]
            for f in facts.functions.values()}


def local_calls(facts: CodeFacts, made: dict[str, list[ast.Call]] | None = None,
                ) -> dict[str, list[tuple[str, ast.Call]]]:
    """Module function -> the module functions it calls, with each call."""
    made = made if made is not None else _function_calls(facts)
    out: dict[str, list[tuple[str, ast.Call]]] = {}
    for name, calls in made.items():
        for node in calls:
            callee = _local_callee(node, facts)
            if callee is not None and callee != name:
                out.setdefault(name, []).append((callee, node))
    return out


def acting_functions(facts: CodeFacts) -> dict[str, list[Action]]:
    """Module function name -> its consequential writes (direct, or through callees)."""
    direct: dict[str, list[Action]] = {}
    made = _function_calls(facts)
    calls = local_calls(facts, made)
    # Helpers that perform the write generically (``_call(method, url)``) get their
    # meaning from the caller: a write in the helper plus action words at the call site.
    writers: set[str] = set()
    local_dicts: dict[str, LocalDicts] = {}

    def dicts_of(function: FunctionFact) -> LocalDicts:
        if function.name not in local_dicts:
            local_dicts[function.name] = _local_dicts(function)
        return local_dicts[function.name]

    for function in facts.functions.values():
        for node in made[function.name]:
            kind = _write_kind(node)
            if kind is None:
                continue
            writers.add(function.name)
            consequential, grave = _classify(function, node, dicts_of(function))
            if consequential:
                direct.setdefault(function.name, []).append(
                    Action(function.name, node, grave, f"{kind} {dotted(node.func)}"))
    acting = dict(direct)
    recorded = {name: {id(a.node) for a in actions} for name, actions in acting.items()}
    """The calls already recorded as each function's actions (a set: a function making
    thousands of such calls is not searched once per call)."""
    for _ in range(3):
        changed = False
        for caller, outgoing in calls.items():
            for callee, node in outgoing:
                if callee in acting and caller != callee:
                    grave = any(a.grave for a in acting[callee])
                    action = Action(caller, node, grave, f"calls {callee}()")
                elif callee in writers:
                    function = facts.functions[caller]
                    consequential, grave = _classify(function, node, dicts_of(function))
                    if not consequential:
                        continue
                    action = Action(caller, node, grave, f"write through {callee}()")
                else:
                    continue
                known = recorded.setdefault(caller, set())
                if id(node) not in known:
                    known.add(id(node))
                    acting.setdefault(caller, []).append(action)
                    changed = True
        if not changed:
            break
    return acting
