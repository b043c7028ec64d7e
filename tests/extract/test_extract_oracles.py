"""Extraction agrees with each language's own parser on real, well-known repositories.

For Go, Python, Ruby, PHP, Rust and Kotlin: (path, name, type, start line, end line)
both ways, by ``benchmarks/extraction/compare.py`` and the oracles beside it, after the
by-design differences named in docs/extraction.md; and no two units of one file share
type and qualified name. The repositories are not part of this project: the tests run
when ``SUMMARYBENCH_ORACLE_REPOS`` names a folder holding them (one sub-folder per name
in ``REPOS``, at the commits given; docs/extraction.md says how to get them), and skip,
saying what to install, when a language's toolchain is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import pytest

from benchmarks.extraction.compare import (
    ORACLES,
    Report,
    Unit,
    collisions,
    compare,
    extracted,
)

pytestmark = pytest.mark.oracle

REPOS: dict[str, tuple[str, str, str]] = {
    # name: (language, repository, commit)
    "cobra": ("go", "spf13/cobra", "adbc8813901bba65827259daa8e22ff94ec1f30e"),
    "gin": ("go", "gin-gonic/gin", "dcaa4296d111981ffb31ac3eba90bb63e1eb5ab9"),
    "prometheus": ("go", "prometheus/prometheus", "d15adb9ad7e5d9fbde3a9a8f30200593a5a14d86"),
    "requests": ("python", "psf/requests", "1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e"),
    "flask": ("python", "pallets/flask", "2ac89889f4cc330eabd50f295dcef02828522c69"),
    "sinatra": ("ruby", "sinatra/sinatra", "cb22afd7902b566b6eaba6c4ea89739494a65d12"),
    "jekyll": ("ruby", "jekyll/jekyll", "202df571314ba1d18e9fccd81d12aaad4a703c38"),
    "guzzle": ("php", "guzzle/guzzle", "2779e868a00289e1b1fd854af030c43a06f4bcb4"),
    "composer": ("php", "composer/composer", "eba7baa59eb1b59246cf9800b0120fe78915b6ac"),
    "laravel": ("php", "laravel/framework", "bd71b45fbb7e672957bf6ff61baddefe15fbca6a"),
    "ripgrep": ("rust", "BurntSushi/ripgrep", "3fce3b5bb0236da2df6d99672afb8a719642eca7"),
    "serde": ("rust", "serde-rs/serde", "1023d077510b4aef36a41ef56fdb7798568a2654"),
    "okhttp": ("kotlin", "square/okhttp", "1682d9bac8c03dffde2969b0b74d47649d0dbb52"),
    "moshi": ("kotlin", "square/moshi", "889013ec2edb8d8034902662a1dc8c4f3b3f8111"),
    "kotlinpoet": ("kotlin", "square/kotlinpoet", "be2de914ce6eb3694092ed4e0f28626cbce1ffe0"),
    "kotlinx.coroutines": ("kotlin", "Kotlin/kotlinx.coroutines",
                           "792ac67bdcd5592e5764753e623a9e8c6e4bcb29"),
}

# Where the npm packages of the oracles are installed (as the TypeScript oracle's).
CACHE = Path.home() / ".cache" / "summarybench" / "oracles"

TARGET = 0.995
# Repositories held to lower figures than TARGET (the measured ones, rounded down), with
# the reason in docs/extraction.md; none at present: Kotlin meets the target since
# KotlinSpec.repair re-parses what tree-sitter-kotlin wrongly rejects.
FLOORS: dict[str, tuple[float, float]] = {}


def _kotlin_lib() -> Path:
    default = CACHE / "node_modules" / "kotlin-compiler" / "lib"
    return Path(os.environ.get("KOTLIN_COMPILER_LIB", str(default)))


def oracle_command(language: str) -> list[str] | None:
    """The oracle's command where it is not the default ``oracles/<language>.<ext>``."""
    if language == "kotlin":
        lib = _kotlin_lib()
        classpath = os.pathsep.join(str(lib / jar)
                                    for jar in ("kotlin-compiler.jar", "kotlin-stdlib.jar"))
        return ["java", "-cp", classpath, str(ORACLES / "kotlin.java")]
    return None


