"""Geometry of the HTML report's inline SVG charts.

Coordinates are computed here and the template draws them as SVG elements, so the report
needs no charting library and opens offline; every label reaches the page through the
template's autoescaping.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..aggregate.recommend import language_name
from ..schemas import BenchmarkReport

LABEL_W = 230
PLOT_W = 400
ROW_H = 26
PAD = 30
LABEL_GAP = 14
#: Widest a heatmap may get (the page is 1100px wide with its margins).
HEATMAP_MAX_W = 1000


@dataclass
class Bar:
    label: str
    y: float
    width: float
    score: float | None
    """None for a model with no scored unit (drawn as no bar, titled "-")."""
    ci: tuple[float, float] | None
    """CI whisker x coordinates, when the model has an interval."""
    group: str


@dataclass
class BarChart:
    width: int
    height: int
    x0: int
    plot_w: int
    bars: list[Bar] = field(default_factory=list)
    ticks: list[tuple[float, str]] = field(default_factory=list)


@dataclass
class Point:
    label: str
    x: float
    y: float
    cost: float
    score: float
    label_y: float = 0.0
    """Where the label's baseline goes: above the point, pushed down past the label
    before it so that models with close scores stay readable."""


@dataclass
class Scatter:
    width: int = 560
    height: int = 340
    left: int = 60
    top: int = 20
    plot_w: int = 440
    plot_h: int = 260
    points: list[Point] = field(default_factory=list)
    x_ticks: list[tuple[float, str]] = field(default_factory=list)
    y_ticks: list[tuple[float, str]] = field(default_factory=list)
    note: str = ""


@dataclass
class Cell:
    x: float
    y: float
    fill: str
    text: str
    n: int | None = None
    """Units of the language scored for the model (None where it has no score)."""
    low_n: bool = False
    """Too few units to compare (``n`` below ``LOW_N``): drawn faded with a dashed border."""
    model: str = ""
    language: str = ""
    """The cell's model and language key (the explorer's filters when it links there)."""

    @property
    def n_text(self) -> str:
        return "" if self.n is None else f"n={self.n}" + ("*" if self.low_n else "")


@dataclass
class Heatmap:
    width: int
    height: int
    columns: list[tuple[float, str]] = field(default_factory=list)
    rows: list[tuple[float, str]] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)
    cell_w: int = 90
    cell_h: int = 36
    left: int = LABEL_W
    low_n: int = 5
    """Cells with fewer units than this are marked (see ``Cell.low_n``)."""

    @property
    def any_low_n(self) -> bool:
        return any(c.low_n for c in self.cells)


def score_bars(report: BenchmarkReport) -> BarChart:
    """Overall score per model with its bootstrap interval, in rank order (an empty chart
    when no model has a score: the template then leaves it out)."""
    chart = BarChart(width=LABEL_W + PLOT_W + PAD * 2, height=PAD * 2 + ROW_H *
                     max(1, len(report.rankings)), x0=LABEL_W, plot_w=PLOT_W)
    chart.ticks = [(LABEL_W + PLOT_W * t, f"{t:.2f}") for t in (0, 0.25, 0.5, 0.75, 1.0)]
    for i, r in enumerate(report.rankings):
        ci = r.confidence_interval
        chart.bars.append(Bar(
            label=r.model_id, y=PAD + i * ROW_H,
            width=PLOT_W * max(0.0, r.measured_overall or 0.0),
            score=r.measured_overall, group=r.significance_group,
            ci=(LABEL_W + PLOT_W * ci[0], LABEL_W + PLOT_W * ci[1]) if ci else None))
    return chart


def _nice_ticks(high: float) -> list[float]:
    if high <= 0:
        return [0.0]
    step = high / 4
    return [step * i for i in range(5)]


def cost_quality(report: BenchmarkReport) -> Scatter:
    """Cost per 1K summaries against overall score, one point per priced, scored model."""
    chart = Scatter()
    scored = [r for r in report.rankings if r.units]
    priced = [(r, report.costs.by_model[r.model_id].per_1k_summaries) for r in scored
              if r.model_id in report.costs.by_model
              and report.costs.by_model[r.model_id].per_1k_summaries is not None]
    unpriced = [r.model_id for r in scored if r not in [p[0] for p in priced]]
    notes = []
    if unpriced:
        notes.append("No known cost for: " + ", ".join(unpriced))
    unscored = [r.model_id for r in report.rankings if not r.units]
    if unscored:
        notes.append("No score for: " + ", ".join(unscored))
    chart.note = ". ".join(notes)
    if not priced or all(c == 0 for _, c in priced):
        # Nothing to plot (no price known), or every point at $0: a pile of labels.
        return chart
    max_cost = max(c for _, c in priced if c is not None)
    x_high = max_cost * 1.1 if max_cost > 0 else 1.0
    for t in _nice_ticks(x_high):
        chart.x_ticks.append((chart.left + chart.plot_w * t / x_high, f"${t:.2f}"))
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        chart.y_ticks.append((chart.top + chart.plot_h * (1 - t), f"{t:.2f}"))
    for r, cost in priced:
        assert cost is not None
        chart.points.append(Point(
            label=r.model_id, cost=cost, score=r.overall_score,
            x=chart.left + chart.plot_w * cost / x_high,
            y=chart.top + chart.plot_h * (1 - r.overall_score)))
    previous: float = -LABEL_GAP
    for p in sorted(chart.points, key=lambda p: (p.y, p.label)):
        p.label_y = max(p.y - 6, previous + LABEL_GAP)
        previous = p.label_y
    chart.height = max(chart.height, int(previous) + 40)
    return chart


def heat_color(score: float) -> str:
    """Red (0) through yellow to green (1), light enough for dark text."""
    hue = 120 * min(1.0, max(0.0, score))
    return f"hsl({hue:.0f}, 65%, 72%)"


def language_heatmap(report: BenchmarkReport, low_n: int = 5) -> Heatmap | None:
    """Overall score per model (rows) and language (columns), each cell with its n (the
    units behind the mean); None when no model has a score by language."""
    languages = list(report.detailed.by_language)
    models = [r.model_id for r in report.rankings if r.units]
    if not languages or not models:
        return None
    cell_w = max(48, min(90, (HEATMAP_MAX_W - LABEL_W - PAD) // max(1, len(languages))))
    chart = Heatmap(width=LABEL_W + cell_w * len(languages) + PAD,
                    height=PAD + 36 * len(models) + PAD, cell_w=cell_w, low_n=low_n)
    chart.columns = [(LABEL_W + chart.cell_w * (j + 0.5), language_name(k))
                     for j, k in enumerate(languages)]
    for i, model_id in enumerate(models):
        y = PAD + i * chart.cell_h
        chart.rows.append((y + chart.cell_h / 2, model_id))
        for j, key in enumerate(languages):
            group = report.detailed.by_language[key]
            score = group.overall_by_model.get(model_id)
            # Reports saved before units_by_model existed: the language's unit count.
            n = (group.units_by_model.get(model_id, group.units)
                 if score is not None else None)
            chart.cells.append(Cell(
                x=LABEL_W + j * chart.cell_w, y=y,
                fill=heat_color(score) if score is not None else "#eeeeee",
                text=f"{score:.2f}" if score is not None else "-", n=n,
                low_n=n is not None and n < low_n, model=model_id, language=key))
    return chart
