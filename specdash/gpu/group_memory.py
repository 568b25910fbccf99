"""GPU memory held by one process group: what a restart waits on before relaunching."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from specdash.gpu.model import GpuSnapshot
from specdash.gpu.proctable import read_process_table
from specdash.hosts.base import Host


async def memory_held_by_group(host: Host, pgid: int, sample: Callable[[], Awaitable[GpuSnapshot]]) -> int:
    """MiB of GPU memory held by live processes of process group ``pgid`` on ``host``.

    ``sample`` is an async callable returning a fresh :class:`GpuSnapshot` (e.g. ``sampler.sample_once``).
    Joins the driver's compute processes (by PID) with the host's process table (PID → PGID). A process whose
    used memory is ``[N/A]`` counts 0 MiB. Returns 0 when no GPU could be read (nothing to wait for).
    """
    snapshot = await sample()
    if snapshot.error:
        return 0
    table = await read_process_table(host)
    members = {row.pid for row in table.group(pgid)}
    return sum(proc.used_mib or 0 for proc in snapshot.processes if proc.pid in members)
