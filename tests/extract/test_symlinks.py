"""Symlinks out of the codebase (issue 18, item 8).

Payload: inside the codebase, a link to a folder outside it holding code (as a link to the
root user's home directory did: 146,572 units extracted, 30 sent to the model) and a file
link to a secret outside it. What must hold afterwards: no unit from outside the root is
extracted, stored or summarised; each link is reported as a skipped file with the reason
and the option that follows it; links inside the root still work; and
``codebase.followExternalSymlinks: true`` (``--follow-external-symlinks``) follows them.
"""

from __future__ import annotations

import json
import os
import sqlite3
import textwrap
from pathlib import Path

import pytest

from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
from pytest_summarybench.extract import ExtractionConfig, extract_units
from pytest_summarybench.settings import load_settings
from tests.fakes.project import write_bench_module

FUNC = '''def {name}(a, b):
    """{doc}"""
    total = a + b
    return total
'''
SECRET = "AKIA-not-a-real-key-0123456789"


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """``repo/code`` (the root) with its own code, links out to ``elsewhere``."""
    root = tmp_path / "repo" / "code"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mine.py").write_text(FUNC.format(name="add_mine", doc="Add mine."))
    (root / "pkg" / "alias_target").mkdir()
    (root / "pkg" / "alias_target" / "inner.py").write_text(
        FUNC.format(name="add_inner", doc="Add inner."))
    outside = tmp_path / "elsewhere"
    (outside / "home" / "project").mkdir(parents=True)
    for i in range(5):
        (outside / "home" / "project" / f"private{i}.py").write_text(
            FUNC.format(name=f"private_{i}", doc="Somebody else's code."))
    (outside / "secret.py").write_text(f'API_KEY = "{SECRET}"\n\n\n'
                                       + FUNC.format(name="leak", doc=SECRET))
    os.symlink(outside / "home", root / "home")                 # folder link out
    os.symlink(outside / "secret.py", root / "pkg" / "key.py")  # file link out
    os.symlink("../../../elsewhere/home", root / "pkg" / "relative_home")  # relative, out
    os.symlink(root / "pkg" / "alias_target", root / "inner_alias")        # inside: fine
    os.symlink("mine.py", root / "pkg" / "mine_link.py")                   # inside: fine
    return root, outside


def _outside_units(units: list, outside: Path) -> list:
    return [u for u in units if "private" in u.name or u.name == "leak"
            or SECRET in u.content or str(outside) in u.path]


def test_links_out_of_the_root_are_not_followed(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path)
    result = extract_units(ExtractionConfig(root_path=str(root)))

    assert not _outside_units(result.units, outside)
    assert {u.name for u in result.units if u.type == "function"} == {"add_mine", "add_inner"}
    skipped = {s.path: s.reason for s in result.skipped}
    assert skipped["home"].startswith(
        f"symlink to a folder outside the codebase root ({outside / 'home'}): not followed")
    assert skipped["pkg/relative_home"].startswith("symlink to a folder outside")
    assert skipped["pkg/key.py"].startswith(
        f"symlink to a file outside the codebase root ({outside / 'secret.py'})")
    assert all("codebase.followExternalSymlinks: true" in skipped[p]
               for p in ("home", "pkg/key.py"))
    # Links that stay inside are handled as before: each real file once.
    assert skipped["pkg/mine_link.py"] == "same file as pkg/mine.py (symlink)"
    assert skipped["inner_alias/inner.py"] == "same file as pkg/alias_target/inner.py (symlink)"
    # The skips are reported like other skipped files: one warning line each.
    assert sum("outside the codebase root" in w for w in result.warnings) == 3


def test_the_option_follows_them(tmp_path: Path) -> None:
    root, outside = _tree(tmp_path)
    result = extract_units(ExtractionConfig(root_path=str(root),
                                            follow_external_symlinks=True))
    names = {u.name for u in result.units}
    assert {"private_0", "leak"} <= names
    assert not any("outside the codebase root" in s.reason for s in result.skipped)


def test_the_yaml_key_reaches_extraction(tmp_path: Path) -> None:
    cfg = tmp_path / "summarybench.yaml"
    cfg.write_text("codebase: {root: code, followExternalSymlinks: true}\n")
    settings = load_settings(cfg, families=BUILTIN_FAMILIES)
    assert settings.extraction_config().follow_external_symlinks is True
    cfg.write_text("codebase: {root: code}\n")
    settings = load_settings(cfg, families=BUILTIN_FAMILIES)
    assert settings.extraction_config().follow_external_symlinks is False


