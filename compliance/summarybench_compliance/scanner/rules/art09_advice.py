"""Article 9, advice to people: a health, finance or legal assistant has an enforced
guardrail.

The domain is read from what the model is told to do (system prompts, agent
instructions, goals, backstories, task descriptions), not from any string in the module:
record data that mentions a diagnosis does not make a summariser an advisor. The
guardrail must be code that runs: a moderation call, a guardrail registered with the
framework, or a branch next to the model call that replaces or refuses the answer (with a
fixed text, or through a referral helper that hands the question to a person and answers
with one), in a hook the framework runs or in a check the answer is handed to. A
docstring, a prompt sentence, an unread setting promising screening or a guardrail
function no agent is given is not one.
"""

from __future__ import annotations

import ast
import re

from ..facts import CodeFacts, dotted, tokens
from ..flow import is_used
from ..prompts import instruction_texts, is_model_call
from ..values import ModuleValues, is_none

ADVICE = re.compile(
    r"\b(medicines?|medications?|dos(e|es|ing|age)|symptoms?|self-care|over-the-counter"
    r"|prescriptions?|side effects|health advice|medical advice|mental health"
    r"|therap(y|ist)|pregnan\w*"
    r"|invest(ing|ment|ments|or|ors)?|portfolios?|stock picks|stocks to buy|stock market"
    r"|equities|crypto\w*|pensions?|retirement|mortgages?|financial advice|tax advice"
    r"|debt advice|asset allocation|savings (coach\w*|advice|plans?)"
    r"|(funds|shares|stocks|bonds|etfs?|securities) to (buy|sell|hold)"
    r"|(buy|sell)(ing)? (funds|shares|stocks|bonds|etfs?|securities)"
    r"|legal advice|lawsuits?|legal rights|tenancy|lawyer|solicitor|attorney)\b",
    re.IGNORECASE)
"""Words that put what the model is told to do in a health, finance or legal advice
domain, where a wrong answer can harm the person who follows it."""
_FORBIDDEN = re.compile(r"\b(not|never|no|don't|do not|avoid|without)\b", re.IGNORECASE)
"""An advice word the model is told not to give ("never recommend investments")."""
_CLAUSE_BREAK = re.compile(r"[.;,:\n!?]|\bbut\b", re.IGNORECASE)
_EMPTINESS_CALLS = frozenset({"strip", "lower", "upper", "len", "isinstance", "get", "bool"})
"""Calls that only test that input is present or well-formed: not a guardrail."""
_HOOK_DECORATORS = frozenset({"filter", "hook", "middleware", "before_model", "after_model",
                              "after_agent", "on_output"})
GUARDRAIL_KEYWORDS = frozenset({"guardrail", "guardrails", "input_guardrails",
                                "output_guardrails"})
_ANSWER_KEYS = frozenset({"content", "text", "output", "answer", "reply", "message"})
"""Keys under which a message dict carries its text."""
_GUARD_CALL_TOKENS = frozenset({"moderation", "moderations", "moderate", "guardrail",
                                "guardrails", "rails"})


def _sentence_before(text: str, end: int) -> str:
    """The clause an advice word sits in, up to the word ("never diagnose, but explain
    medication" -> " but explain ")."""
    return _CLAUSE_BREAK.split(text[:end])[-1]


def _fixed_answer(value: ast.expr | None, facts: CodeFacts, values: ModuleValues,
                  depth: int = 0) -> bool:
    """A fixed text, or a call of a module function (a referral path: hand the question
    to a person, then answer with a fixed text) whose every return is one."""
    resolved = values.resolve(value)
    if isinstance(resolved, (ast.Constant, ast.JoinedStr)):
        return True
    if isinstance(value, ast.IfExp):
        return _fixed_answer(value.body, facts, values, depth) \
            and _fixed_answer(value.orelse, facts, values, depth)
    if isinstance(value, ast.Dict):
        # ``{**message, "content": HANDOFF}``: the message passed on with its text replaced.
        return any(isinstance(k, ast.Constant) and k.value in _ANSWER_KEYS
                   and _fixed_answer(v, facts, values, depth)
                   for k, v in zip(value.keys, value.values, strict=True))
    if not isinstance(value, ast.Call) or depth > 1:
        return False
    helper = facts.functions.get(dotted(value.func).rsplit(".", 1)[-1])
    if helper is None:
        return False
    returns = [n.value for n in ast.walk(helper.node) if isinstance(n, ast.Return)]
    return bool(returns) and all(_fixed_answer(r, facts, values, depth + 1) for r in returns)


def _examines(node: ast.AST) -> bool:
    """A call that examines something (not only that input is present)."""
    if isinstance(node, ast.Await):
        node = node.value
    return isinstance(node, ast.Call) and dotted(node.func).rsplit(".", 1)[-1] \
        not in _EMPTINESS_CALLS


def _verdicts(body: list[ast.stmt]) -> set[str]:
    """Locals assigned the result of an examining call (a classifier's verdict,
    ``any(term in text for term in TERMS)``)."""
    return {t.id for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Assign)
            and _examines(n.value) for t in n.targets if isinstance(t, ast.Name)}


def _checks(test: ast.expr, verdicts: set[str]) -> bool:
    """A test that examines something (a call, a comparison, or a verdict one computed),
    not only that input is present."""
    return any(_examines(n)
               or (isinstance(n, ast.Compare) and not all(
                   isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops))
               or (isinstance(n, ast.Name) and n.id in verdicts)
               for n in ast.walk(test))


