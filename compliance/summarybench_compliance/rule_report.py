"""Per-rule detection on a labelled file: for each article's rule set, as a detector of its
own violation, the examples it missed and the ones it fired on wrongly; then the scanner's
primary-finding accuracy per stack, and its time per example.

Each example violates at most one article, so each rule set can be read as a binary
detector: it should fire on its article's non-compliant examples and on nothing else.
A primary prediction goes wrong either way: a missed violation, or a false alarm that wins
the tie-break.

Usage (the development part; the test part is for the final figure only)::

    python -m summarybench_compliance.rule_report independent_dev
    python -m summarybench_compliance.rule_report FILE --article 14 -v   # evidence too
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from .dataset import ARTICLES, dataset_path, load_examples
from .scanner import Scanner


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="a dataset file, or the name of a shipped one "
                                      "(independent_dev, independent_test, ...)")
    parser.add_argument("--article", type=int, action="append",
                        help="only these articles' rule sets (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the evidence")
    args = parser.parse_args()
    examples = load_examples(dataset_path(args.data, Path.cwd()))
    scanner = Scanner()
    started = time.perf_counter()
    results = [scanner.scan(e.code) for e in examples]
    per_example_ms = (time.perf_counter() - started) * 1000 / len(examples)
    for article in args.article or ARTICLES:
        misses, alarms, hits = [], [], 0
        for example, result in zip(examples, results, strict=True):
            fired = not result.result(article).passed
            own = example.label == str(article)
            if own and fired:
                hits += 1
            elif own:
                misses.append((example, result))
            elif fired:
                alarms.append((example, result))
        support = hits + len(misses)
        print(f"Art. {article}: caught {hits}/{support}, false alarms {len(alarms)}")
        for kind, rows in (("missed", misses), ("false alarm", alarms)):
            for example, result in rows:
                print(f"  {kind}: {example.id} [{example.idiom}] {example.template}"
                      f" (truth {example.label}, primary "
                      f"{result.primary.article if result.primary else 'none'})")
                if args.verbose:
                    for line in result.result(article).evidence:
                        print(f"      {line}")
    correct: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for example, result in zip(examples, results, strict=True):
        predicted = str(result.primary.article) if result.primary else "none"
        total[example.framework] += 1
        correct[example.framework] += predicted == example.label
    overall = sum(correct.values()) / len(examples)
    print(f"primary accuracy {overall:.1%} on {len(examples)}; "
          + ", ".join(f"{s} {correct[s]}/{total[s]}" for s in sorted(total)))
    print(f"{per_example_ms:.2f} ms per example (scan only, one process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
