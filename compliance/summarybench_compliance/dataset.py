"""The labelled examples of the compliance benchmark: the ``eval_data.jsonl`` format of the
seed, validated line by line, with the ground truth each classifier is scored against."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import DatasetError

ARTICLES: tuple[int, ...] = (9, 10, 11, 12, 14, 15)
"""The EU AI Act articles the benchmark covers."""
SEVERITIES: tuple[str, ...] = ("CRITICAL", "HIGH", "MEDIUM", "LOW")
"""Severities from most to least severe."""
COMPLIANCE_STATES: tuple[str, ...] = ("compliant", "non_compliant")
NO_VIOLATION = "none"
"""The class label of code that violates none of the articles."""

_FIELD_LINE = re.compile(r"^(ARTICLE|SEVERITY):[ \t]*(\S+)[ \t]*$", re.MULTILINE)


MAX_DATASET_BYTES = 64 << 20
"""The largest dataset file read (64 MiB: the shipped ones are under 100 KB); a larger
file, a FIFO or a device is refused with one line, the bound kept while reading."""

DATA_DIR = Path(__file__).resolve().parent / "data"
"""The labelled datasets shipped inside the package (README, "Data")."""
EVAL_DATA = DATA_DIR / "eval_data.jsonl"
"""The dataset a run evaluates unless told otherwise."""


@dataclass(frozen=True)
class Example:
    """One labelled piece of agent code."""

    id: str
    """Stable readable id: ``<framework>-art<article>-<state>-<line:03d>``."""
    code: str
    """The Python source under analysis (the ``input`` field)."""
    framework: str
    article: int
    """The article the example exercises: violated when non-compliant, met when compliant."""
    compliance_state: str
    severity: str | None
    """Severity of the violation; None for compliant code."""
    template: str
    instruction: str
    line: int
    """1-based line number in the source file."""
    source: str = ""
    """Name of the file the example came from."""
    idiom: str | None = None
    """How the (non-)compliance is expressed (``metadata.idiom``: ``config_dict``,
    ``callback_handler``, ...); None where the file does not say."""
    hard_negative: bool = False
    """``metadata.hard_negative``: the requirement's words without the behaviour, or the
    behaviour without the words."""

    @property
    def compliant(self) -> bool:
        return self.compliance_state == "compliant"

    @property
    def label(self) -> str:
        """The class a perfect classifier predicts: the violated article, or ``none``."""
        return NO_VIOLATION if self.compliant else str(self.article)


def _fail(path: Path, line: int, problem: str) -> DatasetError:
    return DatasetError(f"{path}:{line}: {problem}")


def _require(obj: dict[str, Any], key: str, kind: type, path: Path, line: int,
             where: str = "") -> Any:
    if key not in obj:
        raise _fail(path, line, f"missing field {where}{key!r}")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise _fail(path, line, f"field {where}{key!r} must be {kind.__name__}, "
                                f"got {type(value).__name__} {value!r:.60}")
    return value


def parse_line(text: str, path: Path, line: int) -> Example:
    """Validate one JSON line and turn it into an :class:`Example`."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise _fail(path, line, f"not valid JSON ({err.msg} at column {err.colno})") from None
    except RecursionError:  # json's decoder recurses per level: 100,000 ``[`` gave a traceback
        raise _fail(path, line, "JSON nested too deeply to read") from None
    if not isinstance(obj, dict):
        raise _fail(path, line, f"expected a JSON object, got {type(obj).__name__}")
    instruction = _require(obj, "instruction", str, path, line)
    code = _require(obj, "input", str, path, line)
    output = _require(obj, "output", str, path, line)
    meta = _require(obj, "metadata", dict, path, line)
    framework = _require(meta, "framework", str, path, line, "metadata.")
    article = _require(meta, "article", int, path, line, "metadata.")
    state = _require(meta, "compliance_state", str, path, line, "metadata.")
    template = _require(meta, "template", str, path, line, "metadata.")
    if article not in ARTICLES:
        raise _fail(path, line, f"metadata.article {article} is not one of {list(ARTICLES)}")
    if state not in COMPLIANCE_STATES:
        raise _fail(path, line, f"metadata.compliance_state {state!r} is not one of "
                                f"{list(COMPLIANCE_STATES)}")
    if not code.strip():
        raise _fail(path, line, "field 'input' is empty")
    idiom = meta.get("idiom")
    if idiom is not None and (not isinstance(idiom, str) or not idiom.strip()):
        raise _fail(path, line, f"metadata.idiom must be a non-empty string, got {idiom!r:.60}")
    hard_negative = meta.get("hard_negative", False)
    if not isinstance(hard_negative, bool):
        raise _fail(path, line, f"metadata.hard_negative must be true or false, "
                                f"got {hard_negative!r:.60}")
    fields = dict(_FIELD_LINE.findall(output))
    for name in ("ARTICLE", "SEVERITY"):
        if name not in fields:
            raise _fail(path, line, f"output has no '{name}: ...' line")
    if state == "compliant":
        if fields["ARTICLE"] != "NONE" or fields["SEVERITY"] != "NONE":
            raise _fail(path, line, "compliant example must answer 'ARTICLE: NONE' and "
                                    f"'SEVERITY: NONE', got ARTICLE: {fields['ARTICLE']}, "
                                    f"SEVERITY: {fields['SEVERITY']}")
        severity = None
    else:
        if fields["ARTICLE"] != str(article):
            raise _fail(path, line, f"output says ARTICLE: {fields['ARTICLE']} but "
                                    f"metadata.article is {article}")
        if fields["SEVERITY"] not in SEVERITIES:
            raise _fail(path, line, f"SEVERITY: {fields['SEVERITY']} is not one of "
                                    f"{', '.join(SEVERITIES)}")
        severity = fields["SEVERITY"]
    slug = "compliant" if state == "compliant" else "noncompliant"
    return Example(id=f"{framework}-art{article}-{slug}-{line:03d}", code=code,
                   framework=framework, article=article, compliance_state=state,
                   severity=severity, template=template, instruction=instruction, line=line,
                   source=path.name, idiom=idiom, hard_negative=hard_negative)