def _refusal_branch(body: list[ast.stmt], values: ModuleValues,
                    facts: CodeFacts) -> bool:
    """An ``if`` that checks something and returns or sets a fixed answer (directly or
    through a referral helper), or raises (a test that only checks the input is present
    does not count); or its mirror image, a check that lets the answer through early,
    followed by a fixed answer for everything else."""
    verdicts = _verdicts(body)
    for stmt in body:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.If) or not _checks(node.test, verdicts):
                continue
            for inner in node.body:
                if isinstance(inner, ast.Raise):
                    return True
                value = inner.value if isinstance(inner, (ast.Return, ast.Assign)) else None
                if value is not None and _fixed_answer(value, facts, values):
                    return True
    for block in (body, *(getattr(n, "body", []) for s in body for n in ast.walk(s)
                          if isinstance(n, (ast.For, ast.While, ast.With, ast.Try)))):
        for i, stmt in enumerate(block):
            if isinstance(stmt, ast.If) and _checks(stmt.test, verdicts) and stmt.body \
                    and isinstance(stmt.body[-1], ast.Return) and any(
                        isinstance(after, ast.Return) and _fixed_answer(after.value, facts,
                                                                        values)
                        for after in block[i + 1:]):
                return True
    return False


def _unattached_guardrail(facts: CodeFacts, function: str | None) -> bool:
    """A function declared a guardrail by its decorator (``@output_guardrail``) that no
    agent is given: declaring it does not attach it."""
    fact = facts.functions.get(function or "")
    return fact is not None and any("guardrail" in tokens(d.rsplit(".", 1)[-1])
                                    for d in fact.decorators) \
        and not is_used(facts, fact.name)


def _runs(facts: CodeFacts, function: str | None, drivers: set[str]) -> bool:
    """Code in ``function`` runs: module level, a function that is called, handed over,
    registered by a decorator, or that itself calls the model; not a guardrail-decorated
    function nothing attaches."""
    if _unattached_guardrail(facts, function):
        return False
    if function is None or function in drivers or is_used(facts, function):
        return True
    fact = facts.functions.get(function)
    return fact is not None and bool(fact.decorators)


def _answer_checks(facts: CodeFacts, drivers: set[str]) -> set[str]:
    """Module functions a model-calling function hands the model's answer to
    (``draft = agent.run(q); return review(draft)``): checks applied to the answer."""
    out: set[str] = set()
    for name in drivers:
        fact = facts.functions.get(name)
        if fact is None:
            continue
        answers: set[str] = set()
        for node in ast.walk(fact.node):
            if isinstance(node, ast.Assign) and any(
                    isinstance(n, ast.Call) and is_model_call(n) for n in ast.walk(node.value)):
                answers |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.walk(fact.node):
            if isinstance(node, ast.Call) and any(
                    isinstance(a, ast.Name) and a.id in answers
                    for a in (*node.args, *(k.value for k in node.keywords))):
                out.add(dotted(node.func).rsplit(".", 1)[-1])
    return out


def enforced_guardrails(facts: CodeFacts, values: ModuleValues) -> list[str]:
    """Guardrails that run: moderation calls in code that runs, non-empty framework
    guardrail registrations, and refusal branches in functions that call the model or are
    handed to the framework as hooks (a decorated guardrail never registered does not
    count)."""
    found = []
    drivers = {c.function for c in facts.calls if c.function and is_model_call(c.node)}
    for call in facts.calls:
        if _GUARD_CALL_TOKENS & set(tokens(call.name.replace(".", "_"))) \
                and _runs(facts, call.function, drivers):
            found.append(f"line {call.line}: {call.name}()")
        for kw in call.node.keywords:
            value = values.resolve(kw.value)
            if kw.arg in GUARDRAIL_KEYWORDS and not is_none(value) and not (
                    isinstance(value, (ast.List, ast.Tuple)) and not value.elts):
                found.append(f"line {call.line}: {kw.arg}=")
    checked = _answer_checks(facts, drivers)
    for function in facts.functions.values():
        if _unattached_guardrail(facts, function.name):
            continue
        calls_model = function.name in drivers or any(
            c.rsplit(".", 1)[-1] in drivers for c in function.callees)
        # A hook or filter handed to the framework runs around the model call; a check
        # the answering function hands the answer to runs on every answer.
        registered = function.referenced or function.name in checked or any(
            d.rsplit(".", 1)[-1] in _HOOK_DECORATORS for d in function.decorators)
        if (calls_model or registered) and _refusal_branch(function.node.body, values, facts):
            found.append(f"line {function.line}: {function.name} refuses or replaces "
                         f"answers")
    return found


def unguarded_advice(facts: CodeFacts, values: ModuleValues) -> list[str]:
    """Advice-domain instructions with no guardrail that runs."""
    hits = []
    for text, line in instruction_texts(facts, values):
        words = sorted({m.group(0).lower() for m in ADVICE.finditer(text)
                        if not _FORBIDDEN.search(_sentence_before(text, m.start()))})
        if words:
            hits.append(f"line {line}: the model is told to advise on {', '.join(words)}")
    if not hits or enforced_guardrails(facts, values):
        return []
    return [*hits[:3], "no moderation, guardrail or refusal branch runs on the answers"]
