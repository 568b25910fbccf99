"""MetricsStrip: current accept length, accept rate, gen throughput, running/queued requests and KV usage, each
with a sparkline over the last minutes (of log time), plus the accept-rate consistency check."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Grid, Horizontal
from textual.widget import Widget
from textual.widgets import Label, Static

from specdash.app.log.sparkline import BlockSparkline
from specdash.app.styles import load_tcss
from specdash.logs.metrics import METRICS, LiveMetrics

#: Sparklines cover the last SPARK_WINDOW_S seconds of log time, at most SPARK_SAMPLES decode lines.
SPARK_WINDOW_S = 300.0
SPARK_SAMPLES = 120


def _fmt(name: str, value: float | None) -> str:
    if value is None:
        return "–"
    if name in ("running_reqs", "queued_reqs"):
        return f"{value:.0f}"
    if name == "gen_throughput":
        return f"{value:,.0f}"
    if name == "token_usage":
        return f"{value:.0%}"
    return f"{value:.2f}"


class MetricCell(Horizontal):
    """``label value`` and a sparkline."""

    def __init__(self, name: str) -> None:
        super().__init__(id=f"metric-{name}", classes="metric-cell")
        self.metric = name

    def compose(self) -> ComposeResult:
        yield Label(METRICS[self.metric][0], classes="metric-label")
        yield Label("–", classes="metric-value")
        yield BlockSparkline(classes="metric-spark")

    def on_mount(self) -> None:
        self._value = self.query_one(".metric-value", Label)
        self._spark = self.query_one(BlockSparkline)
        self._shown = "–"

    def update(self, value: float | None, history: list[float]) -> None:
        """Show ``value`` and its ``history`` (oldest first); nothing is redrawn when neither changed."""
        text = _fmt(self.metric, value)
        if text != self._shown:
            self._shown = text
            self._value.update(text, layout=False)  # (8 columns, one row: its size never changes)
        self._spark.data = history


class MetricsStrip(Widget):
    """Shown once the first decode sample arrives; :meth:`update_from` refreshes it."""

    DEFAULT_CSS = load_tcss(__file__)

    def compose(self) -> ComposeResult:
        with Grid(id="metric-grid"):
            for name in METRICS:
                yield MetricCell(name)
        yield Static("", id="metric-check")

    def update_from(self, metrics: LiveMetrics) -> None:
        """Redraw from ``metrics`` (cheap: a few hundred values)."""
        if not metrics.samples:
            self.display = False
            return
        self.display = True
        for cell in self.query(MetricCell):
            cell.update(metrics.current(cell.metric), metrics.recent(cell.metric, SPARK_WINDOW_S, SPARK_SAMPLES))
        cons = metrics.consistency()
        trusted = len(metrics.samples) - metrics.untrusted_kept
        text = f"{len(metrics.samples)} decode samples, {trusted} steady-state"
        if cons is not None:
            text += f" · {cons.describe()}"
        last = metrics.samples[-1]
        if not last.trusted:
            text += f" · last sample not trusted: {last.reason}"
        self.query_one("#metric-check", Static).update(text, layout=False)  # (one row, the strip's width)
