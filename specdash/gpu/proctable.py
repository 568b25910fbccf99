"""The host's process table (``ps``), parsed into rows keyed by PID (pure parsing + one Host call).

Command: ``LC_ALL=C ps -eww -o pid=,ppid=,pgid=,user:64=,stat=,lstart=,etimes=,args=`` (procps-ng). ``lstart``
is the start time as five words (``Mon Nov 30 09:30:40 2026``, 1 s resolution, LC_ALL=C so it is always English);
together with the user and the command line it is a process's *identity*: a PID reused by a new process has a
different start time, so a signal is only ever sent to the process that was shown.
"""

from __future__ import annotations

import dataclasses

from specdash.hosts.base import Host, HostError

PS_COMMAND = "LC_ALL=C ps -eww -o pid=,ppid=,pgid=,user:64=,stat=,lstart=,etimes=,args="


@dataclasses.dataclass(frozen=True)
class ProcessRow:
    """One process: ``pid``, ``ppid``, ``pgid`` (process group), ``user`` (name), ``stat`` (``ps`` STAT, e.g.
    ``Sl``, ``Z``, ``D``), ``start_time`` (``lstart`` text), ``elapsed_s`` (seconds since start), ``args``
    (full command line; the process title for renamed processes such as ``sglang::scheduler_TP0``)."""

    pid: int
    ppid: int
    pgid: int
    user: str
    stat: str
    start_time: str
    elapsed_s: int
    args: str

    @property
    def is_zombie(self) -> bool:
        """State Z (exited, not yet reaped by its parent)."""
        return self.stat.startswith("Z")

    @property
    def identity(self) -> tuple[int, str, str, str]:
        """``(pid, start_time, user, args)``: equal only for the very same process."""
        return (self.pid, self.start_time, self.user, self.args)


@dataclasses.dataclass(frozen=True)
class ProcessTable:
    """All processes of a host at one moment: ``rows`` by PID; ``error`` (one line) when ``ps`` failed."""

    rows: dict[int, ProcessRow]
    error: str | None = None

    def get(self, pid: int) -> ProcessRow | None:
        """The row of ``pid`` or None."""
        return self.rows.get(pid)

    def children(self, pid: int) -> list[ProcessRow]:
        """Live processes whose PPID is ``pid``."""
        return [r for r in self.rows.values() if r.ppid == pid]

    def group(self, pgid: int) -> list[ProcessRow]:
        """Processes in process group ``pgid``."""
        return [r for r in self.rows.values() if r.pgid == pgid]

    def ancestors(self, pid: int) -> list[ProcessRow]:
        """Parent, grandparent, ... of ``pid`` that are in the table (stops at PID 1 or a missing parent)."""
        out: list[ProcessRow] = []
        row = self.rows.get(pid)
        seen = {pid}
        while row is not None and row.ppid not in seen and row.ppid > 0:
            seen.add(row.ppid)
            row = self.rows.get(row.ppid)
            if row is not None:
                out.append(row)
        return out


def parse_ps(text: str) -> ProcessTable:
    """Parse the output of :data:`PS_COMMAND`. Lines that do not parse are skipped."""
    rows: dict[int, ProcessRow] = {}
    for line in text.splitlines():
        parts = line.split(None, 11)
        if len(parts) < 11:
            continue
        try:
            pid, ppid, pgid = int(parts[0]), int(parts[1]), int(parts[2])
            elapsed_s = int(parts[10])
        except ValueError:
            continue
        rows[pid] = ProcessRow(pid=pid, ppid=ppid, pgid=pgid, user=parts[3], stat=parts[4],
                               start_time=" ".join(parts[5:10]), elapsed_s=elapsed_s,
                               args=parts[11] if len(parts) > 11 else "")
    return ProcessTable(rows=rows)


async def read_process_table(host: Host, timeout_s: float = 15.0) -> ProcessTable:
    """Run ``ps`` on ``host`` and parse it. Never raises: failures give ``ProcessTable({}, error=...)``."""
    try:
        result = await host.run(PS_COMMAND, timeout_s=timeout_s)
    except HostError as exc:
        return ProcessTable(rows={}, error=f"cannot read the process table: {exc}")
    table = parse_ps(result.stdout)
    if not result.ok or not table.rows:
        detail = (result.stderr.strip() or result.stdout.strip()).splitlines()[:1]
        return ProcessTable(rows=table.rows,
                            error=f"ps failed (exit {result.exit_status}): {detail[0] if detail else 'no output'}"
                            " (procps ps is needed)")
    return table


async def current_user(host: Host) -> str:
    """The login name commands run as on ``host`` (``id -un``). Raises HostError when it cannot be read."""
    result = await host.run("id -un", timeout_s=15)
    name = result.stdout.strip()
    if not result.ok or not name:
        raise HostError(f"cannot tell which user runs on {host.name}: {result.stderr.strip() or 'id -un failed'}")
    return name
