"""``summarybench compare A B [--detailed]``: head to head of two models of a run, from
the store alone: winner, score difference, significance, pairwise record, strengths."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..core.printable import shown_name
from ._common import EXIT_OK, CliError, text_arg
from .report import add_store_arguments, explorer_of, load_report, store_path

if TYPE_CHECKING:
    from ..schemas import BenchmarkReport

_SHOWN_UNITS = 3


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "compare", help="compare two models of a run head to head",
        description="Compare two models on the units both were scored on, in the latest "
                    "complete run or the one --run names (from the store).",
        epilog="example: summarybench compare openai/gpt-4o anthropic/claude-sonnet-4 "
               "--detailed")
    parser.add_argument("model_a", metavar="A", type=text_arg,
                        help="a model id, or a part of it no other model's id contains "
                             "(fake-alpha or alpha for openai/fake-alpha)")
    parser.add_argument("model_b", metavar="B", type=text_arg,
                        help="another model, named the same way")
    parser.add_argument("--detailed", action="store_true",
                        help="also per-family tests, languages, code types and the units "
                             "where the two differ most, each with its address in the "
                             "run's explorer")
    add_store_arguments(parser)
    return parser


def resolve_model(name: str, report: BenchmarkReport) -> str:
    """A model id of the report from its full id, its name after ``provider/``, or a part
    of it that no other model's id contains (``alpha`` for ``openai/fake-alpha``)."""
    ids = [r.model_id for r in report.rankings]
    run = report.metadata.run
    where = f"run {run.id if run is not None else report.metadata.benchmark_id}"
    if not ids:
        raise CliError(f"{where} ranks no model (a validate-only run?); pick a run with "
                       "models with --run (`summarybench runs` lists them)")
    if name in ids:
        return name
    for candidates in ([m for m in ids if m.partition("/")[2] == name],
                       [m for m in ids if name.lower() in m.lower()]):
        if len(candidates) == 1:
            return candidates[0]
        if len(candidates) > 1:
            raise CliError(f"model {name!r} is ambiguous in {where}: it could be "
                           f"{', '.join(candidates)}; give more of the id")
    raise CliError(f"model {name!r} is not in {where}; its models are: {', '.join(ids)}")


def _unit_labels(args: argparse.Namespace, run_id: str) -> dict[str, str]:
    from ..store import Store

    store = Store(store_path(args))
    try:
        return {u.id: f"{u.language} {u.path} {u.name}" for u in store.load_units(run_id)}
    finally:
        store.close()


def _lines(report: BenchmarkReport, a: str, b: str, detailed: bool,
           labels: dict[str, str], explorer: str | None = None) -> list[str]:
    """The comparison's lines; with ``explorer`` (the run's explorer page as a URI), each
    unit listed ends with the address that opens it there."""
    from urllib.parse import urlencode

    from ..report.view import interval, num, pvalue, signed
    from ..report.wording import DIFFERENCES_NOTE, difference_text

    comparison = next((c for c in report.comparisons if {c.model_a, c.model_b} == {a, b}),
                      None)
    if comparison is None:
        run = report.metadata.run
        raise CliError(f"{a} and {b} share no scored unit in run "
                       f"{run.id if run is not None else report.metadata.benchmark_id}; "
                       "nothing to compare")
    c = comparison
    rank = {r.model_id: r for r in report.rankings}
    run = report.metadata.run
    out = [f"{c.model_a} vs {c.model_b} (run "
           f"{run.id if run is not None else report.metadata.benchmark_id}, "
           f"{c.units} shared units)"]
    if run is not None and not run.complete:
        out.append(f"PARTIAL RUN: {run.describe()}")
    for m in (c.model_a, c.model_b):
        r = rank[m]
        out.append(f"  {m}: rank {r.rank}, overall {num(r.measured_overall)} "
                   f"{interval(r.confidence_interval)}, group {r.significance_group or '-'}")
    verdict = (f"{c.winner} (p={pvalue(c.p_value)}, Holm-adjusted across the run's pairs)"
               if c.significant else
               f"no significant difference (p={pvalue(c.p_value)}); higher mean: {c.winner}")
    rec = c.pairwise_record
    out += [f"winner: {verdict}",
            f"difference: {difference_text(c)}",
            f"pairwise record: {c.model_a} {rec.a_wins} wins, {c.model_b} {rec.b_wins} wins, "
            f"{rec.ties} ties "
            f"({'pairwise judge verdicts' if c.pairwise_source == 'judge/pairwise' else 'units'})",
            f"{c.model_a} strengths:", *(f"  - {s}" for s in c.strengths_a or ["none measured"]),
            f"{c.model_b} strengths:", *(f"  - {s}" for s in c.strengths_b or ["none measured"])]
    if not detailed:
        return out
    tests = [t for t in report.statistics.significance_tests
             if (t.model_a, t.model_b) == (c.model_a, c.model_b)]
    out.append(f"tests (mean per-unit difference, A - B): {DIFFERENCES_NOTE}")
    for t in tests:
        out.append(f"  {t.metric:<12} {signed(t.mean_difference)} "
                   f"{interval(t.confidence_interval)} p={pvalue(t.p_value)} "
                   f"holm={pvalue(t.p_adjusted)} {'significant' if t.significant else 'n.s.'}"
                   f"; detectable {num(t.minimum_detectable_difference)} at 80% power")
    for title, groups in (("by language", report.detailed.by_language),
                          ("by code type", report.detailed.by_code_type)):
        out.append(f"{title}:")
        for key, g in groups.items():
            va, vb = g.overall_by_model.get(c.model_a), g.overall_by_model.get(c.model_b)
            diff = signed(va - vb) if va is not None and vb is not None else "-"
            out.append(f"  {key:<12} {num(va)} vs {num(vb)} ({diff}, {g.units} units)")
    scores = report.statistics.unit_scores
    shared = sorted(set(scores.get(c.model_a, {})) & set(scores.get(c.model_b, {})))
    diffs = sorted((scores[c.model_a][u] - scores[c.model_b][u], u) for u in shared)
    # Only the units a model wins (A - B above 0 for A, below 0 for B): with few units on
    # one side, the other's wins must not fill its list.
    for label, picked in ((f"units where {c.model_a} does best (A - B)",
                           [(d, u) for d, u in diffs[::-1] if d > 0]),
                          (f"units where {c.model_b} does best (A - B)",
                           [(d, u) for d, u in diffs if d < 0])):
        shown = picked[:_SHOWN_UNITS]
        if shown:
            out.append(f"{label}:")
            out += [f"  {labels.get(u, u)}: {signed(d)}" + (
                f"  {explorer}#{urlencode({'unit': u, 'a': c.model_a, 'b': c.model_b})}"
                if explorer else "") for d, u in shown]
    if explorer:
        out.append(f"every shared unit, where they disagree most first: {explorer}#"
                   + urlencode({"sort": "disagree", "a": c.model_a, "b": c.model_b}))
    return out


def run(args: argparse.Namespace) -> int:
    report = load_report(args)
    a = resolve_model(args.model_a, report)
    b = resolve_model(args.model_b, report)
    if a == b:
        raise CliError(f"compare needs two different models, got {a} twice")
    labels = _unit_labels(args, report.metadata.benchmark_id) if args.detailed else {}
    explorer = None
    if args.detailed and report.metadata.run is not None:
        page = explorer_of(args, report.metadata.run.id)
        explorer = page.resolve().as_uri() if page is not None else None
    for line in _lines(report, a, b, args.detailed, labels, explorer):
        # Model names, unit paths and names come from the store: escaped, one line each.
        print(shown_name(line))
    return EXIT_OK
