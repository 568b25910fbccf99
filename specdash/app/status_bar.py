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
                                 ServerState.CRASHED: "status-bad", ServerState.STOPPED: "status-dim"}


class StatusBar(Static):
    """One line docked at the top: ``specdash │ host │ ● connection │ server: state (detail)``.

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

    def __init__(self, host_name: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.host_name = host_name

    def on_mount(self) -> None:
        self.set_interval(1.0, self.refresh)

    def render(self) -> Text:
        conn = self.connection
        text = Text()
        text.append(" specdash ", style="bold reverse")
        text.append("  host ", style="dim")
        text.append(self.host_name, style="bold")
        text.append("  │  ", style="dim")
        if conn is not None:
            style = self.get_component_rich_style(_CONN_STYLE[conn.state], partial=True)
            text.append("● ", style=style)
            text.append(conn.describe(), style=style)
        text.append("  │  server: ", style="dim")
        sstyle = self.get_component_rich_style(_SERVER_STYLE.get(self.server_state, "status-dim"), partial=True)
        text.append(self.server_state, style=sstyle)
        if self.server_detail:
            text.append(f" ({self.server_detail})", style="dim")
        if self.mode:
            text.append(f"  │  {self.mode}", style="bold")
        return text
