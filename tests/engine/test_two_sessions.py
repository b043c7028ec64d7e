"""Two sessions of one configuration on one output folder, at once (README: "Model
answers, keys and concurrent runs").

Both used to build their vector index in ``work/<run id>``: the second session deleted
and rebuilt the collections while the first one's tests searched them, and the first one
ended with its retrieval items failed (250 of them: ``chromadb ... Number of requested
results 0``); a search between two of the rebuild's batches would have ranked each unit
among part of the units, without an error. Each session now works in a folder of its own
(``engine/work_dir.py``), removed when it ends.

The order is forced, not left to timing: the first session builds its index and scores
one retrieval item, then waits until the second session has built its own (its tests are
about to start), then scores the rest. The vectors are the lexical embedding's: the index
and its folder are under test, not the embedding (MiniLM made most of both sessions' CPU
time).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.fakes.project import write_bench_module

ROOT = Path(__file__).resolve().parents[2]
HANDSHAKE = '''
    import os
    import time
    from pathlib import Path

    import pytest

    ROLE = os.environ.get("SB_ROLE")
    SEEN = []


    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(session):
        # The controller prepared (its index is built) when collection finished.
        Path(f"{ROLE}-testing").touch()


    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(item):
        SEEN.append(item.nodeid)
        if ROLE == "first" and len(SEEN) == 2:  # one item scored against our index
            deadline = time.monotonic() + 600
            while not Path("second-testing").exists() and time.monotonic() < deadline:
                time.sleep(0.2)
'''


def _session(pytester: pytest.Pytester, role: str) -> subprocess.Popen[str]:
    env = {**os.environ, "SB_ROLE": role}
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "summarybench", "-p", "no:cacheprovider",
         "-p", "no:randomly", "-p", "no:xdist", "--sb-output", "out", "--sb-no-validate",
         "-q"], cwd=pytester.path, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)


def _wait_for(path: Path, first: subprocess.Popen[str], seconds: float = 600) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if first.poll() is not None:
            pytest.fail(f"the first session ended early:\n{first.communicate()[0][-4000:]}")
        assert time.monotonic() < deadline, f"no {path.name} after {seconds} s"
        time.sleep(0.2)


def test_two_sessions_on_one_output_folder_never_share_an_index(
        pytester: pytest.Pytester) -> None:
    pytester.makeconftest(textwrap.dedent(HANDSHAKE))
    write_bench_module(pytester)
    fixtures = ROOT / "fixtures"
    pytester.makefile(".yaml", summarybench=textwrap.dedent(f"""
        name: two-sessions
        codebase: {{root: "{fixtures / 'sample_codebase'}"}}
        evaluation:
          judge: {{enabled: false}}
          contrastive: {{enabled: false}}
          downstream: {{enabled: false}}
          retrieval:
            enabled: true
            queriesFile: "{fixtures / 'queries' / 'sample_codebase.jsonl'}"
            embeddingModel: builtin/hashing
        """))
    first = _session(pytester, "first")
    try:
        _wait_for(pytester.path / "first-testing", first)
        second = _session(pytester, "second")
        out_second = second.communicate(timeout=900)[0]
        out_first = first.communicate(timeout=900)[0]
    finally:
        for process in (first, locals().get("second")):
            if process is not None and process.poll() is None:
                process.kill()
    assert first.returncode == 0, out_first[-4000:]
    assert second.returncode == 0, out_second[-4000:]
    for text in (out_first, out_second):
        assert "failed" not in text.splitlines()[-1], text[-4000:]
        assert "Number of requested results" not in text
    runs = {p.name: json.loads((p / "results.json").read_text())
            for p in (pytester.path / "out" / "runs").iterdir()}
    assert len(runs) == 2
    # The same configuration on the same code: the same retrieval scores, every item
    # scored in both sessions.
    scores = [{r["modelId"]: (r["scores"], r["scoredItems"], r["errors"])
               for r in data["rankings"]} for data in runs.values()]
    assert scores[0] == scores[1]
    assert all(errors == 0 for _, _, errors in scores[0].values()), scores[0]
    assert [data["errors"] for data in runs.values()] == [[], []]
    # Each session's folder is gone with it.
    assert [p for p in (pytester.path / "out" / "work").rglob("*") if p.is_file()] == []
