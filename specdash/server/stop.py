"""Stop a launched server: SIGTERM its process group, escalate to SIGKILL after a grace period.

Before every signal the group's live members are listed again; if any of them does not carry the run's
``SPECDASH_RUN_ID`` (the PGID was reused by someone else's processes) nothing is signalled.
"""

from __future__ import annotations

import asyncio
import signal
import time

from specdash.hosts.base import Host, quote
from specdash.log import get_logger
from specdash.server.process_group import GroupMember, group_members
from specdash.server.run_handle import RunHandle, StopResult

_log = get_logger(__name__)


async def _alive(host: Host, handle: RunHandle) -> list[GroupMember]:
    return [m for m in await group_members(host, handle.pgid, handle.run_id) if m.alive]


async def _wait_gone(host: Host, handle: RunHandle, timeout_s: float, poll_s: float) -> list[GroupMember]:
    """Poll until no live member is left or ``timeout_s`` passed; returns the live members left."""
    deadline = time.monotonic() + timeout_s
    while True:
        alive = await _alive(host, handle)
        if not alive or time.monotonic() >= deadline:
            return alive
        await asyncio.sleep(poll_s)


async def stop(host: Host, handle: RunHandle, grace_s: float = 15.0, *, kill_wait_s: float = 5.0,
               poll_s: float = 0.2) -> StopResult:
    """Stop the server of ``handle``: mark the run as stopped, SIGTERM the process group, wait up to ``grace_s``
    seconds for every process to exit, then SIGKILL the group and wait up to ``kill_wait_s``.

    Signals go to the process group (``Host.send_signal(pgid, ..., group=True)``), never by name. Orphans of an
    earlier crash are in the same group and go with it. Returns a :class:`StopResult` (``refused`` when the
    group holds processes specdash did not start). Raises HostError when the host cannot be reached.
    """
    started = time.monotonic()
    await host.run(f"touch {quote(handle.file('stopped'))}", timeout_s=15)
    alive = await _alive(host, handle)
    if not alive:
        return StopResult(handle.pgid, was_running=False, elapsed_s=time.monotonic() - started)
    signals: list[str] = []
    for signum, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, kill_wait_s)):
        strangers = [m.pid for m in alive if not m.ours]
        if strangers:
            return StopResult(handle.pgid, was_running=True, signals=tuple(signals), refused=True, gone=False,
                              survivors=tuple(strangers), elapsed_s=time.monotonic() - started)
        _log.info("stop on %s: %s to process group %d", host.name, signal.Signals(signum).name, handle.pgid)
        try:
            await host.send_signal(handle.pgid, signum, group=True)
        except ProcessLookupError:
            alive = []
            break
        signals.append(signal.Signals(signum).name)
        alive = await _wait_gone(host, handle, wait_s, poll_s)
        if not alive:
            break
    return StopResult(
        handle.pgid,
        was_running=True,
        signals=tuple(signals),
        escalated="SIGKILL" in signals,
        gone=not alive,
        survivors=tuple(m.pid for m in alive),
        elapsed_s=time.monotonic() - started,
    )
