"""Label every GPU process: ``server``, ``orphan``, ``zombie``, ``foreign`` or ``unknown`` (pure: data in, data out).

Rules, first match wins (issue #5 "Process classification"; cases C23 and C25 in ../shared/fixtures/cases):

1. ``unknown`` — the driver reports a PID with no entry in this host's process table. NVML/nvidia-smi report
   PIDs of the *host's* PID namespace; inside a container they do not exist (or are someone else). Never
   signalled: the number would hit a different process here.
2. ``foreign`` — a graphics process, PID 1 / a child of PID 0 (init), or one owned by another user: never
   offered for killing.
3. ``zombie`` — state Z: exited but not reaped, the driver still counts its memory.
4. ``server`` — in a process group given in ``server_pgids`` (a server specdash launched or discovered), a
   descendant of such a group's process, or in the group of a *detached live launcher* (``sglang.launch_server``
   / ``sglang serve`` with PPID 1, or PID 1 of a container, that still has live workers: a healthy ``nohup``
   server or a ``docker run`` server is not an orphan).
5. ``orphan`` — its parent is gone: PPID 1, a parent missing from the table, or its process-group leader (the
   launcher) has exited. It still holds GPU memory, and the next launch will OOM.
6. ``foreign`` again — your own process whose parent is alive and that is not part of a server (a notebook,
   a training job): left alone.

Only ``orphan`` and ``zombie`` are cleaned by ``specdash clean``; ``server`` rows can be killed from the pane
after confirmation; ``foreign`` and ``unknown`` never.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from specdash.gpu.model import GpuSnapshot
from specdash.gpu.proctable import ProcessRow, ProcessTable

SERVER, ORPHAN, ZOMBIE, FOREIGN, UNKNOWN = "server", "orphan", "zombie", "foreign", "unknown"
CLASSES: tuple[str, ...] = (SERVER, ORPHAN, ZOMBIE, FOREIGN, UNKNOWN)
#: classes that ``specdash clean`` kills
CLEANABLE: frozenset[str] = frozenset({ORPHAN, ZOMBIE})
#: classes the GPU pane may kill (after confirmation)
KILLABLE: frozenset[str] = frozenset({ORPHAN, ZOMBIE, SERVER})

_LAUNCHER_MARKS = ("sglang.launch_server", "sglang serve", "sglang/launch_server")


@dataclasses.dataclass(frozen=True)
class ClassifiedProcess:
    """A GPU process joined with its process-table row.

    ``pid``; ``gpu_index`` (None when its GPU UUID matched none); ``gpu_uuid``; ``used_mib`` (None for
    ``[N/A]``); ``name`` (the process title from ``ps`` when known, else the driver's name); ``command`` (full
    command line, "" when unknown); ``user``, ``ppid``, ``pgid``, ``stat``, ``start_time`` (``ps`` lstart; with
    user and command the identity checked before every signal) — None when the PID is not in the table;
    ``process_class`` (one of :data:`CLASSES`); ``reason`` (one line a user can act on).
    """

    pid: int
    gpu_index: int | None
    gpu_uuid: str
    used_mib: int | None
    name: str
    command: str
    user: str | None
    ppid: int | None
    pgid: int | None
    stat: str | None
    start_time: str | None
    process_class: str
    reason: str

    @property
    def killable(self) -> bool:
        """True when the GPU pane may offer to kill it (``orphan``, ``zombie``, ``server``)."""
        return self.process_class in KILLABLE and self.start_time is not None

    @property
    def cleanable(self) -> bool:
        """True when ``specdash clean`` kills it (``orphan`` or ``zombie``)."""
        return self.process_class in CLEANABLE and self.start_time is not None

    def to_json(self) -> dict:
        """The ``specdash ps --json`` process object: pid, gpu, used_mib, name, user, ppid, pgid, class, reason."""
        return {"pid": self.pid, "gpu": self.gpu_index, "used_mib": self.used_mib, "name": self.name,
                "user": self.user, "ppid": self.ppid, "pgid": self.pgid, "class": self.process_class,
                "reason": self.reason}


def _title(row: ProcessRow | None, fallback: str) -> str:
    if row is None or not row.args:
        return fallback
    return row.args.split()[0]


def _mib(value: int | None) -> str:
    return "? MiB" if value is None else f"{value} MiB"


def _detached_launcher_groups(table: ProcessTable, gpu_pids: set[int]) -> set[int]:
    """Process groups led by a live SGLang launcher with PPID 1 whose workers (children) are alive."""
    groups = set()
    for row in table.rows.values():
        if (row.ppid in (0, 1) or row.pid == 1) and row.pid == row.pgid and not row.is_zombie \
                and any(mark in row.args for mark in _LAUNCHER_MARKS) \
                and any(not c.is_zombie for c in table.children(row.pid)):
            groups.add(row.pgid)
    return groups


def classify(snapshot: GpuSnapshot, proc_table: ProcessTable, current_user: str,
             server_pgids: Iterable[int] = frozenset()) -> list[ClassifiedProcess]:
    """Classify each of ``snapshot``'s GPU processes (one result per process and GPU, in snapshot order).

    ``proc_table``: the same host's ``ps`` table (:func:`specdash.gpu.proctable.read_process_table`);
    ``current_user``: login name specdash acts as (``id -un``); ``server_pgids``: process groups of live servers
    specdash launched or discovered. Rules in the module docstring.
    """
    servers = set(server_pgids)
    gpu_pids = {p.pid for p in snapshot.processes}
    detached = _detached_launcher_groups(proc_table, gpu_pids)
    out: list[ClassifiedProcess] = []
    for proc in snapshot.processes:
        row = proc_table.get(proc.pid)
        held = _mib(proc.used_mib)
        gpu = f"GPU {proc.gpu_index}" if proc.gpu_index is not None else f"GPU {proc.gpu_uuid or '?'}"
        if row is None:
            hint = " (the driver could not name it either)" if proc.name.startswith("[") else ""
            cls, reason = UNKNOWN, (
                f"PID {proc.pid} is not in this host's process table{hint}: the driver reports host PIDs, so this "
                "is probably a process in a container or another PID namespace — inspect and clean it from the "
                "host itself (or a container started with --pid=host)")
        elif proc.kind == "graphics":
            cls, reason = FOREIGN, f"graphics process ({_title(row, proc.name)}) — display/desktop, never killed"
        elif row.pid == 1 or row.ppid == 0:
            if row.pgid in detached:
                cls, reason = SERVER, f"PID {row.pid} is a live SGLang launcher (container init) — stop it explicitly"
            else:
                cls, reason = FOREIGN, f"PID {row.pid} is the init process of this host or container — never killed"
        elif row.user != current_user:
            cls, reason = FOREIGN, f"belongs to user {row.user}, not {current_user} — never killed"
        elif row.is_zombie:
            cls, reason = ZOMBIE, (f"{gpu} held by PID {proc.pid} ({_title(row, proc.name)}, {held}) — zombie "
                                   f"(state Z), parent PID {row.ppid} has not reaped it")
        else:
            chain = [row] + proc_table.ancestors(proc.pid)
            server_row = next((r for r in chain if r.pgid in servers or r.pid in servers), None)
            if server_row is not None:
                cls, reason = SERVER, f"in process group {server_row.pgid} of the running server"
            elif row.pgid in detached:
                cls, reason = SERVER, (f"in process group {row.pgid} of a live detached SGLang launcher "
                                       f"(PID {row.pgid}, PPID 1) — stop that server explicitly")
            else:
                parent = proc_table.get(row.ppid)
                leader = proc_table.get(row.pgid)
                title = _title(row, proc.name)
                if row.ppid == 1:
                    cls, reason = ORPHAN, f"{gpu} held by PID {proc.pid} ({title}, {held}) - parent exited (PPID 1)"
                elif parent is None:
                    cls, reason = ORPHAN, (f"{gpu} held by PID {proc.pid} ({title}, {held}) - parent PID "
                                           f"{row.ppid} is gone")
                elif row.pgid != row.pid and (leader is None or leader.is_zombie):
                    cls, reason = ORPHAN, (f"{gpu} held by PID {proc.pid} ({title}, {held}) - its launcher "
                                           f"(process group leader {row.pgid}) has exited")
                else:
                    cls, reason = FOREIGN, (f"your process, not part of a known server; its parent PID {row.ppid} "
                                            f"({_title(parent, '?')}) is alive — left alone")
        out.append(ClassifiedProcess(
            pid=proc.pid, gpu_index=proc.gpu_index, gpu_uuid=proc.gpu_uuid, used_mib=proc.used_mib,
            name=_title(row, proc.name) if row is not None else proc.name,
            command=row.args if row is not None else "", user=row.user if row is not None else None,
            ppid=row.ppid if row is not None else None, pgid=row.pgid if row is not None else None,
            stat=row.stat if row is not None else None, start_time=row.start_time if row is not None else None,
            process_class=cls, reason=reason))
    return out


def _gpu_ranges(indices: Iterable[int | None]) -> str:
    """``[0, 1, 3]`` -> ``"GPU 0–1, 3"``."""
    nums = sorted({i for i in indices if i is not None})
    if not nums:
        return "an unknown GPU"
    spans: list[str] = []
    start = prev = nums[0]
    for n in nums[1:] + [None]:  # type: ignore[list-item]
        if n is not None and n == prev + 1:
            prev = n
            continue
        spans.append(f"{start}" if start == prev else f"{start}–{prev}")
        if n is not None:
            start = prev = n
    return "GPU " + ", ".join(spans)


def _gib(mib: int) -> str:
    return f"{mib / 1024:.1f} GiB"


def summarize(processes: list[ClassifiedProcess]) -> str:
    """One line for the pane header and ``specdash ps``, e.g.
    ``3 orphans from a crashed server hold 71.2 GiB on GPU 0–1``; ``no orphaned GPU memory`` when clean."""
    parts: list[str] = []
    for cls, singular, plural in ((ORPHAN, "orphan", "orphans"), (ZOMBIE, "zombie", "zombies")):
        rows = [p for p in processes if p.process_class == cls]
        pids = {p.pid for p in rows}
        if not rows:
            continue
        mib = sum(p.used_mib or 0 for p in rows)
        origin = " from a crashed server" if any("sglang" in (p.name + " " + p.command) for p in rows) else ""
        noun = singular if len(pids) == 1 else plural
        verb = "holds" if len(pids) == 1 else "hold"
        parts.append(f"{len(pids)} {noun}{origin} {verb} {_gib(mib)} on {_gpu_ranges(p.gpu_index for p in rows)}")
    unknown = [p for p in processes if p.process_class == UNKNOWN]
    if unknown:
        mib = sum(p.used_mib or 0 for p in unknown)
        n = len({p.pid for p in unknown})
        parts.append(f"{n} process{'es' if n != 1 else ''} from another PID namespace (container?) "
                     f"hold{'s' if n == 1 else ''} {_gib(mib)} — not visible here")
    if not parts:
        return "no orphaned GPU memory"
    return "; ".join(parts)
