"""The task prompts of docs/methods.md#downstream-family, verbatim, and how they are filled in.

Placeholders are substituted in one pass, so a summary that happens to contain
``{requirements}`` (or any other placeholder) is inserted as it is, never expanded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

#: Bump when a prompt or its assembly changes: cached task-model answers are keyed on it.
PROMPT_VERSION = "downstream-1"

COMPLETION_TASK_PROMPT = """Complete this code using the provided context.

## Context from Codebase
{summaries}

## Code to Complete
```{language}
{partial_code}
// TODO: Complete this function
```

## Requirements
{requirements}

Provide only the completed code, no explanations."""

BUG_LOCALIZATION_PROMPT = """A bug has been reported. Based on the file summaries below, identify which file most likely contains the bug.

## Bug Report
{bug_description}

## File Summaries
{file_summaries}

Which file most likely contains this bug? Respond with JSON:
```json
{
  "predicted_file": "<file path>",
  "confidence": "high" | "medium" | "low",
  "reasoning": "<brief explanation>"
}
```"""  # noqa: E501 - the spec's prompt, verbatim

FUNCTION_SELECTION_PROMPT = """You need to accomplish a task. Based on the available functions, select the most appropriate one.

## Task
{task_description}

## Available Functions
{function_summaries}

Which function should be used? Respond with JSON:
```json
{
  "selected_function": "<function name>",
  "confidence": "high" | "medium" | "low",
  "reasoning": "<brief explanation>"
}
```"""  # noqa: E501 - the spec's prompt, verbatim

#: Between the context summaries of a completion task (docs/methods.md#downstream-completion).
SUMMARY_SEPARATOR = "\n\n---\n\n"


def fill(template: str, values: Mapping[str, str]) -> str:
    """Substitute ``{name}`` for each key of ``values`` in one pass."""
    pattern = re.compile(r"\{(" + "|".join(map(re.escape, values)) + r")\}")
    return pattern.sub(lambda m: values[m.group(1)], template)


def completion_prompt(*, summaries: Sequence[str], language: str, partial_code: str,
                      requirements: str) -> str:
    """The completion prompt (docs/methods.md#downstream-completion): the context summaries
    joined by ``---``, the partial code, the requirements."""
    return fill(COMPLETION_TASK_PROMPT, {
        "summaries": SUMMARY_SEPARATOR.join(summaries), "language": language,
        "partial_code": partial_code, "requirements": requirements})


def sections(entries: Sequence[tuple[str, str]]) -> str:
    """``### title`` then the summary, blank-line separated. Every candidate has one: a
    model without a summary of a candidate fails the item instead (spec 8.2 shows
    "[No summary available]" in its place, which would let the task model pick from the
    names alone and score that for the model)."""
    return "\n\n".join(f"### {title}\n{summary}" for title, summary in entries)


def bug_localisation_prompt(*, bug_description: str,
                            files: Sequence[tuple[str, str]]) -> str:
    """The bug localisation prompt (docs/methods.md#downstream-bug-localisation): the bug
    report and one ``### path`` section per candidate file."""
    return fill(BUG_LOCALIZATION_PROMPT, {"bug_description": bug_description,
                                          "file_summaries": sections(files)})


def function_selection_prompt(*, task_description: str,
                              functions: Sequence[tuple[str, str]]) -> str:
    """The function selection prompt (docs/methods.md#downstream-function-selection): the task
    and one ``### name`` section per candidate function."""
    return fill(FUNCTION_SELECTION_PROMPT, {"task_description": task_description,
                                            "function_summaries": sections(functions)})
