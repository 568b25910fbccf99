"""Confirmation before killing GPU processes: names PID, user, command line, GPU and MiB of each."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from specdash.app.gpus.render import confirm_lines
from specdash.app.styles import load_tcss
from specdash.gpu.classify import ClassifiedProcess


class KillConfirmScreen(ModalScreen[bool]):
    """Lists ``processes`` (to be killed) and ``refused`` (``(process, reason)`` never signalled); dismisses with
    True for "kill" (``y``) and False for cancel (``n``/``escape``)."""

    DEFAULT_CSS = load_tcss(__file__)
    BINDINGS = [
        Binding("y", "confirm", "Kill", id="gpus.kill_confirm"),
        Binding("escape,n", "cancel", "Cancel", id="gpus.kill_cancel"),
    ]

    def __init__(self, processes: list[ClassifiedProcess], refused: list[tuple[ClassifiedProcess, str]],
                 grace_s: float) -> None:
        super().__init__()
        self.processes, self.refused, self.grace_s = processes, refused, grace_s

    def compose(self) -> ComposeResult:
        pids = sorted({p.pid for p in self.processes})
        mib = sum(p.used_mib or 0 for p in self.processes if p.source == "driver")
        unknown = any(p.source == "device files" or (p.source == "driver" and p.used_mib is None)
                      for p in self.processes)
        crashed = all(p.process_class == "orphan" for p in self.processes)
        what = "process" if len(pids) == 1 else "processes"
        if crashed:
            what += " of a crashed server"
        held = f"{mib} MiB" + (" + an unknown amount" if unknown else "")
        with Vertical(id="kill-dialog"):
            yield Static(f"Kill {len(pids)} {what} holding {held}?", id="kill-title")
            with VerticalScroll(id="kill-list"):
                for line in confirm_lines(self.processes):
                    yield Static(line, classes="kill-target")
                for proc, reason in self.refused:
                    yield Static(f"[$foreground-muted]not killed: PID {proc.pid} — {reason}[/]", classes="kill-refused")
            yield Static(f"SIGTERM to each process group (or PID), SIGKILL after {self.grace_s:g} s; every PID's "
                         "start time is re-checked before each signal.", id="kill-how")
            with Horizontal(id="kill-buttons"):
                yield Button("Kill (y)", variant="error", id="kill")
                yield Button("Cancel (esc)", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "kill")

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
