"""Human-labelled query sets as code units and real queries, with and without docstrings.

- CoSQA (Huang et al., ACL 2021; MIT, Jun-jie-Huang/CoCLR and microsoft/CodeXGLUE): Bing
  web queries labelled by annotators against Python functions from CodeSearchNet. Pairs
  with ``label`` 1 are relevant; the functions are whole, so units come from the project's
  extractor (each function written to a file of its own, extracted with
  ``strip_docstrings`` off and on).
- NCS (Li et al. 2019, "Neural Code Search Evaluation Dataset"; CC BY-NC 4.0,
  facebookresearch/Neural-Code-Search-Evaluation-Dataset): 287 Stack Overflow question
  titles with the accepted Android (Java) code snippet. Snippets are fragments, not whole
  methods, so each is a ``CodeUnit`` built here; its doc comment is a leading comment block.

Nothing here reads the network: the scripts take the files' paths.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pytest_summarybench.schemas import CodeUnit
from pytest_summarybench.schemas.units import UnitMetadata


@dataclass(frozen=True)
class QuerySet:
    """Units (docstrings present and stripped, the same ids) and labelled queries."""

    name: str
    present: list[CodeUnit]
    stripped: list[CodeUnit]
    queries: list[tuple[str, frozenset[str]]]
    """(query text, ids of the units labelled relevant)."""
    dropped: int = 0
    """Labelled code the extractor gave no function for (left out, with its queries)."""


def _uid(prefix: str, code: str) -> str:
    return f"{prefix}-{hashlib.sha256(code.encode()).hexdigest()[:12]}"


# -- CoSQA ---------------------------------------------------------------------------------
def _cosqa_pairs(paths: list[Path]) -> dict[tuple[str, str], None]:
    pairs: dict[tuple[str, str], None] = {}
    for path in paths:
        for row in json.loads(path.read_text(encoding="utf-8")):
            if int(row["label"]) == 1:
                pairs[(row["doc"].strip(), row["code"])] = None
    return pairs


def load_cosqa(paths: list[Path], extra_code: Path | None = None,
               exclude: tuple[Path, ...] | list[Path] = ()) -> QuerySet:
    """Relevant (query, function) pairs of the CoSQA files at ``paths`` (cosqa-dev.json,
    cosqa-retrieval-{dev,test}-500.json), deduplicated; ``extra_code``: a JSON object
    whose keys are more functions to index (``code_idx_map.txt``), distractors only;
    ``exclude``: files whose queries are left out (the tuning queries, for a held-out
    figure; their functions stay in the index when these files label them too)."""
    held_back = {query for query, _ in _cosqa_pairs(list(exclude))}
    pairs = {p: None for p in _cosqa_pairs(paths) if p[0] not in held_back}
    codes = list(dict.fromkeys(code for _, code in pairs))
    if extra_code is not None:
        codes += [c for c in json.loads(extra_code.read_text(encoding="utf-8"))
                  if c not in set(codes)]
    present, stripped = _extract_python(codes)
    queries: dict[str, set[str]] = {}
    dropped = 0
    for query, code in pairs:
        uid = _uid("cosqa", code)
        if uid not in present:
            dropped += 1
            continue
        queries.setdefault(query, set()).add(uid)
    ids = sorted(present)
    return QuerySet("cosqa", [present[i] for i in ids], [stripped[i] for i in ids],
                    [(q, frozenset(r)) for q, r in sorted(queries.items())], dropped)


def _extract_python(codes: list[str]) -> tuple[dict[str, CodeUnit], dict[str, CodeUnit]]:
    """Each function through the project's extractor, as its first top-level function."""
    from pytest_summarybench.extract import ExtractionConfig, extract_units
    from pytest_summarybench.extract.config import ExtractionFilters, ExtractionTypes

    out: list[dict[str, CodeUnit]] = [{}, {}]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        names = {}
        for code in codes:
            uid = _uid("cosqa", code)
            names[f"{uid}.py"] = uid
            (root / f"{uid}.py").write_text(code + "\n", encoding="utf-8")
        for strip, into in ((False, out[0]), (True, out[1])):
            config = ExtractionConfig(
                root_path=str(root), languages=["python"], workers=1,
                strip_docstrings=strip,
                extraction=ExtractionTypes(classes=False, methods=False, files=False),
                filters=ExtractionFilters(min_lines=1, skip_tests=False))
            for unit in extract_units(config).units:
                uid = names.get(unit.path)
                if uid is None or uid in into or "." in unit.name:
                    continue  # a nested function: the file's first unit is the one
                into[uid] = unit.model_copy(update={"id": uid})
    present = out[0]
    stripped = {uid: strip_doc(unit) for uid, unit in out[1].items() if uid in present}
    return {uid: u for uid, u in present.items() if uid in stripped}, stripped


