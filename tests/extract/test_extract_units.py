"""Unit content, ids and docstrings; determinism across processes; cheap imports."""

from __future__ import annotations

import io
import json
import logging
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.core.progress import Phase, Progress
from pytest_summarybench.extract import ExtractionConfig, ExtractionFilters, extract_units
from pytest_summarybench.schemas.units import CodeUnit

DATA = Path(__file__).parent / "data" / "langs"

PY = '''class Greeter:
    """Says hello.

    Politely.
    """

    def greet(self, name):
        """Return a greeting."""
        return f"hello {name}"

    def only_doc(self):
        """Nothing else."""
'''

JAVA = '''class Greeter {
    /**
     * Return a greeting.
     * @param name who
     */
    @Deprecated
    String greet(String name) {
        return "hello " + name;
    }
}
'''


def units_of(root: Path, strip: bool) -> dict[tuple[str, str], CodeUnit]:
    config = ExtractionConfig(root_path=str(root), strip_docstrings=strip,
                              filters=ExtractionFilters(min_lines=1))
    return {(u.path, u.name): u for u in extract_units(config).units}


def test_python_docstrings_recorded_and_optionally_stripped(tmp_path: Path) -> None:
    (tmp_path / "g.py").write_text(PY)
    kept = units_of(tmp_path, strip=False)
    stripped = units_of(tmp_path, strip=True)

    greet = kept[("g.py", "Greeter.greet")]
    assert greet.docstring == "Return a greeting."
    assert greet.content == ('def greet(self, name):\n    """Return a greeting."""\n'
                             '    return f"hello {name}"')
    assert stripped[("g.py", "Greeter.greet")].content == \
        'def greet(self, name):\n    return f"hello {name}"'
    assert stripped[("g.py", "Greeter.only_doc")].content == "def only_doc(self):\n    ..."
    assert kept[("g.py", "Greeter")].docstring == "Says hello.\n\nPolitely."
    assert '"""Says hello.' not in stripped[("g.py", "Greeter")].content
    assert stripped[("g.py", "Greeter")].docstring == "Says hello.\n\nPolitely."
    # Stripping changes what models see, not what the unit is.
    assert greet.id == stripped[("g.py", "Greeter.greet")].id
    assert greet.metadata == stripped[("g.py", "Greeter.greet")].metadata


def test_leading_doc_comments_recorded_and_optionally_stripped(tmp_path: Path) -> None:
    (tmp_path / "G.java").write_text(JAVA)
    unit = units_of(tmp_path, strip=False)[("G.java", "Greeter.greet")]
    assert unit.docstring == "Return a greeting.\n@param name who"
    assert unit.content.startswith("/**\n * Return a greeting.")
    assert unit.metadata.start_line == 2  # lines span the content models see
    assert unit.metadata.decorators == ["Deprecated"]
    stripped = units_of(tmp_path, strip=True)[("G.java", "Greeter.greet")]
    assert stripped.content == ('@Deprecated\nString greet(String name) {\n'
                                '    return "hello " + name;\n}')
    assert stripped.metadata.start_line == 6
    assert stripped.docstring == unit.docstring
    assert stripped.id == unit.id


def test_content_is_dedented_and_ids_are_unique(tmp_path: Path) -> None:
    (tmp_path / "g.py").write_text(PY)
    units = units_of(tmp_path, strip=False)
    assert units[("g.py", "Greeter.greet")].content.startswith("def greet")
    ids = [u.id for u in units.values()]
    assert len(set(ids)) == len(ids)


_DUMP = """
import json, sys
from pytest_summarybench.extract import ExtractionConfig, extract_units
from pytest_summarybench.schemas.units import CodeUnit
units = extract_units(ExtractionConfig(root_path=sys.argv[1])).units
print(json.dumps([u.to_json_dict() for u in units]))
"""