@cache
def missing_toolchain(language: str) -> str | None:
    """None when the language's oracle can run here, else what to install."""
    if language == "python":
        return None
    if language == "go":
        return None if shutil.which("go") else \
            "go is not installed. Install with: apt-get install -y golang-go"
    if language == "ruby":
        return None if shutil.which("ruby") else \
            "ruby is not installed. Install with: apt-get install -y ruby"
    if language == "php":
        install = "npm install --prefix ~/.cache/summarybench/oracles php-parser@3"
        if not shutil.which("node"):
            return ("node is not installed. Install with: apt-get install -y nodejs npm && "
                    + install)
        check = subprocess.run(["node", str(ORACLES / "php.js"), "--check"],
                               capture_output=True, check=False)
        return None if check.returncode == 0 else f"php-parser is missing. Install with: {install}"
    if language == "rust":
        if not shutil.which("rustc"):
            return "rustc is not installed. Install with: apt-get install -y rustc (or rustup)"
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "probe.rs").write_text("struct Probe;\nimpl Probe { fn go(&self) {} }\n")
            out = subprocess.run([sys.executable, str(ORACLES / "rust.py"), tmp],
                                 capture_output=True, text=True, check=False)
        if '"Probe.go"' not in out.stdout:
            return ("this rustc cannot dump its AST as the oracle reads it "
                    f"(rustc -Zunpretty=ast-tree; tested with rustc 1.95): {out.stderr[-300:]}")
        return None
    if language == "kotlin":
        install = "npm install --prefix ~/.cache/summarybench/oracles kotlin-compiler@2.4.20"
        if not shutil.which("java"):
            return ("java is not installed. Install with: apt-get install -y default-jdk && "
                    + install)
        if not (_kotlin_lib() / "kotlin-compiler.jar").exists():
            return f"the Kotlin compiler's jars are missing. Install with: {install}"
        return None
    return f"no oracle for {language}"


def repo_root(name: str) -> str:
    base = os.environ.get("SUMMARYBENCH_ORACLE_REPOS")
    language, repository, commit = REPOS[name]
    if not base:
        pytest.skip("set SUMMARYBENCH_ORACLE_REPOS to a folder holding the repositories "
                    "(docs/extraction.md, section 'Go, Python, Ruby, PHP, Rust and Kotlin')")
    root = os.path.join(base, name)
    if not os.path.isdir(root):
        pytest.skip(f"{root} is missing: clone https://github.com/{repository} there and "
                    f"check out {commit}")
    return root


@cache
def report(name: str) -> Report:
    language = REPOS[name][0]
    return compare(repo_root(name), language, oracle_command(language))


@cache
def units(name: str) -> tuple[Unit, ...]:
    return tuple(extracted(repo_root(name), REPOS[name][0])[0])


@pytest.mark.parametrize("name", sorted(REPOS))
def test_agrees_with_the_languages_parser(name: str) -> None:
    language = REPOS[name][0]
    reason = missing_toolchain(language)
    if reason is not None:
        pytest.skip(reason)
    result = report(name)
    assert result.oracle_total > 200
    recall_floor, precision_floor = FLOORS.get(name, (TARGET, TARGET))
    unexplained = result.unexplained[:20]
    assert result.recall_by_design >= recall_floor, unexplained
    assert result.precision_by_design >= precision_floor, unexplained


@pytest.mark.parametrize("name", sorted(REPOS))
def test_units_of_a_file_have_distinct_names(name: str) -> None:
    """No two units of one file share type and qualified name (only the extractor runs)."""
    assert collisions(units(name)) == []
