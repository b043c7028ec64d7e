"""Build step of the package (the rest of its metadata is in pyproject.toml).

The sample codebase of the default run, with its queries and tasks, is kept at the top of
the repository, in ``fixtures/``, where the tests and docs name it. A built package must
carry it too, or ``summarybench run`` fails outside a checkout: ``build_py`` copies it into
the package as ``pytest_summarybench/_sample/``, in the same layout, which
``pytest_summarybench/core/sample.py`` looks for first. An editable install is left as it is; it
reads ``fixtures/`` in place.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
#: What ships, relative to fixtures/ (also listed in MANIFEST.in, for the sdist).
SAMPLE = ("sample_codebase", "queries/sample_codebase.jsonl", "tasks/sample_codebase")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")


class BuildPyWithSample(build_py):
    """``build_py`` that also copies the bundled sample into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        source = HERE / "fixtures"
        target = Path(self.build_lib) / "pytest_summarybench" / "_sample"
        for rel in SAMPLE:
            src, dst = source / rel, target / rel
            if not src.exists():
                raise SystemExit(f"setup.py: {src} is missing; the package cannot be built "
                                 "without the bundled sample (fixtures/README.md)")
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dst, ignore=IGNORED, dirs_exist_ok=True)
            else:
                shutil.copy2(src, dst)


setup(cmdclass={"build_py": BuildPyWithSample})
