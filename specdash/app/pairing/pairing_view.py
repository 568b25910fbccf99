"""``PairingView``: the compact pairing section (about 100 x 12 cells) of the launch-builder pane."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from specdash.app.styles import load_tcss
from specdash.sglang.pairing.report import PairingReport

_MARK = {"error": "✗", "warning": "!", "info": "·"}


class PairingView(Widget):
    """Shows a :class:`PairingReport`: one summary line, errors and warnings with their fixes, the layer map (one
    row per party, boundaries that match what SGLang captures in the success colour, others highlighted), then the
    info lines. Scrolls when longer than the section.

    Call :meth:`show` with a report (or None and a note such as ``reading configs…``). The rendered plain text is
    available as :attr:`plain` (tests, copy).
    """

    DEFAULT_CSS = load_tcss(__file__)
    COMPONENT_CLASSES = {
        "pairing--error", "pairing--warning", "pairing--info", "pairing--match", "pairing--mismatch",
        "pairing--label", "pairing--fix",
    }

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.report: PairingReport | None = None
        self.note: str = ""
        self.border_title = "pairing"

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("no pairing yet: set the model and draft paths", style="dim"), id="pairing-body")

    @property
    def plain(self) -> str:
        """The text currently shown, without styles."""
        return self._build().plain

    def show(self, report: PairingReport | None, note: str = "") -> None:
        """Render ``report`` (None ⇒ only ``note`` or a placeholder). ``note``: one line shown first (e.g. which
        host the files came from, or why no report)."""
        self.report = report
        self.note = note
        if report is None:
            self.border_title = "pairing"
        else:
            errors = sum(d.severity == "error" for d in report.diagnostics)
            warnings = sum(d.severity == "warning" for d in report.diagnostics)
            self.border_title = f"pairing — {errors} error(s), {warnings} warning(s)"
        if self.is_mounted:
            self.query_one("#pairing-body", Static).update(self._build())

    def on_mount(self) -> None:
        self.query_one("#pairing-body", Static).update(self._build())

    # -- rendering -------------------------------------------------------------------------------------------------

    def _style(self, name: str):
        try:
            return self.get_component_rich_style(name, partial=True)
        except Exception:  # noqa: BLE001 - not mounted yet: unstyled
            return ""

    def _build(self) -> Text:
        text = Text()
        if self.note:
            text.append(self.note + "\n", style=self._style("pairing--info"))
        report = self.report
        if report is None:
            if not self.note:
                text.append("no pairing yet: set the model and draft paths", style="dim")
            return text
        text.append(f"{report.algorithm} ", style="bold")
        text.append(f"[{report.source}]", style=self._style("pairing--label"))
        if report.algorithm == "EAGLE3":
            text.append("  SGLang captures ")
            text.append(str(report.captured_boundaries), style="bold")
            ids = report.declared_ids
            text.append(f"  draft ids {ids}" if ids is not None else "  draft ids: none (default)")
        if report.suggested_ids is not None:
            text.append("  write ids ", style=self._style("pairing--fix"))
            text.append(str(report.suggested_ids), style="bold")
        text.append("\n")
        serious = [d for d in report.diagnostics if d.severity != "info"]
        infos = [d for d in report.diagnostics if d.severity == "info"]
        self._diagnostics(text, serious)
        if report.layer_map is not None:
            self._layer_map(text, report)
        self._diagnostics(text, infos)
        if not report.diagnostics:
            text.append("no findings\n", style=self._style("pairing--match"))
        text.rstrip()
        return text

    def _diagnostics(self, text: Text, diagnostics) -> None:
        for diag in diagnostics:
            style = self._style(f"pairing--{diag.severity}")
            text.append(f"{_MARK.get(diag.severity, '?')} {diag.code}: ", style=style)
            text.append(diag.message + "\n")
            if diag.fix:
                text.append("    fix: ", style=self._style("pairing--fix"))
                text.append(diag.fix.description + "\n")

    def _layer_map(self, text: Text, report: PairingReport) -> None:
        layer_map = report.layer_map
        assert layer_map is not None
        captured = set(report.captured_boundaries)
        lo, hi = layer_map.capturable
        text.append(f"layer map (boundary b = after b of {layer_map.num_layers} blocks; capturable {lo}..{hi})\n",
                    style=self._style("pairing--label"))
        width = max(len(row.label) for row in layer_map.rows)
        for row in layer_map.rows:
            text.append(f"  {row.label:<{width}} ")
            for i, b in enumerate(row.boundaries):
                if i:
                    text.append(" ")
                ok = b in captured if row.kind != "captured" else lo <= b <= hi
                text.append(f"{b:>3}", style=self._style("pairing--match" if ok else "pairing--mismatch"))
            if row.note:
                text.append(f"  {row.note}", style=self._style("pairing--info"))
            text.append("\n")
