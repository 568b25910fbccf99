"""The host's process table, parsed into rows keyed by PID (pure parsing + one Host call).

One shell command, run through the Host (so it works locally and over SSH, POSIX ``sh``, procps and coreutils):

1. ``cat /proc/[0-9]*/stat`` — per process the state, PPID, process group, session and the **start time in clock
   ticks since boot** (field 22, see ``proc(5)``). With the user and the command line that start time is a
   process's *identity*: a PID reused by a new process — even within the same second — has a different start time
   (ticks are 1/100 s on Linux), so a signal only ever goes to the process that was shown.
2. ``ps -eww -o pid=,user:64=,etimes=,args=`` — the user name and the full command line (the process title for
   renamed processes such as ``sglang::scheduler_TP0``).

The two are joined by PID. A PID present in only one of them (it started or exited between the two reads) has no
start time and is never signalled (:func:`specdash.gpu.kill.refusal`).
"""

from __future__ import annotations

import dataclasses

from specdash.hosts.base import Host, HostError

#: the marker between the two parts of :data:`PROCESS_TABLE_COMMAND`'s output
SEPARATOR = "--specdash-ps--"
PROCESS_TABLE_COMMAND = (
    "cat /proc/[0-9]*/stat 2>/dev/null; "
    f"echo {SEPARATOR}; "
    "LC_ALL=C ps -eww -o pid=,user:64=,etimes=,args="
)


@dataclasses.dataclass(frozen=True)
class ProcessRow:
    """One process: ``pid``, ``ppid``, ``pgid`` (process group), ``sid`` (session), ``user`` (name), ``stat``
    (one-letter state from ``/proc/PID/stat``: ``R``, ``S``, ``D``, ``Z``, ``T``, ...), ``start_ticks`` (start time
    in clock ticks after boot; None when the PID was not in both reads), ``elapsed_s`` (seconds since start),
    ``args`` (full command line or process title; ``[comm]`` for kernel threads and zombies)."""

    pid: int
    ppid: int
    pgid: int
    user: str
    stat: str
    start_ticks: int | None
    elapsed_s: int
    args: str
    sid: int = 0

    @property
    def is_zombie(self) -> bool:
        """State Z (exited, not yet reaped by its parent) or X (dead)."""
        return self.stat.startswith(("Z", "X"))

    @property
    def identity(self) -> tuple[int, int | None, str, str]:
        """``(pid, start_ticks, user, args)``: equal only for the very same process."""
        return (self.pid, self.start_ticks, self.user, self.args)


@dataclasses.dataclass(frozen=True)
class ProcessTable:
    """All processes of a host at one moment: ``rows`` by PID; ``error`` (one line) when it could not be read."""

    rows: dict[int, ProcessRow]
    error: str | None = None

    def get(self, pid: int) -> ProcessRow | None:
        """The row of ``pid`` or None."""
        return self.rows.get(pid)

    def children(self, pid: int) -> list[ProcessRow]:
        """Processes whose PPID is ``pid``."""
        return [r for r in self.rows.values() if r.ppid == pid]

    def group(self, pgid: int) -> list[ProcessRow]:
        """Processes in process group ``pgid``."""
        return [r for r in self.rows.values() if r.pgid == pgid]

    def session(self, sid: int) -> list[ProcessRow]:
        """Processes in session ``sid``."""
        return [r for r in self.rows.values() if r.sid == sid]

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


@dataclasses.dataclass(frozen=True)
class StatLine:
    """The fields of one ``/proc/PID/stat`` line that specdash uses."""

    pid: int
    comm: str
    state: str
    ppid: int
    pgid: int
    sid: int
    start_ticks: int


def parse_stat_line(line: str) -> StatLine | None:
    """Parse one ``/proc/PID/stat`` line (``proc(5)``); None when it does not parse. ``comm`` may hold spaces and
    parentheses: the fields after it start at the *last* ``)``."""
    open_at, close_at = line.find("("), line.rfind(")")
    if open_at <= 0 or close_at < open_at:
        return None
    rest = line[close_at + 1:].split()
    if len(rest) < 20:
        return None
    try:
        return StatLine(pid=int(line[:open_at]), comm=line[open_at + 1:close_at], state=rest[0][:1],
                        ppid=int(rest[1]), pgid=int(rest[2]), sid=int(rest[3]), start_ticks=int(rest[19]))
    except ValueError:
        return None


def parse_process_table(text: str) -> ProcessTable:
    """Parse the output of :data:`PROCESS_TABLE_COMMAND`. Lines that do not parse are skipped."""
    stat_text, _, ps_text = text.partition(f"\n{SEPARATOR}\n")
    if not ps_text and text.startswith(f"{SEPARATOR}\n"):
        stat_text, ps_text = "", text[len(SEPARATOR) + 1:]
    stats: dict[int, StatLine] = {}
    for line in stat_text.splitlines():
        parsed = parse_stat_line(line)
        if parsed is not None:
            stats[parsed.pid] = parsed
    rows: dict[int, ProcessRow] = {}
    for line in ps_text.splitlines():
        parts = line.split(None, 3)
        if len(parts) < 3:
            continue
        try:
            pid, elapsed_s = int(parts[0]), int(parts[2])
        except ValueError:
            continue
        stat = stats.get(pid)
        if stat is None:
            continue  # started after the /proc read (or exited in between): seen next time
        args = parts[3] if len(parts) > 3 else ""
        rows[pid] = ProcessRow(pid=pid, ppid=stat.ppid, pgid=stat.pgid, sid=stat.sid, user=parts[1],
                               stat=stat.state, start_ticks=stat.start_ticks, elapsed_s=elapsed_s,
                               args=args or f"[{stat.comm}]")
    return ProcessTable(rows=rows)


async def read_process_table(host: Host, timeout_s: float = 15.0) -> ProcessTable:
    """Read ``host``'s process table. Never raises: failures give ``ProcessTable({}, error=...)``."""
    try:
        result = await host.run(PROCESS_TABLE_COMMAND, timeout_s=timeout_s)
    except HostError as exc:
        return ProcessTable(rows={}, error=f"cannot read the process table: {exc}")
    table = parse_process_table(result.stdout)
    if not result.ok or not table.rows:
        detail = (result.stderr.strip() or result.stdout.strip()).splitlines()[:1]
        return ProcessTable(rows=table.rows,
                            error=f"ps failed (exit {result.exit_status}): {detail[0] if detail else 'no output'}"
                            " (Linux /proc and procps ps are needed)")
    return table


async def current_user(host: Host) -> str:
    """The login name commands run as on ``host`` (``id -un``). Raises HostError when it cannot be read."""
    result = await host.run("id -un", timeout_s=15)
    name = result.stdout.strip()
    if not result.ok or not name:
        raise HostError(f"cannot tell which user runs on {host.name}: {result.stderr.strip() or 'id -un failed'}")
    return name
