"""The summary prompts (docs/methods.md#summary-generation): verbatim texts, choice by unit
type, filled placeholders."""

from __future__ import annotations

import hashlib

from pytest_summarybench.generate import prompts
from pytest_summarybench.generate.prompts import PROMPT_VERSION, build_messages

# sha256 of each prompt text as copied from the design specification
# (docs/methods.md#summary-generation); a drift in a single character fails here.
SPEC_HASHES = {
    "SYSTEM_PROMPT": "d85bd16299ffab1b73e73afff014f280388d2e155ba77ca4b3aaafdf85af3b27",
    "USER_PROMPT_FUNCTION": "0f55e926e2a710afa8ce14365ce59428d78966c199c7f1ba908a856f42e97a61",
    "USER_PROMPT_CLASS": "94dc997f7223b0c2d663c0487c0fd9d0d67f1f654c05f81dab6b0ff87a5c2504",
    "USER_PROMPT_FILE": "528509231b9fb504e360232f37aba49696353b546cde4f062f7c302372ee230b",
}


def test_prompt_texts_are_the_spec_texts() -> None:
    for name, digest in SPEC_HASHES.items():
        text = getattr(prompts, name)
        assert hashlib.sha256(text.encode()).hexdigest() == digest, name
    assert prompts.SYSTEM_PROMPT.startswith("You are a code documentation expert.")
    assert prompts.USER_PROMPT_FUNCTION.endswith(
        "Provide only the summary, no additional commentary.")


def test_prompt_version_follows_the_texts() -> None:
    assert PROMPT_VERSION.startswith("spec-4.1-")
    assert len(PROMPT_VERSION) == len("spec-4.1-") + 8


def test_function_and_method_use_the_function_prompt(make_ctx, unit_factory) -> None:
    ctx = make_ctx([{"provider": "builtin", "model": "docstring"}])
    fn = ctx.unit("u-fn-0")
    messages = build_messages(fn, ctx)
    assert messages[0] == {"role": "system", "content": prompts.SYSTEM_PROMPT}
    assert messages[1]["role"] == "user"
    assert messages[1]["content"] == prompts.USER_PROMPT_FUNCTION.format(
        language="python", name="totalPrice0", signature=fn.metadata.signature,
        file_path="shop/cart.py", code=fn.content)
    method = build_messages(ctx.unit("u-m-add"), ctx)[1]["content"]
    assert method.startswith("Write a summary for this python function:\n\nName: Cart.add\n"
                             "Signature: def add(self, item):\n")


def test_class_lists_its_methods_and_file_its_exports(make_ctx) -> None:
    ctx = make_ctx([{"provider": "builtin", "model": "docstring"}])
    cls = build_messages(ctx.unit("u-class"), ctx)[1]["content"]
    assert "Methods: add, clear\n" in cls
    assert cls.startswith("Write a summary for this python class:\n\nName: Cart\n")
    assert "```python\nclass Cart:\n" in cls
    file = build_messages(ctx.unit("u-file"), ctx)[1]["content"]
    assert file.startswith("Write a summary for this python file:\n\nPath: shop/cart.py\n"
                           "Exports: Cart, total\n")


def test_prompts_are_identical_across_models(make_ctx) -> None:
    # The messages depend on the unit only: no model name or parameter leaks in.
    ctx = make_ctx([{"provider": "openai", "model": "gpt-4o"},
                    {"provider": "anthropic", "model": "claude-3-5-sonnet-20241022"}])
    assert {str(build_messages(u, ctx)) for u in ctx.units if u.id == "u-fn-1"} == {
        str(build_messages(ctx.unit("u-fn-1"), ctx))}
    for unit in ctx.units:
        assert "gpt" not in build_messages(unit, ctx)[1]["content"]


def test_empty_lists_are_marked(make_ctx, unit_factory) -> None:
    units = unit_factory()
    lonely = units[1].model_copy(update={"relationships": units[1].relationships.model_copy(
        update={"child_ids": []})})
    assert "Methods: (none)\n" in build_messages(lonely)[1]["content"]
