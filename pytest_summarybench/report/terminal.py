"""The ranking table printed in pytest's terminal summary."""

from __future__ import annotations

from ..schemas import EVAL_FAMILIES, BenchmarkReport


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def terminal_lines(report: BenchmarkReport) -> list[str]:
    """A fixed-width ranking table, then which families ran and what failed."""
    header = ["rank", "model", "overall", *EVAL_FAMILIES, "scored", "errors"]
    rows = [[str(r.rank), r.model_id, f"{r.overall_score:.3f}",
             *(_fmt(getattr(r.scores, f)) for f in EVAL_FAMILIES),
             str(r.scored_items), str(r.errors)] for r in report.rankings]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 1 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    meta = report.metadata
    out = [f"{meta.codebase.sampled_code_units} of {meta.codebase.total_code_units} units "
           f"({', '.join(meta.codebase.languages)}); run {meta.benchmark_id}",
           line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    out.append("families run: " + (", ".join(meta.families_run) or "none"))
    for family, reason in meta.families_skipped.items():
        out.append(f"skipped {family}: {reason}")
    for err in report.errors:
        out.append(f"errors: {err.model_id} {err.evaluator}: {err.count} "
                   f"(e.g. {err.examples[0]})")
    return out
