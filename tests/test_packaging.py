"""The built package carries the bundled sample (issue 21, item 2): the sdist holds
``fixtures/``'s sample, a wheel built from that sdist (what ``pip install .`` and an index
install do) holds it as ``pytest_summarybench/_sample/``, and the package resolves the
default codebase there when installed from the wheel, in a folder that is not a checkout.

The compliance benchmark's distribution (``compliance/``, issue 31 item 3) is built the same
way: its wheel carries its datasets and its test module, and ``summarybench compliance``
runs from the two installed wheels, in a folder that is not a checkout.

The builds use setuptools' PEP 517 backend directly, without network or build isolation
(setuptools comes with the ``dev`` extra). A fresh virtual environment with every
dependency would take minutes; the wheel is instead unpacked into a folder put first on
``PYTHONPATH``, over this environment's dependencies.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
COMPLIANCE = ROOT / "compliance" / "summarybench_compliance"
COMPLIANCE_DATA = sorted((COMPLIANCE / "data").glob("*.jsonl"))
#: What must ship, relative to fixtures/ (setup.py's SAMPLE).
SAMPLE = ("sample_codebase", "queries/sample_codebase.jsonl", "tasks/sample_codebase")


def _sample_files() -> set[str]:
    """Every file of the bundled sample, relative to fixtures/."""
    out: set[str] = set()
    for rel in SAMPLE:
        path = FIXTURES / rel
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()
                                               and "__pycache__" not in p.parts]
        out |= {p.relative_to(FIXTURES).as_posix() for p in files}
    return out


def _build(kind: str, source: Path, out: Path) -> Path:
    code = (f"from setuptools import build_meta as b; "
            f"print(b.build_{kind}({str(out)!r}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=source, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out / proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository's tracked and new files, as a fresh clone has them."""
    pytest.importorskip("setuptools", minversion="70.1",
                        reason="the dev extra's setuptools builds wheels by itself")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\n")
    copy = tmp_path_factory.mktemp("source")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, copy / rel)
    return copy


def _wheel_from_sdist(project: Path, base: Path) -> tuple[Path, set[str]]:
    """A wheel built from an sdist of ``project``, as pip builds one from a source folder
    or an index's sdist; and the sdist's file names (below its top folder)."""
    dist = base / "dist"
    dist.mkdir()
    sdist = _build("sdist", project, dist)
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        in_sdist = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        tar.extractall(base, filter="data")
    return _build("wheel", base / top, dist), in_sdist


@pytest.fixture(scope="module")
def wheel(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The summary package's wheel, built from its sdist."""
    built, in_sdist = _wheel_from_sdist(source, tmp_path_factory.mktemp("build"))
    sample = {f"fixtures/{rel}" for rel in _sample_files()}
    assert sample <= in_sdist, sorted(sample - in_sdist)[:5]
    return built


@pytest.fixture(scope="module")
def compliance_wheel(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compliance benchmark's wheel, built from its sdist (``compliance/``)."""
    built, in_sdist = _wheel_from_sdist(source / "compliance",
                                        tmp_path_factory.mktemp("build-compliance"))
    data = {f"summarybench_compliance/data/{p.name}" for p in COMPLIANCE_DATA}
    assert data <= in_sdist, sorted(data - in_sdist)
    return built


def test_wheel_carries_the_sample(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        prefix = "pytest_summarybench/_sample/"
        shipped = {n[len(prefix):] for n in names if n.startswith(prefix)}
        assert shipped == _sample_files()
        for rel in sorted(shipped):  # byte for byte
            assert zf.read(prefix + rel) == (FIXTURES / rel).read_bytes(), rel
        # So does every other file of the package that is not Python (templates, the
        # report's script, the tokenizer): each was missing once from a wheel.
        package = ROOT / "pytest_summarybench"
        for path in package.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts \
                    and path.suffix not in (".pyc",):
                rel = path.relative_to(ROOT).as_posix()
                assert rel in names, rel


def test_installed_wheel_resolves_the_sample_outside_a_checkout(wheel: Path,
                                                                 tmp_path: Path) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    empty = tmp_path / "empty"
    empty.mkdir()
    script = ("import pytest_summarybench, pytest_summarybench.core.sample as s; "
              "from pytest_summarybench.settings import load_settings; "
              "from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES; "
              "print(pytest_summarybench.__file__); print(s.bundled_codebase()); "
              "print(load_settings(None, families=BUILTIN_FAMILIES).codebase_root)")
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run([sys.executable, "-c", script], cwd=empty, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    module, bundled, default = proc.stdout.split("\n")[:3]
    packaged = site / "pytest_summarybench" / "_sample" / "sample_codebase"
    assert Path(module).is_relative_to(site)
    assert Path(bundled) == Path(default) == packaged
    # Its queries and tasks sit beside it, where the evaluators look.
    assert (packaged.parent / "queries" / "sample_codebase.jsonl").is_file()
    assert (packaged.parent / "tasks" / "sample_codebase" / "completion.jsonl").is_file()


def test_a_checkout_reads_the_sample_from_its_fixtures_folder() -> None:
    """An editable install or a source checkout has no packaged copy: the default run's
    codebase is the repository's ``fixtures/sample_codebase`` (the README's first command)."""
    from pytest_summarybench.core.sample import bundled_codebase

    assert bundled_codebase() == FIXTURES / "sample_codebase"
    assert bundled_codebase().is_dir()


def test_the_compliance_wheel_carries_its_data_and_test_module(compliance_wheel: Path) -> None:
    assert len(COMPLIANCE_DATA) == 7
    with zipfile.ZipFile(compliance_wheel) as zf:
        names = set(zf.namelist())
        for path in COMPLIANCE.rglob("*"):  # every file of the package, byte for byte
            if path.is_file() and "__pycache__" not in path.parts:
                rel = path.relative_to(COMPLIANCE.parent).as_posix()
                assert rel in names, rel
                assert zf.read(rel) == path.read_bytes(), rel
        [points] = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        entry_points = zf.read(points).decode()
    assert "summarybench_compliance = summarybench_compliance.plugin" in entry_points
    assert "[summarybench.commands]\ncompliance = summarybench_compliance.cli" in entry_points
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)


def test_summarybench_compliance_runs_from_the_installed_wheels(
        wheel: Path, compliance_wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    for built in (wheel, compliance_wheel):
        with zipfile.ZipFile(built) as zf:
            zf.extractall(site)
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
           "PYTHONPATH": str(site)}

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], cwd=empty, env=env,
                              capture_output=True, text=True, timeout=600)

    where = command("-c", "import summarybench_compliance.cli as c; print(c.SUITE)")
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(site)
    listed = command("-m", "pytest_summarybench.cli", "--help")
    assert "compliance" in listed.stdout, listed.stdout + listed.stderr
    ran = command("-m", "pytest_summarybench.cli", "compliance", "--test-mode", "--no-ollama")
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert "rule-scanner: 10 examples scored, 0 failed" in ran.stdout
    results = json.loads((empty / "summarybench-results" / "eval_results.json").read_text())
    assert results["num_examples"] == 10 and results["dataset"] == ["eval_data.jsonl"]
    held = command("-m", "pytest_summarybench.cli", "compliance", "--no-ollama", "--data",
                   "heldout_data", "--", "-k", "test_scanner")
    assert held.returncode == 0, held.stdout[-3000:] + held.stderr[-3000:]
    assert "20 passed, 20 deselected" in held.stdout
