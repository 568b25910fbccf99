"""StartupBar: start-up phases with elapsed times, and a progress bar + ETA during CUDA graph capture."""

from __future__ import annotations

import time

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import ProgressBar, Static

from specdash.app.styles import load_tcss
from specdash.logs.startup import StartupTracker


def phases_text(tracker: StartupTracker, stall: dict | None = None) -> str:
    """``weights ✓ 6 s · KV cache ✓ 0 s · CUDA graph (target) ▶ 12 s`` (phases seen so far); with ``stall``
    (:meth:`specdash.logs.analyzer.LogAnalyzer.live_stall`) the running phase reads
    ``⚠ 1354 s, no line for 700 s (expected ≤ 600 s): stalled?``."""
    parts = []
    current = tracker.current
    for phase in tracker.phases.values():
        if phase.state == "pending" and phase.name != current:
            continue
        elapsed = phase.elapsed_s
        if phase.state == "done":
            parts.append(f"{phase.label} ✓ {elapsed:.0f} s" if elapsed is not None else f"{phase.label} ✓")
        elif stall is not None and stall["phase"] == phase.name:
            parts.append(f"{phase.label} ⚠ {stall['running_s']:.0f} s, no line for {stall['silent_s']:.0f} s "
                         f"(expected ≤ {stall['expected_s']:.0f} s): stalled?")
        else:
            running_s = tracker.running_s(phase.name)
            running = f" {running_s:.0f} s" if running_s is not None else ""
            parts.append(f"{phase.label} ▶{running}")
    return " · ".join(parts)


class StartupBar(Widget):
    """Visible while the server is starting."""

    DEFAULT_CSS = load_tcss(__file__)
    #: Monotonic clock used for the ETA countdown (replaceable in tests).
    clock = staticmethod(time.monotonic)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._last_line_at = self.clock()

    def compose(self) -> ComposeResult:
        yield Static("", id="startup-phases")
        with Horizontal(id="startup-capture"):
            yield ProgressBar(total=100, show_eta=False, id="startup-progress")
            yield Static("", id="startup-eta")

    def line_arrived(self) -> None:
        """Note that a line arrived now (the ETA counts down from the last line's time)."""
        self._last_line_at = self.clock()

    def silent_s(self) -> float:
        """Seconds (of :attr:`clock`) since the last line arrived."""
        return self.clock() - self._last_line_at

    def update_from(self, tracker: StartupTracker, stall: dict | None = None) -> None:
        """Redraw from ``tracker`` (and ``stall``, see :func:`phases_text`); hides itself when no start is in
        progress."""
        if not tracker.active:
            self.display = False
            return
        self.display = True
        self.query_one("#startup-phases", Static).update("starting: " + phases_text(tracker, stall))
        progress = tracker.progress()
        capture = self.query_one("#startup-capture")
        if progress is None:
            capture.display = False
            return
        capture.display = True
        fraction, source = progress
        self.query_one(ProgressBar).update(progress=round(fraction * 100, 1))
        eta = tracker.eta_s(self.clock() - self._last_line_at)
        label = "capture" if source == "tqdm" else "capture (ETA from the previous start)"
        eta_text = f"ETA {eta:.0f} s" if eta is not None else "ETA unknown"
        self.query_one("#startup-eta", Static).update(f" {label}: {fraction:.0%} · {eta_text}")
