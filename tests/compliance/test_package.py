"""The package surface: public names resolve, the plugin module stays cheap to import
(pytest imports it on every run: it is an entry point), and the options the READMEs name
are the ones it declares."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest_summarybench.compliance as compliance
import pytest_summarybench.compliance.plugin as plugin


def test_public_names_resolve() -> None:
    for name in compliance.__all__:
        assert getattr(compliance, name) is not None
    documented = '"""Adds one to x for the demo pipeline."""\nx = 1\n'
    assert compliance.scan_code(documented).primary is None


def test_plugin_import_loads_no_scanner_model_layer_or_scipy() -> None:
    probe = ("import sys, pytest_summarybench.compliance.plugin; "
             "print(sorted(m for m in sys.modules if m.startswith(('litellm', 'scipy', "
             "'numpy', 'pytest_summarybench.compliance.', 'pytest_summarybench.llm'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "['pytest_summarybench.compliance.plugin']"


def test_documented_compliance_options_exist() -> None:
    root = Path(__file__).resolve().parents[2]
    docs = "".join((root / name).read_text(encoding="utf-8")
                   for name in ("README.md", "benchmarks/compliance/README.md"))
    documented = set(re.findall(r"(--compliance-[a-z-]+[a-z])", docs))
    declared = set(re.findall(r'"(--compliance-[a-z-]+)"', Path(plugin.__file__).read_text()))
    assert documented == declared
