"""A read-only :class:`~specdash.hosts.base.Host` for replay: the app gets a host object as in a live session,
but nothing touches a machine — no command runs, no file is read, no signal is sent (no kill, no launch).
The panes are fed from the session's events instead (see :class:`specdash.session.replay.ReplayPlayer`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from specdash.hosts.base import CommandResult, ConnectionStatus, ConnState, Host, HostError
from specdash.session.reader import SessionLog


class ReplayReadOnly(HostError):
    """Raised by every operation of a :class:`ReplayHost`: a replay never acts on a machine."""


class ReplayHost(Host):
    """Stands in for the recorded host. ``name`` is ``replay: <recorded host>``; :meth:`connect` reports
    ``connected`` (detail: the session file); :meth:`run`, :meth:`stream` and :meth:`send_signal` raise
    :class:`ReplayReadOnly`; :meth:`file_size`/:meth:`read_file` return None."""

    is_local = False

    def __init__(self, session_log: SessionLog) -> None:
        super().__init__()
        recorded = session_log.header.host if session_log.header and session_log.header.host else "unknown host"
        self.name = f"replay: {recorded}"
        self.session = session_log

    async def connect(self) -> None:
        """Mark the host connected (nothing to open)."""
        self._set_status(ConnectionStatus(ConnState.CONNECTED, f"replay of {self.session.path}"))

    async def close(self) -> None:
        """Nothing to close."""

    async def run(self, command: str, timeout_s: float = 30.0, input: str | None = None) -> CommandResult:
        """Refused: raises :class:`ReplayReadOnly`."""
        raise ReplayReadOnly("read-only replay: no command runs")

    def stream(self, command: str) -> AsyncGenerator[bytes, None]:
        """Refused: raises :class:`ReplayReadOnly`."""
        raise ReplayReadOnly("read-only replay: no command runs")

    async def file_size(self, path: str) -> int | None:
        """None: a replay reads no file."""
        return None

    async def read_file(self, path: str, max_bytes: int = 4 * 1024 * 1024) -> bytes | None:
        """None: a replay reads no file."""
        return None

    async def send_signal(self, pid: int, signum: int, *, group: bool = False) -> None:
        """Refused: raises :class:`ReplayReadOnly` (a replay never kills)."""
        raise ReplayReadOnly("read-only replay: no signal is sent")