def test_the_extract_cli_skips_them_and_says_so(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_summarybench.cli import main

    root, outside = _tree(tmp_path)
    out = tmp_path / "units.jsonl"
    assert main(["extract", str(root), "--output", str(out)]) == 0
    captured = capsys.readouterr()
    units = [json.loads(line) for line in out.read_text().splitlines()]
    assert units and not [u for u in units if SECRET in u["content"]
                          or u["name"].startswith("private")]
    assert "home: skipped: symlink to a folder outside the codebase root" in captured.err
    assert "pkg/key.py: skipped: symlink to a file outside the codebase root" in captured.err
    assert main(["extract", str(root), "--output", str(out),
                 "--follow-external-symlinks"]) == 0
    assert SECRET in out.read_text()


def test_a_benchmark_run_never_stores_or_summarises_outside_code(
        pytester: pytest.Pytester) -> None:
    root, outside = _tree(pytester.path)
    write_bench_module(pytester)
    pytester.makefile(".yaml", summarybench=textwrap.dedent(f"""
        name: symlink-attack
        codebase: {{root: {root}, languages: [python]}}
        evaluation:
          sampling: all
          judge: {{enabled: false}}
          retrieval: {{enabled: false}}
          downstream: {{enabled: false}}
          contrastive: {{embeddingModel: builtin/hashing}}
        """))
    result = pytester.runpytest_subprocess("-p", "summarybench", "-p", "no:cacheprovider",
                                           "--sb-output", "out", timeout=300)
    assert result.ret == 0, result.stdout.str()
    with sqlite3.connect(pytester.path / "out" / "store.sqlite") as conn:
        stored = [row[0] for row in conn.execute("SELECT json FROM units")]
        summaries = [row[0] for row in conn.execute("SELECT json FROM summaries")]
    assert stored and not [u for u in stored if SECRET in u or "private_" in u]
    assert summaries and not [s for s in summaries if SECRET in s or "private_" in s]
    assert "private_" not in (pytester.path / "out" / "results.json").read_text()


def test_following_links_out_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        caplog: pytest.LogCaptureFixture) -> None:
    """Issue 34 (the hostile pass's R6): with the option, a link to ``/`` walked the whole
    machine (57,194 files, 26,350 warning lines, memory growing). A link to a folder that
    holds the root, or into /proc, /sys or /dev, is refused with one line; what links out
    bring in is capped (files and bytes) with one line; warnings past a number are one
    count line."""
    from pytest_summarybench.extract import codebase, files

    root, outside = _tree(tmp_path)
    os.symlink("/", root / "rootlink")
    os.symlink(tmp_path, root / "parentlink")
    os.symlink("/proc", root / "proc")
    os.symlink("/proc/self/environ", root / "env.py")
    many = tmp_path / "many"
    many.mkdir()
    for i in range(30):
        (many / f"m{i:02}.py").write_text(FUNC.format(name=f"many_{i}", doc="Many."))
        (many / f"sub{i:02}").mkdir()
    os.symlink(many, root / "many")
    monkeypatch.setattr(files, "MAX_OUTSIDE_FILES", 10, raising=False)
    monkeypatch.setattr(codebase, "MAX_WARNINGS_SHOWN", 3, raising=False)
    caplog.set_level("WARNING", logger="pytest_summarybench.extract")
    result = extract_units(ExtractionConfig(root_path=str(root), follow_external_symlinks=True))

    skipped = {s.path: s.reason for s in result.skipped}
    assert skipped["rootlink"] == ("symlink to a folder that holds the codebase root (/): "
                                   "not followed")
    assert skipped["parentlink"].startswith("symlink to a folder that holds the codebase root")
    assert skipped["proc"] == "symlink into a system folder (/proc): not followed"
    assert skipped["env.py"].startswith("symlink into a system folder (/proc/")
    # 10 files from outside (the walk's order: the secret's link, 5 in "home", 4 of
    # "many"); the other 26 files and the 30 folders of "many" are left out.
    outside_names = {u.name for u in result.units if u.type == "function"} - {
        "add_mine", "add_inner"}
    assert len(outside_names) == 10 and "many_4" not in outside_names
    capped = [r for r in skipped.values() if "through symlinks to outside" in r]
    assert len(capped) == 1 and "(10 files, 100 MB)" in capped[0]
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4 and "more warnings like these not shown" in lines[-1]
