"""One look at a host's GPUs: snapshot + process table + device-file holders + classification + summary (used by
``specdash ps``, ``specdash clean`` and the GPU pane)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from specdash.gpu.attribution import beyond_baseline, unattributed_mib
from specdash.gpu.classify import (
    UNKNOWN,
    ClassifiedProcess,
    classify,
    classify_holders,
    crashed_server_members,
    distrust_pids_without_devices,
    mark_targets,
    summarize,
)
from specdash.gpu.container import ContainerInfo
from specdash.gpu.devices import find_holders
from specdash.gpu.model import GpuSnapshot
from specdash.gpu.proctable import ProcessRow, ProcessTable, read_process_table
from specdash.hosts.base import Host


@dataclasses.dataclass(frozen=True)
class GpuView:
    """``snapshot`` (GPUs and driver-reported processes), ``table`` (the process table), ``processes`` (classified:
    one per driver-listed PID and GPU, then processes found through open device files, then the other members of
    crashed servers), ``summary`` (one line, e.g. "3 orphans from a crashed server hold 71.2 GiB on GPU 0–1"),
    ``user`` (who specdash acts as on the host), ``unattributed_mib`` (GPU index -> MiB used that no listed process
    holds, None when unknown), ``unaccounted_mib`` (the GPUs where that exceeds the idle baseline),
    ``holders`` (PID -> GPU device files, when they were looked for), ``holders_error`` (one line when the scan
    failed), ``container`` (when specdash runs inside one), ``left`` (processes of a crashed server's group that
    are left alone, with why), ``driver_pids_not_here`` (driver-listed PIDs missing from the process table, or
    naming a process of the user that holds no GPU device file)."""

    snapshot: GpuSnapshot
    table: ProcessTable
    processes: tuple[ClassifiedProcess, ...]
    summary: str
    user: str
    unattributed_mib: dict[int, int | None] = dataclasses.field(default_factory=dict)
    unaccounted_mib: dict[int, int] = dataclasses.field(default_factory=dict)
    holders: dict[int, tuple[str, ...]] | None = None
    holders_error: str | None = None
    container: ContainerInfo | None = None
    left: tuple[tuple[ProcessRow, str], ...] = ()
    driver_pids_not_here: tuple[int, ...] = ()

    @property
    def short_note(self) -> str:
        """The :attr:`notes` in one short line for the pane header ("" when there are none)."""
        parts = []
        if self.container is not None:
            parts.append(f"inside a {self.container.kind} container ({self.container.evidence}): processes outside "
                         "it are not visible here")
        if self.unaccounted_mib:
            found = sum(1 for p in self.processes if p.source == "device files")
            if self.holders_error:
                parts.append("device files could not be scanned")
            elif self.holders is not None:
                parts.append(f"{found} unlisted process{'es' if found != 1 else ''} found by GPU device files "
                             "(memory unknown)" if found else "no process of yours holds a GPU device file")
        return " · ".join(parts)

    @property
    def notes(self) -> list[str]:
        """Extra lines for ``ps``, ``clean`` and the pane: the container and what it means, how the unlisted
        memory was looked for."""
        out = []
        if self.container is not None:
            listed = {p.pid for p in self.snapshot.processes}
            out.append(self.container.meaning if self.table.error else
                       self.container.checked(len(listed), len(listed & set(self.driver_pids_not_here))))
        if self.unaccounted_mib:
            if self.holders_error:
                out.append(self.holders_error)
            elif self.holders is not None:
                found = [p for p in self.processes if p.source == "device files"]
                if found:
                    many = len(found) != 1
                    out.append(f"{len(found)} process{'es' if many else ''} of yours hold{'' if many else 's'} GPU "
                               f"device files open but {'are' if many else 'is'} not listed by the driver (memory per "
                               "process unknown; a release is checked by the GPU's used memory falling)")
                else:
                    out.append("no process of yours holds a GPU device file open: the memory is held by processes "
                               "outside this view (another container, another user, or the host)")
        return out


def build_view(snapshot: GpuSnapshot, table: ProcessTable, user: str, server_pgids: Iterable[int] = frozenset(), *,
               holders: dict[int, tuple[str, ...]] | None = None, holders_error: str | None = None,
               container: ContainerInfo | None = None, baseline_mib: int | None = None) -> GpuView:
    """Classify ``snapshot`` and the device-file ``holders`` against ``table`` (pure) and summarise."""
    pgids = frozenset(server_pgids)
    processes = classify(snapshot, table, user, pgids)
    not_here = {p.pid for p in snapshot.processes if table.get(p.pid) is None}
    if container is not None and holders:
        before = {p.pid: p.process_class for p in processes}
        processes = distrust_pids_without_devices(processes, holders, user)
        not_here |= {p.pid for p in processes if p.process_class == UNKNOWN and before.get(p.pid) != UNKNOWN}
    if holders:
        listed = {p.pid for p in snapshot.processes}
        processes += classify_holders({pid: d for pid, d in holders.items() if pid not in listed}, table, user, pgids)
    members, left = crashed_server_members(processes, table, user, pgids)
    processes = mark_targets(processes + members)
    unattributed = {} if snapshot.error else unattributed_mib(snapshot)
    unaccounted = beyond_baseline(unattributed, baseline_mib)
    if snapshot.error:
        summary = snapshot.error
    elif table.error and (snapshot.processes or unaccounted):
        summary = f"{summarize(processes, unaccounted)} ({table.error})"
    else:
        summary = summarize(processes, unaccounted)
    return GpuView(snapshot=snapshot, table=table, processes=tuple(processes), summary=summary, user=user,
                   unattributed_mib=unattributed, unaccounted_mib=unaccounted, holders=holders,
                   holders_error=holders_error, container=container, left=tuple(left),
                   driver_pids_not_here=tuple(sorted(not_here)))


async def inspect_host(host: Host, snapshot: GpuSnapshot, user: str, server_pgids: Iterable[int] = frozenset(),
                       container: ContainerInfo | None = None, baseline_mib: int | None = None) -> GpuView:
    """Read ``host``'s process table (when the driver lists processes or memory is unaccounted for), look for
    processes holding GPU device files (when memory is unaccounted for, or inside a container where the driver's
    PIDs may be host PIDs) and build the :class:`GpuView`."""
    unaccounted = {} if snapshot.error else beyond_baseline(unattributed_mib(snapshot), baseline_mib)
    holders, holders_error = None, None
    if unaccounted or (container is not None and snapshot.processes):
        holders, holders_error = await find_holders(host)
    need_table = bool(snapshot.processes) or bool(holders)
    table = await read_process_table(host) if need_table else ProcessTable(rows={})
    return build_view(snapshot, table, user, server_pgids, holders=holders, holders_error=holders_error,
                      container=container, baseline_mib=baseline_mib)
