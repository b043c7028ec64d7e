"""The summary prompts of docs/methods.md#summary-generation, identical for every model under test.

The texts are copied verbatim from the spec; ``PROMPT_VERSION`` is derived from them, so
any edit changes the recorded version and misses the response cache instead of silently
reusing summaries written for another prompt.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from ..schemas import CodeUnit

if TYPE_CHECKING:
    from ..context import RunContext

SYSTEM_PROMPT = """You are a code documentation expert. Your task is to write concise, useful summaries of code that will be used in a RAG (Retrieval-Augmented Generation) system to help developers find and understand code.

Your summaries will be:
1. Embedded as vectors for semantic search
2. Shown to LLMs as context when answering coding questions
3. Used by developers to quickly understand what code does

Write summaries that:
- Describe WHAT the code does and WHY (purpose/intent), not HOW (implementation details)
- Use terminology developers would search for
- Mention inputs, outputs, and important side effects
- Are concise but complete (aim for 2-4 sentences for functions, 3-6 for classes/files)
- Include the code's role in the broader system when apparent

Do NOT:
- Restate the code line-by-line in English
- Include implementation details unless critical to understanding
- Be vague or generic (avoid "handles various operations")
- Include the function/class name in the summary (it's provided separately)"""  # noqa: E501

USER_PROMPT_FUNCTION = """Write a summary for this {language} function:

Name: {name}
Signature: {signature}
File: {file_path}

Code:
```{language}
{code}
```

Provide only the summary, no additional commentary."""

USER_PROMPT_CLASS = """Write a summary for this {language} class:

Name: {name}
File: {file_path}
Methods: {method_list}

Code:
```{language}
{code}
```

Provide only the summary, no additional commentary."""

USER_PROMPT_FILE = """Write a summary for this {language} file:

Path: {file_path}
Exports: {exports_list}

Code:
```{language}
{code}
```

Provide only the summary, no additional commentary."""

#: The four prompt texts by key; their hash is the prompt version.
PROMPTS: dict[str, str] = {
    "system": SYSTEM_PROMPT,
    "function": USER_PROMPT_FUNCTION,
    "class": USER_PROMPT_CLASS,
    "file": USER_PROMPT_FILE,
}
#: Recorded on every summary (``generationMetadata.promptVersion``) and part of the
#: response-cache key: a fixed label (kept as it was, so that cached summaries stay valid)
#: plus a hash of the exact texts.
PROMPT_VERSION = "spec-4.1-" + hashlib.sha256(
    "\x1e".join(PROMPTS[k] for k in sorted(PROMPTS)).encode()).hexdigest()[:8]

#: What a prompt shows for an empty method or export list.
NONE_LISTED = "(none)"


def prompt_kind(unit: CodeUnit) -> str:
    """Which user prompt a unit gets: methods use the function prompt, modules the file one."""
    if unit.type in ("function", "method"):
        return "function"
    if unit.type == "class":
        return "class"
    return "file"


def method_names(unit: CodeUnit, ctx: RunContext | None) -> list[str]:
    """The short names of a class's child methods, in source order.

    Children are looked up in the run's units; without a context (or for children that
    were filtered out of extraction) the class's own method definitions are not
    re-parsed, so only resolvable children are listed.
    """
    if ctx is None:
        return []
    names: list[str] = []
    for child_id in unit.relationships.child_ids:
        try:
            child = ctx.unit(child_id)
        except KeyError:
            continue
        if child.type in ("method", "function"):
            names.append(child.short_name)
    return names


def user_prompt(unit: CodeUnit, ctx: RunContext | None = None) -> str:
    """The user message for ``unit``: the template for its type, filled in
    (docs/methods.md#summary-generation)."""
    kind = prompt_kind(unit)
    language = unit.language
    if kind == "function":
        signature = unit.metadata.signature or _first_line(unit.content)
        return USER_PROMPT_FUNCTION.format(language=language, name=unit.name,
                                           signature=signature, file_path=unit.path,
                                           code=unit.content)
    if kind == "class":
        methods = ", ".join(method_names(unit, ctx)) or NONE_LISTED
        return USER_PROMPT_CLASS.format(language=language, name=unit.name,
                                        file_path=unit.path, method_list=methods,
                                        code=unit.content)
    exports = ", ".join(unit.metadata.exports or []) or NONE_LISTED
    return USER_PROMPT_FILE.format(language=language, file_path=unit.path,
                                   exports_list=exports, code=unit.content)


def build_messages(unit: CodeUnit, ctx: RunContext | None = None) -> list[dict[str, str]]:
    """The chat messages every model under test receives for ``unit``."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user_prompt(unit, ctx)},
    ]


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""
