"""The package surface: public names resolve, and the plugin module stays cheap to import
(the harness imports it on every pytest run)."""

from __future__ import annotations

import subprocess
import sys

import pytest_summarybench.compliance as compliance


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
