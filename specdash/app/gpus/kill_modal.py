"""Confirmation before killing GPU processes: names PID, user, command line, GPU and MiB of each."""

from __future__ import annotations

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from specdash.app.gpus.render import confirm_lines
from specdash.app.keymap import key_for
from specdash.app.styles import load_tcss
from specdash.gpu.classify import ClassifiedProcess


def _es(n: int) -> str:
    return "" if n == 1 else "es"


class KillConfirmScreen(ModalScreen[bool]):
    """Lists ``processes`` (to be killed) and ``refused`` (``(process, reason)`` never signalled); dismisses with
    True for "kill" (``y``) and False for cancel (``n``/``escape``)."""

    DEFAULT_CSS = load_tcss(__file__)
    BINDINGS = [
        Binding("y", "confirm", "Kill", id="gpus.kill_confirm"),
        Binding("escape,n", "cancel", "Cancel", id="gpus.kill_cancel"),
    ]

    def __init__(self, processes: list[ClassifiedProcess], refused: list[tuple[ClassifiedProcess, str]],
                 grace_s: float, groups: dict[int, list[int]] | None = None,
                 launched_pgids: frozenset[int] = frozenset()) -> None:
        """``groups``: process group -> the PIDs of its live members (from the process table; a group left out:
        its members are unknown); ``launched_pgids``: the groups of the server launched from this console."""
        super().__init__()
        self.processes, self.refused, self.grace_s = processes, refused, grace_s
        self.groups = groups or {}
        self.launched_pgids = launched_pgids

    def signals(self) -> tuple[str, list[str]]:
        """What ``y`` signals, as :func:`specdash.gpu.kill.safe_kill` does it: a whole process group when every live
        member of the group is a target, else each target PID alone. Returns (the title's subject, one plain line
        per group: ``process group 5681: all 2 of its processes`` or ``PID 5761 only: 1 of the 3 processes of
        process group 5681 (the other 2 are not signalled)``)."""
        by_group: dict[int | None, set[int]] = {}
        for p in self.processes:
            by_group.setdefault(p.pgid if p.pgid is not None and p.pgid > 1 else None, set()).add(p.pid)
        whole, lines, alone = 0, [], 0
        for pgid, pids in sorted(by_group.items(), key=lambda kv: kv[0] or 0):
            members = set(self.groups.get(pgid, ())) if pgid is not None else set()
            listed = ", ".join(str(pid) for pid in sorted(pids))
            if members and members <= pids:
                whole += 1
                lines.append(f"process group {pgid}: all {len(members)} of its process{_es(len(members))} "
                             f"(PID {listed})")
            elif members:
                alone += len(pids)
                others = len(members - pids)
                lines.append(f"PID {listed} only: {len(pids)} of the {len(members)} processes of process group "
                             f"{pgid} (the other {others} {'is' if others == 1 else 'are'} not signalled)")
            else:
                alone += len(pids)
                lines.append(f"PID {listed}" + (f" (process group {pgid}: its members are not known)" if pgid
                                                else ""))
        parts = []
        if whole:
            parts.append(f"{whole} process group{'' if whole == 1 else 's'}")
        if alone:
            parts.append(f"{alone} process{_es(alone)}")
        return " and ".join(parts), lines

    def compose(self) -> ComposeResult:
        mib = sum(p.used_mib or 0 for p in self.processes if p.source == "driver")
        unknown = any(p.source == "device files" or (p.source == "driver" and p.used_mib is None)
                      for p in self.processes)
        crashed = all(p.process_class == "orphan" for p in self.processes)
        what, groups = self.signals()
        if crashed:
            what += " of a crashed server"
        held = f"{mib} MiB" + (" + an unknown amount" if unknown else "")
        launched = sorted({p.pgid for p in self.processes if p.pgid in self.launched_pgids})
        with Vertical(id="kill-dialog"):
            yield Static(f"Kill {what} holding {held}?", id="kill-title")
            with VerticalScroll(id="kill-list"):
                for line in confirm_lines(self.processes):
                    yield Static(line, classes="kill-target")
                for proc, reason in self.refused:
                    yield Static(f"[$foreground-muted]not killed: PID {proc.pid} — {reason}[/]", classes="kill-refused")
            how = "\n".join(f"SIGTERM to {line}" for line in groups)
            yield Static(escape(f"{how}\nSIGKILL after {self.grace_s:g} s; every PID's start time is re-checked before "
                                "each signal."), id="kill-how")
            if launched:
                yield Static(f"Process group {', '.join(map(str, launched))} is the server launched from this console: "
                             f"{key_for(self, 'server.stop')} stops it whole (every process of its group) and waits "
                             "for its GPU memory.",
                             id="kill-launched")
            with Horizontal(id="kill-buttons"):
                yield Button(f"Kill ({key_for(self, 'gpus.kill_confirm')})", variant="error", id="kill")
                yield Button(f"Cancel ({key_for(self, 'gpus.kill_cancel')})", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "kill")

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
