"""The dry run against the real run: calls estimated vs calls made, with all four families.

Usage::

    python benchmarks/perf/dry_run_accuracy.py [--units 20]

Two models under test and a judge (also the helper) of other families, and a task model,
all on the scripted fake provider of ``tests/fakes/scripted_provider.py``; judge (pointwise and
pairwise), contrastive (``methods: [embedding, llm]``), retrieval (the bundled queries) and
downstream (the bundled task set, the task model answering) on ``--units`` sampled units of
the sample codebase. First ``--sb-dry-run`` (which must make no call), then the real run on
the same fresh output directory; the provider counts the calls it answered, by phase. It
prints both per phase and the difference of the totals (the bar: within 5%).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402
from tests.fakes.scripted_provider import ScriptedProvider  # noqa: E402


def config(base_url: str, out: Path, units: int) -> str:
    model = "{{provider: local, model: {name}, apiEndpoint: '{url}', family: {family}}}"
    return "\n".join([
        "codebase: {root: '%s'}" % (ROOT / "fixtures" / "sample_codebase"),
        "models:",
        "  test:",
        "    - " + model.format(name="alpha-7b", url=base_url, family="alpha"),
        "    - " + model.format(name="beta-7b", url=base_url, family="beta"),
        "  judge:",
        "    - " + model.format(name="gamma-judge", url=base_url, family="gamma"),
        "evaluation:",
        f"  sampleSize: {units}",
        "  parallel: 8",
        "  contrastive: {methods: [embedding, llm]}",
        "  downstream:",
        "    completionModel: local/delta-tasks",
        f"    apiEndpoint: '{base_url}'",
        f"output: {{directory: '{out}'}}",
        ""])


def estimated(stdout: str) -> tuple[Counter[str], int]:
    """(calls per phase, total) from the dry-run table."""
    per_phase: Counter[str] = Counter()
    total = 0
    for line in stdout.splitlines():
        cells = line.split()
        if len(cells) >= 4 and cells[0] == "total":
            total = int(cells[1].replace(",", ""))
        elif len(cells) >= 4 and re.fullmatch(r"[\d,]+", cells[3]) and "/" in cells[1]:
            phase = "downstream" if cells[0].startswith("downstream") else cells[0]
            per_phase[phase] += int(cells[3].replace(",", ""))
    return per_phase, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=20)
    args = parser.parse_args()
    provider = ScriptedProvider()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(
            respond=provider, max_lifetime_s=3600) as server:
        work = Path(tmp)
        (work / "summarybench.yaml").write_text(config(server.base_url, work / "out",
                                                       args.units))
        command = [sys.executable, "-m", "pytest", "-p", "summarybench",
                   str(ROOT / "benchmarks" / "summary"), "--sb-config",
                   str(work / "summarybench.yaml"), "-q", "-p", "no:cacheprovider",
                   "--rootdir", str(ROOT)]
        dry = subprocess.run([*command, "--sb-dry-run"], cwd=ROOT, capture_output=True,
                             text=True)
        calls_after_dry_run = server.chat_requests
        real = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        made = provider.counts()
    per_phase, total = estimated(dry.stdout)
    print("\n".join(line for line in dry.stdout.splitlines()
                    if line.startswith(("summarybench dry run", "phase", "generation",
                                        "judge", "contrastive", "retrieval", "downstream",
                                        "total"))))
    print(f"dry run: exit {dry.returncode}, provider calls during it: {calls_after_dry_run}")
    print(f"real run: exit {real.returncode}: {real.stdout.strip().splitlines()[-1]}")
    print("phase              estimated  made")
    for phase in sorted(set(per_phase) | {p for p, n in made.items() if n}):
        print(f"{phase:<18} {per_phase.get(phase, 0):>9}  {made.get(phase, 0):>4}")
    real_total = sum(made.values())
    diff = (total - real_total) / real_total if real_total else float("nan")
    print(f"total              {total:>9}  {real_total:>4}  ({diff:+.1%}; bar within 5%: "
          f"{'met' if abs(diff) <= 0.05 else 'not met'})")


if __name__ == "__main__":
    main()
