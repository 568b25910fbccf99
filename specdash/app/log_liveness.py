"""Whether the followed log still has a server behind it (``connect --log FILE`` without a server of this session).

The log pane reads the server state from the log's lines: the last lines of yesterday's log say "ready" although
no process of that run exists any more. :class:`LogLivenessMixin` checks, while the log says ``starting`` or
``ready``, every :data:`LOG_WRITER_POLL_S` seconds, whether a running SGLang server writes the file
(:func:`specdash.logs.discover.log_writer`); when none does the header says ``server: unknown (no running server
writes this log; it last said: ready (ready after 4 s))`` instead of a "ready" nobody can reach.
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual import work

from specdash.logs.state import ServerState

#: seconds between two checks of the followed log's writer
LOG_WRITER_POLL_S = 10.0


def gone_detail(state: str, detail: str) -> str:
    """The header detail for a log no running server writes: ``no running server writes this log; it last said:
    ready (ready after 4 s)``."""
    said = f"{state} ({detail})" if detail else str(state)
    return f"no running server writes this log; it last said: {said}"


class LogLivenessMixin:
    """Mixed into the app: needs ``host``, ``log_path``, ``run_handle`` and ``status_bar``."""

    host: Any
    log_path: str | None
    run_handle: Any
    status_bar: Any
    #: the state and detail the log last gave (the header shows them while a server writes the log)
    _log_state: tuple[str, str] = (ServerState.UNKNOWN, "")

    def log_state_changed(self, state: str, detail: str) -> None:
        """The log pane read a new state: show it, and check that a server still writes the log."""
        self._log_state = (state, detail)
        self.status_bar.server_state = state
        self.status_bar.server_detail = detail
        if state in (ServerState.STARTING, ServerState.READY):
            self._watch_log_writer()

    @work(group="log-writer", exclusive=True)
    async def _watch_log_writer(self) -> None:
        from specdash.hosts.base import HostError
        from specdash.logs.discover import WRITER_NONE, log_writer

        while self.run_handle is None and self.log_path and self._log_state[0] in (ServerState.STARTING,
                                                                                  ServerState.READY):
            path, (state, detail) = self.log_path, self._log_state
            try:
                answer, _ = await log_writer(self.host, path)
            except HostError:
                answer = None  # connection trouble: the connection state says so; ask again
            if self.run_handle is not None or path != self.log_path or self._log_state != (state, detail):
                continue  # something changed while asking: look again at once
            if answer == WRITER_NONE:
                self.status_bar.server_state = ServerState.UNKNOWN
                self.status_bar.server_detail = gone_detail(state, detail)
            elif answer is not None:
                self.status_bar.server_state = state
                self.status_bar.server_detail = detail
            await asyncio.sleep(LOG_WRITER_POLL_S)
