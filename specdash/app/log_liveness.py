"""Whether the followed log still has a server behind it (``connect --log FILE`` without a server of this session),
and the header's server state when the server's output is not a file specdash follows.

The log pane reads the server state from the log's lines: the last lines of yesterday's log say "ready" although
no process of that run exists any more. :class:`LogLivenessMixin` checks, while the log says ``starting``,
``ready`` or ``crashed``, every :data:`LOG_WRITER_POLL_S` seconds, whether a running SGLang server writes the file
(:func:`specdash.logs.discover.log_writer`); when none does the header says ``server: unknown (no running server
writes this log; it last said: ready (ready after 4 s))`` instead of a "ready" nobody can reach.

A server whose output goes to a pipe (``... | tee run.log``, a supervisor) writes no file specdash can tie to it:
its log lines say nothing certain about it. Then the header's one source is the server itself - its process (``ps``)
and SGLang's ``GET /health`` on its port (:func:`specdash.server.probe.probe`, marked as specdash's own request) -
and the detail says so (:func:`health_header`): the health poll wins over whatever the log said last.
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual import work

from specdash.logs.state import ServerState

#: seconds between two checks of the followed log's writer (and of a piped server's health)
LOG_WRITER_POLL_S = 10.0


def gone_detail(state: str, detail: str) -> str:
    """The header detail for a log no running server writes: ``no running server writes this log; it last said:
    ready (ready after 4 s)``."""
    said = f"{state} ({detail})" if detail else str(state)
    return f"no running server writes this log; it last said: {said}"


def health_header(pid: int, port: int | None, alive: bool, healthy: bool, log_path: str | None) -> tuple[str, str]:
    """The header ``(state, detail)`` of a server whose output goes to a pipe, from its process and ``/health``
    (never from a log line): ``ready`` when ``/health`` answers 200; ``unknown`` while the process runs and
    ``/health`` does not answer (starting, or hung: the health poll cannot tell which); ``stopped`` when the
    process is gone. The detail names the source, and that ``log_path`` (None: no log followed) is not its
    output."""
    where = f"/health on port {port}" if port else "/health (port unknown)"
    log = (f"its output goes to a pipe, not {log_path}" if log_path
           else "its output goes to a pipe: no log to follow")
    if not alive:
        return ServerState.STOPPED, f"PID {pid} is gone (seen with ps; {log})"
    if healthy:
        return ServerState.READY, f"from {where} of PID {pid}; {log}"
    return ServerState.UNKNOWN, f"PID {pid} runs but {where} does not answer (starting, or hung); {log}"


class LogLivenessMixin:
    """Mixed into the app: needs ``host``, ``log_path``, ``run_handle`` and ``status_bar``; ``server_pid`` /
    ``server_port`` (connect ``--pid`` / ``--server-port``) and ``followed_pid`` (the server discovery chose) name
    the server when several run."""

    host: Any
    log_path: str | None
    run_handle: Any
    status_bar: Any
    #: the state and detail the log last gave (the header shows them while a server writes the log)
    _log_state: tuple[str, str] = (ServerState.UNKNOWN, "")
    #: the server discovery chose to follow (None: none chosen)
    followed_pid: int | None = None

    after_first_frame: Any  # the app's (SpecdashApp.after_first_frame)

    def log_state_changed(self, state: str, detail: str) -> None:
        """The log pane read a new state: show it, and check that a server still writes the log."""
        self._log_state = (state, detail)
        if getattr(self, "_from_health", False):
            return  # the piped server's own health is the header's source, not this log
        self.status_bar.server_state = state
        self.status_bar.server_detail = detail
        if state in (ServerState.STARTING, ServerState.READY, ServerState.CRASHED):
            self.after_first_frame(self._watch_log_writer)  # (its host commands do not delay the first frame)

    def watch_piped_server(self) -> None:
        """No log to follow for the chosen server (its output goes to a pipe): the header follows its health."""
        self._watch_log_writer()

    def _watching(self) -> bool:
        if self.run_handle is not None:
            return False
        if not self.log_path:
            return self.followed_pid is not None
        return getattr(self, "_from_health", False) or self._log_state[0] in (
            ServerState.STARTING, ServerState.READY, ServerState.CRASHED)

    @work(group="log-writer", exclusive=True)
    async def _watch_log_writer(self) -> None:
        from specdash.hosts.base import HostError
        from specdash.logs.discover import WRITER_LIVE, WRITER_NONE, WRITER_UNKNOWN, log_writer

        while self._watching():
            path, (state, detail) = self.log_path, self._log_state
            try:
                answer = (await log_writer(self.host, path))[0] if path else WRITER_UNKNOWN
                # a piped server seen before stays the source once it is gone (no process writes the log then
                # either, and "stopped" says more than the old log's last state)
                piped_seen = getattr(self, "_piped", None) is not None
                # a server the user named (--pid / --server-port / the chooser) speaks through its health even when
                # it does not write the followed file
                named = bool(getattr(self, "server_pid", None) or getattr(self, "server_port", None)
                             or self.followed_pid)
                header = await self._piped_server_header() \
                    if answer == WRITER_UNKNOWN or (answer == WRITER_NONE and (piped_seen or named)) else None
            except HostError:
                answer, header = None, None  # connection trouble: the connection state says so; ask again
            if self.run_handle is not None or path != self.log_path or self._log_state != (state, detail):
                continue  # something changed while asking: look again at once
            self._from_health = header is not None
            if header is not None:
                self.status_bar.server_state, self.status_bar.server_detail = header
            elif answer == WRITER_NONE and state in (ServerState.STARTING, ServerState.READY):
                self.status_bar.server_state = ServerState.UNKNOWN
                self.status_bar.server_detail = gone_detail(state, detail)
            elif answer in (WRITER_LIVE, WRITER_UNKNOWN, WRITER_NONE):
                self.status_bar.server_state = state
                self.status_bar.server_detail = detail
            await asyncio.sleep(LOG_WRITER_POLL_S)
        self._from_health = False  # a launched server (its lifecycle poll) or a new log: the log speaks again

    async def _piped_server_header(self) -> tuple[str, str] | None:
        """``(state, detail)`` from the health of the server whose output goes to a pipe - the one named by
        ``--pid`` / ``--server-port`` / discovery, else the only such server on the host - or None when there is
        none, or several and none is named."""
        from specdash.logs.discover import running_servers
        from specdash.server.probe import probe

        summaries = await running_servers(self.host)
        seen = getattr(self, "_piped", None)  # (pid, port) of the piped server last seen: gone is then said
        pid = getattr(self, "server_pid", None) or self.followed_pid or (seen[0] if seen else None)
        port = getattr(self, "server_port", None)
        named = [s for s in summaries if (pid is not None and s.process.pid == pid)
                 or (pid is None and port is not None and s.port == port)]
        if pid is None and port is None:
            named = [s for s in summaries if s.log is None]
            if len(named) != 1:
                return None
        if not named:
            if pid is None:
                return None
            return health_header(pid, port or (seen[1] if seen else None), False, False, self.log_path)
        chosen = named[0]
        if chosen.log is not None and chosen.log == self.log_path:
            return None  # it writes the followed log after all: the log is its source
        self._piped = (chosen.process.pid, chosen.port)
        if chosen.port is None:
            return health_header(chosen.process.pid, None, True, False, self.log_path)
        answer = await probe(self.host, chosen.port, info=False)
        return health_header(chosen.process.pid, chosen.port, True, answer.healthy, self.log_path)