def strip_doc(unit: CodeUnit) -> CodeUnit:
    """The unit with no docstring in its metadata either (the content is already
    stripped by the extractor): no parameter descriptions, no recorded docstring."""
    params = unit.metadata.parameters
    if params is not None:
        params = [p.model_copy(update={"description": None}) for p in params]
    meta = unit.metadata.model_copy(update={"parameters": params})
    return unit.model_copy(update={"docstring": None, "metadata": meta})


# -- NCS (Android, Java) -------------------------------------------------------------------
_LEADING_COMMENT = re.compile(r"\A\s*((?://[^\n]*\n\s*)+|/\*.*?\*/\s*)", re.S)
_METHOD = re.compile(
    r"(?:(?:public|private|protected|static|final|synchronized|abstract|@Override)\s+)*"
    r"([\w<>\[\], ?]+?)\s+(\w+)\s*\(([^()]*)\)\s*(?:throws [\w., ]+)?\s*\{")


def load_ncs(path: Path) -> QuerySet:
    """The 287 questions of ``287_android_questions.json``, each relevant to its answer."""
    rows = json.loads(path.read_text(encoding="utf-8"))
    present: dict[str, CodeUnit] = {}
    queries: dict[str, set[str]] = {}
    for row in rows:
        code = row["answer"].strip("\n")
        uid = _uid("ncs", code)
        if uid not in present:
            present[uid] = _snippet_unit(uid, code)
        queries.setdefault(row["question"].strip(), set()).add(uid)
    ids = sorted(present)
    stripped = [_strip_snippet(present[i]) for i in ids]
    return QuerySet("ncs", [present[i] for i in ids], stripped,
                    [(q, frozenset(r)) for q, r in sorted(queries.items())])


def _snippet_unit(uid: str, code: str) -> CodeUnit:
    lead = _LEADING_COMMENT.match(code)
    doc = None
    if lead:
        doc = re.sub(r"^\s*(//+|/\*+|\*+/?|\*)\s?", "", lead.group(1), flags=re.M).strip()
        doc = " ".join(doc.split()) or None
    method = _METHOD.search(code)
    name, signature, params, ret = "snippet", None, None, None
    if method and method.group(2) not in {"if", "for", "while", "switch", "catch", "new"}:
        from pytest_summarybench.schemas.units import Parameter

        name = method.group(2)
        ret = method.group(1).split()[-1] if method.group(1).split() else None
        signature = " ".join(method.group(0).rstrip("{").split())
        params = []
        for part in filter(None, (p.strip() for p in method.group(3).split(","))):
            bits = part.split()
            params.append(Parameter(name=bits[-1], type=" ".join(bits[:-1]) or None))
    return CodeUnit(id=uid, path=f"ncs/{uid}.java", name=name, type="function",
                    language="java", content=code, docstring=doc,
                    metadata=UnitMetadata(start_line=1, end_line=code.count("\n") + 1,
                                          signature=signature, parameters=params,
                                          return_type=ret))


def _strip_snippet(unit: CodeUnit) -> CodeUnit:
    if unit.docstring is None:
        return unit
    lead = _LEADING_COMMENT.match(unit.content)
    content = unit.content[lead.end():] if lead else unit.content
    return unit.model_copy(update={"docstring": None, "content": content})


def load(kind: str, paths: list[Path], extra: Path | None = None,
         exclude: tuple[Path, ...] | list[Path] = ()) -> QuerySet:
    if kind == "cosqa":
        return load_cosqa(paths, extra, exclude)
    if kind == "ncs":
        if len(paths) != 1:
            raise SystemExit(f"ncs takes one file (287_android_questions.json), got {paths}")
        return load_ncs(paths[0])
    raise SystemExit(f"unknown data set {kind!r}: choose cosqa or ncs")
