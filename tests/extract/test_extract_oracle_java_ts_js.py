"""Java, TypeScript and JavaScript extraction against each language's own parser.

The oracles (``benchmarks/extraction/oracles/java.java`` on the JDK's ``com.sun.source``
tree API, ``typescript.cjs``/``javascript.cjs`` on the ``typescript`` npm package) list
(path, name, type, start line, end line) in our conventions; ``compare.py`` compares both
ways. Two kinds of test:

* on the small files of ``test_extract_names_java_ts_js``: exact agreement, whenever the
  toolchain is installed;
* on real repositories (google/gson, apache/commons-lang, sindresorhus/got,
  colinhacks/zod, expressjs/express, lodash/lodash, axios/axios) exported under
  ``$SUMMARYBENCH_ORACLE_REPOS`` (unset: skipped): >= 99.5% both ways after the
  by-design differences of docs/extraction.md, and no two extracted units of a file
  sharing type and qualified name. Skipped with a reason when a repository is absent.

Nothing is downloaded here: without ``javac``, ``node`` or the ``typescript`` package the
tests skip and name the install command (docs/performance.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks" / "extraction"))

from compare import compare, default_oracle, load_rules  # noqa: E402
from test_extract_names_java_ts_js import JAVA, JS, TS  # noqa: E402

pytestmark = pytest.mark.oracle

REPOS = Path(os.environ.get("SUMMARYBENCH_ORACLE_REPOS", ""))
TS_INSTALL = "npm install --prefix ~/.cache/summarybench/oracles typescript@5"
JDK_INSTALL = "apt-get install -y default-jdk-headless"

REPOSITORIES = [
    ("java", "gson", "google/gson"),
    ("java", "commons-lang", "apache/commons-lang"),
    ("typescript", "got", "sindresorhus/got"),
    ("typescript", "zod", "colinhacks/zod"),
    ("javascript", "express", "expressjs/express"),
    ("javascript", "lodash", "lodash/lodash"),
    ("javascript", "axios", "axios/axios"),
]


def _need_toolchain(language: str) -> None:
    """Skip, naming the install command, when the oracle cannot run here."""
    if language == "java":
        if shutil.which("java") is None or shutil.which("javac") is None:
            pytest.skip(f"no JDK (java, javac) on PATH: {JDK_INSTALL}")
        return
    if shutil.which("node") is None:
        pytest.skip("no node on PATH: apt-get install -y nodejs npm")
    with tempfile.TemporaryDirectory() as empty:
        probe = subprocess.run(
            ["node", str(REPO / "benchmarks/extraction/oracles/typescript.cjs"), empty],
            capture_output=True, check=False)
    if probe.returncode == 3:
        pytest.skip(f"the typescript npm package is missing: {TS_INSTALL}")


@pytest.mark.parametrize("language", ["java", "typescript", "javascript"])
def test_oracle_agrees_exactly_on_the_naming_fixtures(language: str,
                                                      tmp_path: Path) -> None:
    _need_toolchain(language)
    name, text = {"java": ("Adapters.java", JAVA), "typescript": ("got.ts", TS),
                  "javascript": ("api.js", JS)}[language]
    (tmp_path / name).write_text(text)
    report = compare(str(tmp_path), language, default_oracle(language), {})
    assert report.oracle_total > 0
    assert report.unexplained == []
    assert report.matched == report.oracle_total == report.extracted_total
    assert report.collisions == []


@pytest.mark.parametrize(("language", "folder", "origin"), REPOSITORIES,
                         ids=[r[1] for r in REPOSITORIES])
def test_oracle_agreement_on_real_repositories(language: str, folder: str,
                                               origin: str) -> None:
    if not os.environ.get("SUMMARYBENCH_ORACLE_REPOS"):
        pytest.skip("set SUMMARYBENCH_ORACLE_REPOS to the folder holding the exported "
                    "repositories (docs/performance.md says how)")
    root = REPOS / folder
    if not root.is_dir():
        pytest.skip(f"{origin} is not exported at {root} (set SUMMARYBENCH_ORACLE_REPOS "
                    "to the folder holding it; docs/performance.md says how)")
    _need_toolchain(language)
    report = compare(str(root), language, default_oracle(language), load_rules(language))
    assert report.oracle_total > 250
    unexplained = report.unexplained[:20]
    assert report.recall_by_design >= 0.995, unexplained
    assert report.precision_by_design >= 0.995, unexplained
    # No two units of one file share type and qualified name (identical declarations
    # aside): over every unit extracted from the repository, not only compared ones.
    assert report.collisions == [], report.collisions[:5]
