"""litellm's import through the model layer (``llm.providers.litellm``)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import gc
from pytest_summarybench.llm.providers import litellm

module = litellm()
frozen, tracked = gc.get_freeze_count(), len(gc.get_objects())
assert litellm() is module
assert gc.isenabled()
assert module.drop_params and module.suppress_debug_info
print(frozen, tracked)
"""


def test_litellm_import_leaves_its_objects_out_of_the_collector() -> None:
    """The objects the import makes (some 300,000: litellm, the openai SDK, their
    pydantic models) are frozen out of the cyclic collector, which every full collection
    of the run, of pytest's session end and of the interpreter's exit would otherwise
    walk (docs/performance.md, "Start-up and teardown"); the collector stays on for
    what the run makes afterwards. On the base, nothing is frozen."""
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    frozen, tracked = map(int, done.stdout.split())
    assert frozen > 100_000
    assert tracked < frozen // 20
