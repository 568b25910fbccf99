"""The state of a launched server: starting (phase) / ready / crashed (exit reason) / stopped.

Combines three sources, all read through the Host: the process group (are its processes alive, did the command
exit by itself — ``exit_status`` in the run dir), the log tail (phase, ready line, exit reason, read by
:func:`specdash.logs.state.read_log_tail`, the log pane's reader) and an HTTP
probe of ``/health`` and ``/server_info`` (``/get_server_info`` before 2026).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

from specdash.hosts.base import Host, quote
from specdash.logs.state import ServerState, read_log_tail
from specdash.server.probe import HttpProbe, ProbeMemory, probe
from specdash.server.process_group import GroupMember, _members_script, parse_members
from specdash.server.run_handle import RunHandle

#: Bytes of log tail read per status poll.
LOG_TAIL_BYTES = 16384


__all__ = ["LOG_TAIL_BYTES", "ServerState", "ServerStatus", "server_status", "wait_for_state"]


@dataclasses.dataclass(frozen=True)
class ServerStatus:
    """One status reading.

    ``state`` (:class:`specdash.logs.state.ServerState`: ``starting``, ``ready``, ``crashed`` or ``stopped``);
    ``detail`` (one line: the start-up phase in the log pane's words, ``version 0.5.0rc0, model ...``, the exit reason,
    or ``3 processes of its group still alive``); ``exit_status`` (the command's own exit status when it ended by
    itself, else None); ``alive_pids`` (live processes of the group; after a crash these are orphans holding
    GPU memory); ``probe`` (the HTTP probe, None when not probed because the group is gone); ``log_phase``.
    """

    state: ServerState
    detail: str = ""
    exit_status: int | None = None
    alive_pids: tuple[int, ...] = ()
    probe: HttpProbe | None = None
    log_phase: str | None = None

    def describe(self) -> str:
        """``starting (loading weights)``, ``ready``, ``crashed: <reason>``, ``stopped``."""
        if self.state is ServerState.STARTING:
            return f"starting ({self.detail})" if self.detail else "starting"
        if self.state is ServerState.CRASHED:
            return f"crashed: {self.detail}" if self.detail else "crashed"
        if self.state is ServerState.READY and self.detail:
            return f"ready ({self.detail})"
        return self.state.value


ProbeFn = Callable[[Host, int], Awaitable[HttpProbe]]


def _facts_script(handle: RunHandle) -> str:
    d = quote(handle.run_dir)
    # members are listed before exit_status is read: the wrapper writes exit_status before it exits, so an
    # empty group always comes with its exit status (when the command ended by itself)
    return (
        f"m=$({_members_script(handle.pgid, handle.run_id)}); "
        f'echo "exit_status=$(cat {d}/exit_status 2>/dev/null)"; '
        f'if [ -e {d}/stopped ]; then echo stopped=1; else echo stopped=0; fi; '
        "echo '--members--'; "
        'printf "%s\\n" "$m"; '
        "echo '--log--'; "
        f"tail -c {LOG_TAIL_BYTES} {quote(handle.log_path)} 2>/dev/null"
    )


async def server_status(host: Host, handle: RunHandle, *, probe_fn: ProbeFn | None = None, info: bool = True,
                        memory: ProbeMemory | None = None, http: bool = True) -> ServerStatus:
    """Read the state of the server launched as ``handle`` on ``host`` (one ``Host.run`` plus an HTTP probe).

    Rules: no live process of the group → ``stopped`` if :func:`specdash.server.stop` was used or the command
    exited with status 0, else ``crashed`` (detail = exit reason from the log, else ``exit status N``). The command
    exited by itself but processes of its group live on → ``crashed`` with those PIDs in ``alive_pids`` (orphans).
    Group alive → ``ready`` when ``/health`` answers 200 and the log has SGLang's ready line (or the log is unreadable),
    else ``starting`` with the log's phase.

    HTTP only when it can change the answer: while the log shows the server still starting (before SGLang's ready
    line) nothing is requested, so the server's access log gets no line of ours; then ``/health`` and, with
    ``info``, the server-info endpoint (``memory``: a :class:`ProbeMemory` kept across polls of this server, so an
    endpoint that answered 404 is asked once). ``http=False``: no request at all; a live group whose log shows the
    ready line is ``ready`` (for polls after the server was seen ready).

    ``probe_fn(host, port)`` defaults to :func:`specdash.server.probe.probe`. Raises HostError when the host
    cannot be reached.
    """
    result = await host.run(_facts_script(handle), timeout_s=20)
    head, _, rest = result.stdout.partition("--members--\n")
    members_text, _, log_tail = rest.partition("--log--\n")
    facts = dict(line.split("=", 1) for line in head.splitlines() if "=" in line)
    exit_text = facts.get("exit_status", "").strip()
    exit_status = int(exit_text) if exit_text.lstrip("-").isdigit() else None
    stopped = facts.get("stopped") == "1"
    members: list[GroupMember] = parse_members(members_text)
    alive = tuple(m.pid for m in members if m.alive and m.ours)
    if exit_status is not None:
        # the wrapper (leader) recorded the exit status and is exiting: only what outlives it counts
        alive = tuple(pid for pid in alive if pid != handle.leader_pid)
    reading = read_log_tail(log_tail)
    phase = reading.phase

    if not alive:
        if stopped:
            return ServerStatus(ServerState.STOPPED, "stopped by specdash", exit_status, (), None, phase)
        if exit_status == 0:
            return ServerStatus(ServerState.STOPPED, "exited by itself with status 0", 0, (), None, phase)
        reason = reading.exit_reason
        if reason is None:
            reason = (f"exit status {exit_status}" if exit_status is not None
                      else "its processes are gone without an exit status (killed from outside specdash?)")
        elif exit_status is not None:
            reason = f"{reason} (exit status {exit_status})"
        return ServerStatus(ServerState.CRASHED, reason, exit_status, (), None, phase)

    if exit_status is not None and not stopped:
        reason = reading.exit_reason or f"exit status {exit_status}"
        detail = f"{reason}; {len(alive)} process(es) of its group still alive (PIDs {', '.join(map(str, alive))})"
        return ServerStatus(ServerState.CRASHED, detail, exit_status, alive, None, phase)

    if reading.state is ServerState.STARTING:  # the log shows a start-up in progress: no request needed
        return ServerStatus(ServerState.STARTING, phase or "waiting for the first log line", None, alive, None, phase)
    if not http:  # seen ready before, and the log shows no new start
        return ServerStatus(ServerState.READY, "", None, alive, None, "ready")
    if probe_fn is not None:
        http_probe = await probe_fn(host, handle.port)
    else:
        http_probe = await probe(host, handle.port, info=info, memory=memory)
    # a tail without lifecycle lines (unreadable, or the ready line scrolled out of it under request lines):
    # /health decides
    log_ready = reading.state in (ServerState.READY, ServerState.UNKNOWN)
    if http_probe.healthy and log_ready:
        return ServerStatus(ServerState.READY, _ready_detail(http_probe), None, alive, http_probe, "ready")
    detail = phase or "waiting for the first log line"
    if phase == "ready" and not http_probe.healthy:
        detail = f"log says ready, /health: {http_probe.health_status or http_probe.error or 'no answer'}"
    return ServerStatus(ServerState.STARTING, detail, None, alive, http_probe, phase)


def _ready_detail(http: HttpProbe) -> str:
    info = http.server_info or {}
    parts = []
    if info.get("version"):
        parts.append(f"SGLang {info['version']}")
    if info.get("speculative_algorithm"):
        parts.append(str(info["speculative_algorithm"]))
    # no accept length here: read once, it would go stale (the log pane shows the live figure)
    return ", ".join(parts)


async def wait_for_state(host: Host, handle: RunHandle, states: set[ServerState] | frozenset[ServerState], *,
                         timeout_s: float = 600.0, poll_s: float = 1.0,
                         probe_fn: ProbeFn | None = None) -> ServerStatus:
    """Poll :func:`server_status` every ``poll_s`` seconds until its state is one of ``states`` or ``timeout_s``
    passed; returns the last status (check ``.state``: on timeout it is not in ``states``)."""
    import asyncio
    import time

    deadline = time.monotonic() + timeout_s
    memory = ProbeMemory()  # a 404 endpoint is asked once per wait
    while True:
        status = await server_status(host, handle, probe_fn=probe_fn, memory=memory)
        if status.state in states or time.monotonic() >= deadline:
            return status
        await asyncio.sleep(poll_s)
