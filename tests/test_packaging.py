"""The built package carries the bundled sample (issue 21, item 2): the sdist holds
``fixtures/``'s sample, a wheel built from that sdist (what ``pip install .`` and an index
install do) holds it as ``pytest_summarybench/_sample/``, and the package resolves the
default codebase there when installed from the wheel, in a folder that is not a checkout.

The builds use setuptools' PEP 517 backend directly, without network or build isolation
(setuptools comes with the ``dev`` extra). A fresh virtual environment with every
dependency would take minutes; the wheel is instead unpacked into a folder put first on
``PYTHONPATH``, over this environment's dependencies.
"""

from __future__ import annotations

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
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from an sdist of the repository's tracked and new files, as pip
    builds one from a source folder or an index's sdist."""
    pytest.importorskip("setuptools", minversion="70.1",
                        reason="the dev extra's setuptools builds wheels by itself")
    base = tmp_path_factory.mktemp("build")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\n")
    copy = base / "source"
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, copy / rel)
    dist = base / "dist"
    dist.mkdir()
    sdist = _build("sdist", copy, dist)
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        in_sdist = {n.split("/", 2)[2] for n in tar.getnames() if n.count("/") >= 2
                    and n.split("/", 2)[1] == "fixtures"}
        tar.extractall(base, filter="data")
    assert _sample_files() <= in_sdist, sorted(_sample_files() - in_sdist)[:5]
    return _build("wheel", base / top, dist)


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
