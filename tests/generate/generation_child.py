"""Run the generation phase in a child process (killed with SIGKILL by a test).

Usage: python generation_child.py STORE BASE_URL RUN_ID PARALLEL
The store must already hold the run's units; the model is ``openai/gpt-4o`` at BASE_URL.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    store_path, base_url, run_id, parallel = argv
    from pytest_summarybench.context import RunContext
    from pytest_summarybench.evaluators.registry import BUILTIN_FAMILIES
    from pytest_summarybench.generate import run_generation
    from pytest_summarybench.settings import load_settings
    from pytest_summarybench.store import Store

    base = Path(store_path).parent
    settings = load_settings(None, {
        "models.test": [{"provider": "openai", "model": "gpt-4o", "apiEndpoint": base_url}],
        "output.directory": str(base / "out")}, base_dir=base, families=BUILTIN_FAMILIES)
    ctx = RunContext(settings, Store(store_path), run_id)
    report = run_generation(ctx, parallel=int(parallel), progress=False)
    print("\n".join(report.lines()), flush=True)
    return 0 if report.errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
