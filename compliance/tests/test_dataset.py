"""The labelled datasets: coverage the issue asks for, frozen content, and a loader that
names the line of anything malformed."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from summarybench_compliance.dataset import (
    ARTICLES,
    DATA_DIR,
    SEVERITIES,
    DatasetError,
    load_examples,
)
from summarybench_compliance.plugin import spread

EVAL = DATA_DIR / "eval_data.jsonl"
HELDOUT = DATA_DIR / "heldout_data.jsonl"
#: eval_data.jsonl was frozen before any scanner rule was written (commit 3d8e859); a
#: change to it must be deliberate and re-reported, so its digest is pinned here.
EVAL_SHA256 = "a892724fa32e2a8120f5ea837bfa67a1e9338608537985536f02c2e4c80a9339"
#: The independent set (issue 23): 252 examples by seven writers who had not read the rules,
#: split into a development part (rules may be tuned on it) and a test part (never used to
#: tune), both frozen before the rules were rewritten.
INDEPENDENT = {
    "independent_dev.jsonl":
        "d79357c4237af16ae7a9d00d73488ac17096d2161dc83a369dd7657948bed6ee",
    "independent_test.jsonl":
        "9c2970dc4363dc785922fd2613838c8ea441ae1613ada92dfb219823ba9ac17e",
    # written by seven further writers after the dev-tuned rules existed (first look before
    # any tuning on it: 85.7%, macro F1 0.862); rules may be tuned on it afterwards
    "independent_val.jsonl":
        "8ad26ea9d7d7ae5a6357a55c3661426f1f5b8fa2c6a978dd114f5d72e6d030f3",
    # articles 9 and 14 only, by seven further writers, after the first test measurement
    # showed those two articles below F1 0.6 (first look before tuning: 69.0%)
    "independent_dev2.jsonl":
        "a7669bbfd7dcb4166a5a81205b91eb24ab32215f5c8b137a10e3ddb3d091bd2e",
    # a second test part by seven further writers, frozen before the rules tuned on dev2
    # were measured on it; never used to tune
    "independent_test2.jsonl":
        "d7ad0e0367005644a521d9b73a29b42c66cbd49aeafa41de5fcdf11e3039c5a9",
}
STACKS = {"autogen", "crewai", "langchain", "llama_index", "openai-agents", "provider-sdk",
          "semantic-kernel"}
IDIOMS = {"module_docstring", "class_docstring", "config_dict", "dataclass_config",
          "yaml_json_config", "env_settings", "decorator", "callback_handler",
          "wrapper_middleware", "helper_module", "inline_call"}

GOOD = {
    "instruction": "Analyze this Python AI agent code for EU AI Act compliance.",
    "input": "import logging\n",
    "output": "FINDING: x\nARTICLE: 12\nSEVERITY: LOW",
    "metadata": {"framework": "autogen", "article": 12, "compliance_state": "non_compliant",
                 "template": "t"},
}


def test_eval_data_is_frozen() -> None:
    assert hashlib.sha256(EVAL.read_bytes()).hexdigest() == EVAL_SHA256


@pytest.mark.parametrize("name", sorted(INDEPENDENT))
def test_independent_set_is_frozen(name: str) -> None:
    assert hashlib.sha256((DATA_DIR / name).read_bytes()).hexdigest() == INDEPENDENT[name]


def test_independent_set_covers_what_issue_23_asks() -> None:
    dev = load_examples(DATA_DIR / "independent_dev.jsonl")
    test = load_examples(DATA_DIR / "independent_test.jsonl")
    everything = dev + test
    assert len(everything) >= 240 and len(test) >= 120
    assert {e.framework for e in dev} == {e.framework for e in test} == STACKS
    assert {e.idiom for e in everything} == IDIOMS
    assert {e.severity for e in everything if e.severity} == {"CRITICAL", "HIGH", "MEDIUM",
                                                             "LOW"}
    for stack in STACKS:
        for article in ARTICLES:
            states = {e.compliance_state for e in everything
                      if e.framework == stack and e.article == article}
            assert states == {"compliant", "non_compliant"}, (stack, article)
            hard = {e.compliance_state for e in everything if e.framework == stack
                    and e.article == article and e.hard_negative}
            assert hard == {"compliant", "non_compliant"}, (stack, article)
    # no example is in both parts
    assert not {e.code for e in dev} & {e.code for e in test}


def test_eval_data_covers_what_the_issue_asks() -> None:
    examples = load_examples(EVAL)
    assert len(examples) >= 54
    assert {"langchain", "autogen", "crewai"} <= {e.framework for e in examples}
    assert {e.article for e in examples} == set(ARTICLES)
    assert {e.severity for e in examples if e.severity} == set(SEVERITIES)
    per_state = Counter((e.article, e.compliance_state) for e in examples)
    for article in ARTICLES:
        assert per_state[article, "compliant"] >= 1
        assert per_state[article, "non_compliant"] >= 1


def test_heldout_is_separate_and_large_enough() -> None:
    heldout = load_examples(HELDOUT)
    assert len(heldout) >= 18
    assert {e.article for e in heldout} == set(ARTICLES)
    assert not {e.code for e in heldout} & {e.code for e in load_examples(EVAL)}


def test_ids_are_stable_and_readable() -> None:
    examples = load_examples(EVAL)
    first = examples[0]
    assert first.id == f"{first.framework}-art{first.article}-noncompliant-001"
    assert len({e.id for e in examples}) == len(examples)
    assert [e.id for e in load_examples(EVAL)] == [e.id for e in examples]


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _variant(**changes: object) -> str:
    obj = json.loads(json.dumps(GOOD))
    for key, value in changes.items():
        if key.startswith("meta_"):
            obj["metadata"][key[5:]] = value
        elif value is None:
            obj.pop(key)
        else:
            obj[key] = value
    return json.dumps(obj)


@pytest.mark.parametrize(("bad", "message"), [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    (_variant(input=None), "missing field 'input'"),
    (_variant(meta_article=13), "metadata.article 13 is not one of"),
    (_variant(meta_article="12"), "field metadata.'article' must be int"),
    (_variant(meta_compliance_state="partial"), "compliance_state 'partial'"),
    (_variant(output="FINDING: x\nARTICLE: 12"), "no 'SEVERITY: ...' line"),
    (_variant(output="ARTICLE: 14\nSEVERITY: LOW"), "ARTICLE: 14 but metadata.article is 12"),
    (_variant(output="ARTICLE: 12\nSEVERITY: SEVERE"), "SEVERITY: SEVERE is not one of"),
    (_variant(meta_compliance_state="compliant"), "compliant example must answer"),
])
def test_loader_names_the_malformed_line(tmp_path: Path, bad: str, message: str) -> None:
    path = _write(tmp_path, [json.dumps(GOOD), "", bad, json.dumps(GOOD)])
    with pytest.raises(DatasetError) as info:
        load_examples(path)
    assert f"{path}:3:" in str(info.value)
    assert message in str(info.value)


def test_loader_rejects_duplicate_ids_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no examples"):
        load_examples(_write(tmp_path, [""]))
    with pytest.raises(DatasetError, match="cannot read dataset"):
        load_examples(tmp_path / "missing.jsonl")


def test_a_line_nested_too_deeply_is_that_lines_error(tmp_path: Path) -> None:
    # Payload: 100,000 ``[`` on line 2. Before: a RecursionError traceback.
    path = _write(tmp_path, [json.dumps(GOOD), "[" * 100_000 + "]" * 100_000])
    with pytest.raises(DatasetError, match=re.escape(f"{path}:2: JSON nested too deeply")):
        load_examples(path)


@pytest.mark.parametrize("kind", ["fifo", "link to a fifo", "folder"])
def test_a_dataset_that_is_not_a_regular_file_is_refused_at_once(
        tmp_path: Path, kind: str) -> None:
    # Payload: ``--data`` a link to /dev/zero read 21.8 GB until the OOM killer came; a
    # FIFO without a writer blocked. Here a FIFO (a link to one stands for the device).
    import os
    import time

    target = tmp_path / "pipe"
    path = tmp_path / "data.jsonl"
    if kind == "folder":
        path.mkdir()
        what = "a folder"
    else:
        os.mkfifo(target)
        if kind == "fifo":
            target.rename(path)
        else:
            path.symlink_to(target)
        what = "a FIFO (named pipe)"
    started = time.monotonic()
    with pytest.raises(DatasetError, match=re.escape(
            f"cannot read dataset {path}: not a regular file: {what}")):
        load_examples(path)
    assert time.monotonic() - started < 10


def test_a_dataset_over_the_cap_is_refused(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import summarybench_compliance.dataset as dataset

    path = _write(tmp_path, [json.dumps(GOOD)] * 50)
    monkeypatch.setattr(dataset, "MAX_DATASET_BYTES", 4096)
    with pytest.raises(DatasetError, match=r"file too large: \d+ bytes > 4096"):
        load_examples(path)


def test_test_mode_spreads_over_the_file() -> None:
    examples = load_examples(EVAL)
    chosen = spread(examples, 10)
    assert len(chosen) == 10
    assert len({e.article for e in chosen}) >= 5
    assert spread(examples[:3], 10) == examples[:3]
