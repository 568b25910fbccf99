"""BlockSparkline: a one-row sparkline of block characters (``▁▂▃▄▅▆▇█``), cheap enough to redraw several times a
second while a log streams (Textual's ``Sparkline`` computes its buckets with fractions: ~1.5 ms per draw here)."""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip
from textual.widget import Widget

BLOCKS = "▁▂▃▄▅▆▇█"


def spark_text(data: list[float], width: int) -> str:
    """``data`` (oldest first) drawn in ``width`` cells: one cell per value, left-aligned, when they fit; else the
    values are split into ``width`` consecutive buckets and each cell shows its bucket's maximum (as Textual's
    ``Sparkline(summary_function=max)`` does). A cell's height is its value between the min and the max of what is
    shown (a flat series is drawn at the bottom). Returns "" for no data or no width."""
    if not data or width <= 0:
        return ""
    n = len(data)
    shown = data if n <= width else [max(data[i * n // width:(i + 1) * n // width]) for i in range(width)]
    lo, hi = min(shown), max(shown)
    span = hi - lo
    if span <= 0:
        return BLOCKS[0] * len(shown)
    top = len(BLOCKS) - 1
    return "".join(BLOCKS[round((v - lo) / span * top)] for v in shown)


class BlockSparkline(Widget):
    """A sparkline of :attr:`data` (set it to redraw). Coloured by the ``color`` CSS rule."""

    DEFAULT_CSS = """
    BlockSparkline { height: 1; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._data: list[float] = []

    @property
    def data(self) -> list[float]:
        """The values drawn, oldest first."""
        return self._data

    @data.setter
    def data(self, values: list[float]) -> None:
        if values != self._data:
            self._data = list(values)
            self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        style = self.rich_style
        if y != 0:
            return Strip.blank(width, style)
        text = spark_text(self._data, width)
        return Strip([Segment(text, style), Segment(" " * (width - len(text)), style)], width)
