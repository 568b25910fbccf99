"""One look at a host's GPUs: snapshot + process table + classification + summary (used by ``specdash ps``,
``specdash clean`` and the GPU pane)."""

from __future__ import annotations

import dataclasses
from typing import Iterable

from specdash.gpu.classify import ClassifiedProcess, classify, summarize
from specdash.gpu.model import GpuSnapshot
from specdash.gpu.proctable import ProcessTable, read_process_table
from specdash.hosts.base import Host


@dataclasses.dataclass(frozen=True)
class GpuView:
    """``snapshot`` (GPUs and driver-reported processes), ``table`` (``ps``), ``processes`` (classified, one per
    PID and GPU), ``summary`` (one line, e.g. "3 orphans from a crashed server hold 71.2 GiB on GPU 0–1"),
    ``user`` (who specdash acts as on the host)."""

    snapshot: GpuSnapshot
    table: ProcessTable
    processes: tuple[ClassifiedProcess, ...]
    summary: str
    user: str


def build_view(snapshot: GpuSnapshot, table: ProcessTable, user: str,
               server_pgids: Iterable[int] = frozenset()) -> GpuView:
    """Classify ``snapshot`` against ``table`` (pure) and summarise."""
    processes = tuple(classify(snapshot, table, user, server_pgids))
    if snapshot.error:
        summary = snapshot.error
    elif table.error and snapshot.processes:
        summary = f"{summarize(list(processes))} ({table.error})"
    else:
        summary = summarize(list(processes))
    return GpuView(snapshot=snapshot, table=table, processes=processes, summary=summary, user=user)


async def inspect_host(host: Host, snapshot: GpuSnapshot, user: str,
                       server_pgids: Iterable[int] = frozenset()) -> GpuView:
    """Read ``host``'s process table (only when ``snapshot`` has processes) and build the :class:`GpuView`."""
    table = await read_process_table(host) if snapshot.processes else ProcessTable(rows={})
    return build_view(snapshot, table, user, server_pgids)
