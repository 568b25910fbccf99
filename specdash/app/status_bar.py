"""The header line: host, connection state and server state."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from specdash.app.styles import load_tcss
from specdash.hosts.base import ConnectionStatus, ConnState
from specdash.logs.state import ServerState

_CONN_STYLE = {
    ConnState.CONNECTING: "status-warn",
    ConnState.CONNECTED: "status-ok",
    ConnState.RETRYING: "status-warn",
    ConnState.FAILED: "status-bad",
}
_SERVER_STYLE: dict[str, str] = {ServerState.READY: "status-ok", ServerState.STARTING: "status-warn",
                                 ServerState.CRASHED: "status-bad", ServerState.STOPPED: "status-dim",
                                 "stopping": "status-warn"}


class StatusBar(Static):
    """One line docked at the top: ``specdash │ host │ ● connection │ mode │ server: state (detail)``.

    The app sets :attr:`connection` (a ConnectionStatus) and :attr:`server_state` (a
    :class:`~specdash.logs.state.ServerState`, from the log pane's reader or the lifecycle's poll) /
    :attr:`server_detail` (str); retry countdowns are refreshed every second.
    """

    DEFAULT_CSS = load_tcss(__file__)
    COMPONENT_CLASSES = {"status-ok", "status-warn", "status-bad", "status-dim"}

    connection: reactive[ConnectionStatus | None] = reactive(None)
    server_state: reactive[str] = reactive(ServerState.UNKNOWN)
    server_detail: reactive[str] = reactive("")
    mode: reactive[str] = reactive("")
    #: while specdash stops or restarts the server it launched: what it is doing (``"SIGTERM sent to process group
    #: 812; SIGKILL after 15 s"``); the header says ``stopping`` with it instead of the last polled state (a server
    #: still answers /health until it exits, and SGLang often takes 10-30 s to)
    stopping: reactive[str] = reactive("")

    def __init__(self, host_name: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.host_name = host_name

    def on_mount(self) -> None:
        self.set_interval(1.0, self.refresh)

    def render(self) -> Text:
        return self.line(self.size.width or 1000)

    def line(self, width: int) -> Text:
        """The header for ``width`` columns: ``specdash │ host │ ● connection │ mode │ server: state (detail)``, the
        mode (``read-only``) before the server so that a long detail never pushes it off. When the full line does not
        fit, it is compacted in this order rather than cut at the edge: narrower separators and no ``host`` label, the
        mode without its details (the replay bar at the bottom shows the replay clock), a shorter host name, the
        server's detail cut with ``…`` (to 24, then 12 columns, then none), and only then no mode; the server state is
        always shown (``specdash`` itself goes last)."""
        shown = self.stopping or self.server_detail
        detail = f" ({shown})" if shown else ""
        full = self._build(self.host_name, self.mode, detail, wide=True)
        if full.cell_len <= width:
            return full
        mode_short = self.mode.split("  ")[0]
        host_short = self.host_name if len(self.host_name) <= 20 else self.host_name[:19] + "…"
        with_mode = [(self.host_name, self.mode), (self.host_name, mode_short), (host_short, mode_short)]
        for tries in (with_mode, [(self.host_name, ""), (host_short, "")]):
            for minimum in (min(len(detail), 24), min(len(detail), 12), 0):
                for host, mode in tries:
                    room = width - self._build(host, mode, "", wide=False).cell_len
                    if room >= minimum:
                        cut = detail if len(detail) <= room else (detail[:room - 2] + "…)" if room >= 6 else "")
                        return self._build(host, mode, cut, wide=False)
        text = self._build(host_short, "", "", wide=False)
        text.truncate(width, overflow="ellipsis")
        return text

    def _build(self, host: str, mode: str, detail: str, wide: bool) -> Text:
        conn = self.connection
        sep = "  │  " if wide else " │ "
        text = Text()
        text.append(" specdash ", style="bold reverse")
        text.append("  host " if wide else " ", style="dim")
        text.append(host, style="bold")
        text.append(sep, style="dim")
        if conn is not None:
            style = self.get_component_rich_style(_CONN_STYLE[conn.state], partial=True)
            text.append("● ", style=style)
            text.append(conn.describe(), style=style)
        if mode:
            text.append(f"{sep}{mode}", style="bold")
        text.append(f"{sep}server: ", style="dim")
        state = "stopping" if self.stopping else self.server_state
        sstyle = self.get_component_rich_style(_SERVER_STYLE.get(state, "status-dim"), partial=True)
        text.append(state, style=sstyle)
        if detail:
            text.append(detail, style="dim")
        return text