def test_identical_across_processes() -> None:
    runs = [subprocess.run([sys.executable, "-c", _DUMP, str(DATA)], capture_output=True,
                           text=True, check=True, env={"PYTHONHASHSEED": seed, "PATH": ""})
            for seed in ("1", "2")]
    first, second = (json.loads(r.stdout) for r in runs)
    assert first == second
    here = [u.to_json_dict() for u in extract_units(ExtractionConfig(root_path=str(DATA))).units]
    assert here == first
    keys = [(u["path"], u["metadata"]["startLine"], u["type"], u["name"]) for u in first]
    assert keys == sorted(keys)


def test_package_import_is_cheap() -> None:
    code = ("import sys, pytest_summarybench.extract as e; "
            "print(any(m.startswith('tree_sitter') for m in sys.modules)); "
            "e.ExtractionConfig(root_path='.')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_units_validate_and_round_trip_through_json() -> None:
    units = extract_units(ExtractionConfig(root_path=str(DATA))).units
    for unit in units:
        data = unit.to_json_dict()
        assert CodeUnit.model_validate(data) == unit
        assert json.loads(json.dumps(data)) == data


def test_worker_processes_give_the_same_result() -> None:
    one = extract_units(ExtractionConfig(root_path=str(DATA), workers=1))
    two = extract_units(ExtractionConfig(root_path=str(DATA), workers=2))
    assert [u.to_json_dict() for u in one.units] == [u.to_json_dict() for u in two.units]
    assert one.warnings == two.warnings and one.skipped == two.skipped


def test_prepared_files_pickle_whole() -> None:
    """Worker results cross processes by pickle: every field of every unit survives."""
    from pytest_summarybench.extract.files import walk
    from pytest_summarybench.extract.parallel import extract_one

    config = ExtractionConfig(root_path=str(DATA))
    for source in walk(config, []):
        _, extracted, _ = extract_one(source, config)
        assert extracted is not None and extracted.source == b""
        assert extracted.size == Path(source.abspath).stat().st_size
        copy = pickle.loads(pickle.dumps(extracted))
        assert copy == extracted
        assert any(u.data is not None for u in copy.units)


def test_file_units_record_their_own_doc(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text('#!/usr/bin/env python\n"""Tools for greeting."""\n\n'
                                     'import os\n\n\ndef f(a):\n    b = a\n    return b\n')
    (tmp_path / "pkg.go").write_text("// Copyright 2024 Example.\n\n// Package pkg greets.\n"
                                     "package pkg\n\nfunc F() int {\n\treturn 1\n}\n")
    kept = units_of(tmp_path, strip=False)
    stripped = units_of(tmp_path, strip=True)
    assert kept[("mod.py", "mod.py")].docstring == "Tools for greeting."
    assert stripped[("mod.py", "mod.py")].content == \
        "#!/usr/bin/env python\n\nimport os\n\n\ndef f(a):\n    b = a\n    return b\n"
    assert kept[("pkg.go", "pkg.go")].docstring == "Package pkg greets."
    go = stripped[("pkg.go", "pkg.go")]
    assert go.content.startswith("// Copyright 2024 Example.\n\npackage pkg\n")
    assert go.metadata.start_line == 1


def test_auto_workers_follow_size_cpus_and_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_summarybench.extract import parallel
    from pytest_summarybench.extract.files import walk

    config = ExtractionConfig(root_path=str(DATA))  # workers=0: auto, the default
    sources = walk(config, [])
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    # Earlier tests of a whole suite may leave threads behind (tqdm's monitor, say):
    # the thread rule is checked on its own below.
    monkeypatch.setattr(parallel, "can_fork", lambda: True)
    assert parallel.worker_count(config, sources) == 1  # far below PARALLEL_MIN_BYTES
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    assert parallel.worker_count(config, sources) == 2
    assert parallel.worker_count(config.model_copy(update={"workers": 1}), sources) == 1
    monkeypatch.setattr(parallel, "can_fork", lambda: False)
    assert parallel.worker_count(config, sources) == 1
    monkeypatch.undo()
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:  # no fork with other threads running, and spawn would cost more than it saves
        assert not parallel.can_fork()
        assert parallel.worker_count(config, sources) == 1
    finally:
        stop.set()
        thread.join()
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 1)
    assert parallel.worker_count(config, sources) == 1


def test_auto_workers_give_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_summarybench.extract import parallel

    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(parallel, "can_fork", lambda: True)  # whatever threads others left
    used: list[int] = []
    count = parallel.worker_count
    monkeypatch.setattr(parallel, "worker_count",
                        lambda *a: used.append(count(*a)) or used[-1])
    auto = extract_units(ExtractionConfig(root_path=str(DATA)))
    one = extract_units(ExtractionConfig(root_path=str(DATA), workers=1))
    assert used == [2, 1]
    assert [u.to_json_dict() for u in auto.units] == [u.to_json_dict() for u in one.units]
    assert auto.units == one.units
    assert (auto.warnings, auto.skipped) == (one.warnings, one.skipped)


class Recording(Progress):
    """Progress that keeps its last phase, to read its counts."""

    last: Phase | None = None

    def phase(self, name: str, total: int, *, unit: str = "item",
              costed: bool = False) -> Phase:
        self.last = super().phase(name, total, unit=unit, costed=costed)
        return self.last


def _dying_chunk(chunk: list[Any], config: ExtractionConfig,
                 done: Callable[[int], None] | None = None, spill: Any = None) -> list[Any]:
    """``_extract_chunk`` for the test below: worker processes die at once (the parent's
    pid comes through the environment, so this holds under fork and spawn alike)."""
    from pytest_summarybench.extract.parallel import extract_one

    if str(os.getpid()) != os.environ["SB_TEST_PARENT_PID"]:
        os._exit(3)
    outcomes = [extract_one(source, config) for source in chunk]
    if done is not None:
        done(len(chunk))
    return outcomes


def test_a_dead_worker_share_is_extracted_here(monkeypatch: pytest.MonkeyPatch,
                                               caplog: pytest.LogCaptureFixture) -> None:
    from pytest_summarybench.extract import parallel

    monkeypatch.setattr(parallel, "_extract_chunk", _dying_chunk)
    monkeypatch.setenv("SB_TEST_PARENT_PID", str(os.getpid()))
    progress = Recording(enabled=False)
    with caplog.at_level(logging.WARNING, logger="pytest_summarybench.extract"):
        two = extract_units(ExtractionConfig(root_path=str(DATA), workers=2), progress)
    one = extract_units(ExtractionConfig(root_path=str(DATA), workers=1))
    assert two.units == one.units
    assert any("a worker process failed" in r.getMessage() for r in caplog.records)
    # The dead worker's share is counted once, when it is extracted here.
    assert progress.last is not None and progress.last.done == progress.last.total


@pytest.mark.parametrize("workers", [1, 2])
def test_progress_counts_every_file_and_changes_nothing(workers: int) -> None:
    stream = io.StringIO()
    progress = Recording(stream, tty=False, moment_s=0.0, interval_s=0.0)
    shown = extract_units(ExtractionConfig(root_path=str(DATA), workers=workers), progress)
    plain = extract_units(ExtractionConfig(root_path=str(DATA), workers=workers))
    assert shown.units == plain.units and shown.warnings == plain.warnings
    lines = stream.getvalue().splitlines()
    assert lines and all(line.startswith("summarybench extraction: ") for line in lines)
    found = progress.last
    assert found is not None and found.total >= shown.files_scanned > 0
    assert found.done == found.total and f"{found.total}/{found.total} " in lines[-1]


def test_the_cycle_collector_is_paused_only_during_extraction() -> None:
    import gc

    assert gc.isenabled()
    extract_units(ExtractionConfig(root_path=str(DATA)))
    assert gc.isenabled()
    gc.disable()
    try:
        extract_units(ExtractionConfig(root_path=str(DATA)))
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(NotADirectoryError):
        extract_units(ExtractionConfig(root_path=str(DATA / "missing")))
    assert gc.isenabled()
