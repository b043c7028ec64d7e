"""Where the bundled sample lives: the codebase of the default run, with its hand-written
retrieval queries and downstream tasks beside it (``fixtures/README.md``).

The repository keeps them under ``fixtures/`` at its top, where tests and docs name them;
a built package (wheel or sdist install) carries a copy as ``pytest_summarybench/_sample/``
with the same layout, made by ``setup.py``'s build step. An editable install or a source
checkout has no copy and reads ``fixtures/`` itself.
"""

from __future__ import annotations

from pathlib import Path

#: The package folder (this module is in its ``core/``).
_PACKAGE = Path(__file__).resolve().parents[1]
#: The copy inside an installed package.
PACKAGED = _PACKAGE / "_sample"
#: The repository's own folder (an editable install or a source checkout).
CHECKOUT = _PACKAGE.parent / "fixtures"
#: The name of the sample codebase's folder; its queries file and tasks folder are named
#: after it (``queries/sample_codebase.jsonl``, ``tasks/sample_codebase/``).
NAME = "sample_codebase"


def sample_dir() -> Path:
    """The folder holding the sample codebase, its ``queries/`` and its ``tasks/``."""
    return PACKAGED if (PACKAGED / NAME).is_dir() else CHECKOUT


def bundled_codebase() -> Path:
    """The sample codebase of the default run, wherever this package was installed from."""
    return sample_dir() / NAME
