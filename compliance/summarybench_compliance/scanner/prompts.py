"""What a model is told and where work is handed to it: the instructions an agent module
gives its model (system prompts, agent instructions, goals, backstories, task
descriptions, prompt templates) and the calls that send a prompt to a model or an agent.
"""

from __future__ import annotations

import ast

from .facts import CodeFacts, dotted, tokens
from .values import ModuleValues

MODEL_CALLS = frozenset({
    "invoke", "ainvoke", "run", "arun", "run_sync", "run_streamed", "run_stream", "stream",
    "astream", "structured_predict", "astructured_predict",
    "kickoff", "kickoff_async", "initiate_chat", "a_initiate_chat", "chat", "achat",
    "step", "get_response", "invoke_prompt", "get_chat_message_content",
    "get_chat_message_contents", "generate_reply", "a_generate_reply", "complete",
    "acomplete", "generate_content", "predict",
})
"""Method names that hand a prompt to an agent or a model (framework entry points)."""
_CREATE_RECEIVERS = frozenset({"completions", "messages", "responses", "chat"})
_NOT_MODEL_RECEIVERS = frozenset({"asyncio", "subprocess", "loop", "trio", "anyio"})


def is_model_call(node: ast.Call) -> bool:
    """Whether ``node`` sends work to a model or an agent (``client.chat.completions.
    create``, ``Runner.run``, ``agent.invoke``, ``crew.kickoff``, ...)."""
    name = dotted(node.func)
    receiver, _, last = name.rpartition(".")
    if not receiver:
        return False
    parts = set(receiver.split("."))
    if last == "create":
        return bool(parts & _CREATE_RECEIVERS)
    return last in MODEL_CALLS and not parts & _NOT_MODEL_RECEIVERS


INSTRUCTION_KEYWORDS = frozenset({"instructions", "system_message", "system_prompt",
                                  "system", "backstory", "goal", "expected_output",
                                  "system_instruction", "preamble", "persona"})
_SYSTEM_CALLS = frozenset({"add_system_message", "SystemMessage", "SystemMessagePromptTemplate"})
_PROMPT_NAME_TOKENS = frozenset({"prompt", "system", "instructions", "instruction",
                                 "template"})


def _text(node: ast.expr | None, values: ModuleValues) -> str:
    node = values.resolve(node)
    if node is None:
        return ""
    return " ".join(n.value for n in ast.walk(node)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str))


def instruction_texts(facts: CodeFacts, values: ModuleValues, *,
                      with_templates: bool = False) -> list[tuple[str, int]]:
    """What the model is told to do, with the line it is told there; with
    ``with_templates``, prompt templates too (``PromptTemplate``, ``from_template``,
    ``from_messages``, ``template=``/``prompt=`` keywords)."""
    out: list[tuple[str, int]] = []
    for call in facts.calls:
        if call.last in _SYSTEM_CALLS:
            out.extend((_text(a, values), call.line) for a in call.node.args)
            out.extend((_text(kw.value, values), call.line) for kw in call.node.keywords
                       if kw.arg == "content")
        if with_templates and ("template" in tokens(call.last) or call.last in (
                "from_messages", "PromptTemplate")):
            out.extend((_text(a, values), call.line) for a in call.node.args)
        if with_templates:
            out.extend((_text(kw.value, values), call.line) for kw in call.node.keywords
                       if kw.arg in ("template", "prompt", "prompt_template"))
        for kw in call.node.keywords:
            if kw.arg in INSTRUCTION_KEYWORDS or (kw.arg == "description"
                                                  and call.last == "Task"):
                out.append((_text(kw.value, values), call.line))
    for name, value in values.constants.items():
        if _PROMPT_NAME_TOKENS & set(tokens(name)):
            out.append((_text(value, values), value.lineno))
    for node in values.nodes(ast.Dict, ast.Tuple):
        if isinstance(node, ast.Dict):
            pairs = {k.value: v for k, v in zip(node.keys, node.values, strict=True)
                     if isinstance(k, ast.Constant)}
            role = pairs.get("role")
            if isinstance(role, ast.Constant) and role.value in ("system", "developer"):
                out.append((_text(pairs.get("content"), values), node.lineno))
        elif isinstance(node, ast.Tuple) and len(node.elts) == 2 \
                and isinstance(node.elts[0], ast.Constant) and node.elts[0].value == "system":
            out.append((_text(node.elts[1], values), node.lineno))
    return out