def load_examples(path: str | Path, *, limit: int | None = None) -> list[Example]:
    """Load and validate every line of an ``eval_data.jsonl`` file.

    Blank lines are skipped. The first malformed line raises :class:`DatasetError`
    naming the file and line. ``limit`` keeps the first N examples (the seed's test
    mode uses 10).
    """
    from pytest_summarybench.harness import read_input

    path = Path(path)
    try:
        data = read_input(path, MAX_DATASET_BYTES)
    except OSError as err:
        raise DatasetError(f"cannot read dataset {path}: {err.strerror or err}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise _fail(path, line, f"not UTF-8 text (byte 0x{data[err.start]:02x})") from None
    del data
    examples = [parse_line(raw, path, number)
                for number, raw in enumerate(text.splitlines(), start=1) if raw.strip()]
    if not examples:
        raise DatasetError(f"{path}: no examples")
    seen: set[str] = set()
    for example in examples:
        if example.id in seen:
            raise _fail(path, example.line, f"duplicate example id {example.id}")
        seen.add(example.id)
    return examples if limit is None else examples[:limit]


def shipped_datasets() -> list[str]:
    """The names of the datasets shipped with the package (``heldout_data``...)."""
    return sorted(p.stem for p in DATA_DIR.glob("*.jsonl"))


def dataset_path(given: str, base: Path) -> Path:
    """The dataset ``given`` names: a file (relative to ``base``), or else a dataset
    shipped with the package, by name (``heldout_data``, ``independent_test``...; with or
    without ``.jsonl``). Raises :class:`DatasetError` naming both when it is neither."""
    path = base / given
    if path.exists():
        return path
    name = given.removesuffix(".jsonl")
    if name in shipped_datasets():
        return DATA_DIR / f"{name}.jsonl"
    raise DatasetError(f"no dataset {given!r}: not a file, nor one of the shipped datasets "
                       f"({', '.join(shipped_datasets())})")
