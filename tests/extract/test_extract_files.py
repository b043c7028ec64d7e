"""Which files are extracted: languages, include/exclude globs, vendored, test and
generated files, symlinks followed once."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_summarybench.extract import (
    ExtractionConfig,
    ExtractionFilters,
    ExtractionTypes,
    extract_units,
)
from pytest_summarybench.extract.files import is_test_path
from pytest_summarybench.extract.globs import compile_globs
from pytest_summarybench.extract.result import SkippedFile

FUNC = "def f(a):\n    b = a + 1\n    return b\n"
JS = "function f(a) {\n  const b = a + 1;\n  return b;\n}\n"


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def paths(config: ExtractionConfig) -> list[str]:
    return sorted({u.path for u in extract_units(config).units})


def test_default_excludes_skip_vendored_generated_and_test_files(tmp_path: Path) -> None:
    root = tree(tmp_path, {
        "src/app.py": FUNC, "src/app.js": JS, "node_modules/lib/index.js": JS,
        "vendor/x.go": "package x\n\nfunc F() int {\n\treturn 1\n}\n",
        ".venv/lib/site.py": FUNC, "dist/bundle.js": JS, "build/gen.py": FUNC,
        "src/app.min.js": JS, "src/api_pb2.py": FUNC, "src/__pycache__/x.py": FUNC,
        "tests/test_app.py": FUNC, "src/app.test.ts": JS, "src/util_test.go": FUNC,
        "src/README.md": "# not code\n",
    })
    assert paths(ExtractionConfig(root_path=str(root))) == ["src/app.js", "src/app.py"]
    with_tests = ExtractionConfig(root_path=str(root), filters=ExtractionFilters(skip_tests=False))
    assert paths(with_tests) == ["src/app.js", "src/app.py", "src/app.test.ts",
                                 "tests/test_app.py"]


def test_languages_include_and_exclude(tmp_path: Path) -> None:
    root = tree(tmp_path, {"src/a.py": FUNC, "src/b.js": JS, "lib/c.py": FUNC,
                           "src/deep/d.py": FUNC})
    assert paths(ExtractionConfig(root_path=str(root), languages=["javascript"])) == ["src/b.js"]
    assert paths(ExtractionConfig(root_path=str(root), include_patterns=["src/**/*.py"])) \
        == ["src/a.py", "src/deep/d.py"]
    assert paths(ExtractionConfig(root_path=str(root), include_patterns=["src/*.py"])) \
        == ["src/a.py"]
    assert paths(ExtractionConfig(root_path=str(root), exclude_patterns=["src/deep/**"])) \
        == ["lib/c.py", "src/a.py", "src/b.js"]


def test_unit_types_and_line_filters(tmp_path: Path) -> None:
    root = tree(tmp_path, {"m.py": "class A:\n    def m(self):\n        return 1\n\n\n"
                                   "def tiny(): return 2\n\n\n"
                                   "def f(a):\n    b = a\n    return b\n"})
    config = ExtractionConfig(root_path=str(root),
                              extraction=ExtractionTypes(files=False, classes=False))
    assert [u.name for u in extract_units(config).units] == ["f"]  # tiny is 1 line; m is 2
    config = ExtractionConfig(root_path=str(root),
                              filters=ExtractionFilters(min_lines=1, max_lines=2))
    assert [u.name for u in extract_units(config).units] == ["A.m", "tiny"]


def test_symlinked_folder_is_followed_once(tmp_path: Path) -> None:
    root = tree(tmp_path / "repo", {"real/a.py": FUNC})
    os.symlink(root / "real", root / "alias")
    result = extract_units(ExtractionConfig(root_path=str(root)))
    assert sorted({u.path for u in result.units}) == ["real/a.py"]
    assert [s.path for s in result.skipped] == ["alias"]
    not_followed = ExtractionConfig(root_path=str(root), follow_symlinks=False)
    assert paths(not_followed) == ["real/a.py"]
    os.symlink(root / "real" / "a.py", root / "b.py")
    result = extract_units(ExtractionConfig(root_path=str(root)))
    assert [(s.path, s.reason) for s in result.skipped] == [
        ("alias", f"symlink to an already visited folder (loop or alias): "
                  f"{os.path.realpath(root / 'real')}"),
        ("real/a.py", "same file as b.py (symlink)")]


def test_glob_and_test_path_rules() -> None:
    rx = compile_globs(["**/node_modules/**", "*.min.js", "src/[ab]?.py"])
    assert rx is not None
    assert rx.match("node_modules/x/y.js") and rx.match("a/node_modules/")
    assert rx.match("x.min.js") and not rx.match("dir/x.min.js")
    assert rx.match("src/a1.py") and not rx.match("src/c1.py")
    assert compile_globs([]) is None
    for path in ("tests/x.py", "pkg/test_x.py", "x_test.go", "a/b.spec.ts", "FooTest.java",
                 "spec/foo_spec.rb", "FooTests.cs", "conftest.py"):
        assert is_test_path(path), path
    for path in ("src/testing.py", "latest.py", "contest/x.go", "Attestation.java"):
        assert not is_test_path(path), path


def test_hostile_glob_is_linear(tmp_path: Path) -> None:
    """``*a*a*a*a*a*a*b`` against a 250-character name backtracked for minutes (``re``
    and ``fnmatch`` alike); the automaton of ``extract/globs.py`` reads each path once."""
    import time

    name = "a" * 250
    tree(tmp_path, {f"{name}.py": FUNC, f"{name}b/x.py": FUNC})
    hostile = "*a*a*a*a*a*a*a*a*b"
    started = time.process_time()
    kept = paths(ExtractionConfig(root_path=str(tmp_path), include_patterns=[hostile]))
    dropped = paths(ExtractionConfig(root_path=str(tmp_path), include_patterns=["**/*.py"],
                                     exclude_patterns=[hostile + "/"]))
    assert time.process_time() - started < 5  # about 0.01 s; minutes with a backtracking regex
    assert kept == []
    assert dropped == [f"{name}.py"]
    rx = compile_globs([hostile])
    assert rx is not None and rx.match("a" * 20 + "b") and not rx.match("a" * 5000)


def test_glob_syntax() -> None:
    """The syntax docs/configuration.md states, one case each."""
    cases = {
        "*.py": (["a.py", ".py"], ["d/a.py", "a.pyc"]),
        "**/*.py": (["a.py", "d/e/a.py"], ["a.js"]),
        "src/**": (["src/a", "src/d/a.py"], ["srcx/a"]),
        "a/**/b": (["a/b", "a/x/y/b"], ["ab", "a/xb"]),
        "?.go": (["x.go"], ["/.go", "xy.go"]),
        "[ab]*.rs": (["a.rs", "bz.rs"], ["c.rs"]),
        "[!ab]*.rs": (["c.rs"], ["a.rs"]),
        "[]x": (["[]x"], ["x"]),
        "./lib/*.ts": (["lib/a.ts"], ["./lib/a.ts"]),
    }
    for pattern, (good, bad) in cases.items():
        rx = compile_globs([pattern])
        assert rx is not None
        for path in good:
            assert rx.match(path), (pattern, path)
        for path in bad:
            assert not rx.match(path), (pattern, path)


def test_hard_links_are_read_once(tmp_path: Path) -> None:
    # Payload: 2,000 hard links to one 454 KB file; each was read and extracted again
    # (more than 10 minutes at 3 files/s).
    big = "".join(f"def f{i}(a):\n    b = a + {i}\n    return b\n\n\n" for i in range(200))
    tree(tmp_path, {"a.py": big, "lone.py": FUNC})
    (tmp_path / "d").mkdir()
    for i in range(300):
        os.link(tmp_path / "a.py", tmp_path / "d" / f"l{i:03}.py")
    result = extract_units(ExtractionConfig(root_path=str(tmp_path)))
    assert sorted({u.path for u in result.units}) == ["a.py", "lone.py"]
    assert len(result.skipped) == 300
    assert result.skipped[0] == SkippedFile("d/l000.py", "same file as a.py (hard link)")
    assert {s.reason for s in result.skipped} == {"same file as a.py (hard link)"}
