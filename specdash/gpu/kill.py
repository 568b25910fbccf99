"""Safe kill of GPU-holding processes: by PID or process group only, identity re-checked before every signal.

Procedure (never by process name, never every PID nvidia-smi lists — the opposite of killing every python process
and every holder of the GPU device files, which takes healthy servers and other people's jobs with them):

1. refuse ``foreign``/``unknown`` rows, rows of another user, rows without a start time, rows that are not a
   target on their own (0 MiB), PID/PGID <= 1 and specdash's own process group;
2. read the process table right before every signal; a target whose (start time in clock ticks from
   ``/proc/PID/stat``, user, command line) differs from what was shown is *not* signalled ("PID reused", even
   within the same second) and one that is gone counts as exited;
3. SIGTERM — to the whole process group when every live member of that group is a verified target (the
   crashed server's workers), else to each PID;
4. poll the table every ``poll_s`` until the targets exit or ``grace_s`` passes; re-verify identity, SIGKILL the
   survivors the same way;
5. poll the GPUs (NVML / nvidia-smi through the sampler) until none of the targets' PIDs holds memory, or
   ``release_timeout_s``; report the MiB held before and after, per target and per GPU. Targets the driver does
   not list (found through their open GPU device files: memory per process unknown) count as released when they
   exited and the GPUs' used memory fell.

Processes of a target's process group that are not targets are never signalled (the group is then signalled PID
by PID) and are reported in :attr:`KillReport.left`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import time
from collections.abc import Callable, Iterable

from specdash.gpu.classify import KILLABLE, ORPHAN, SOURCE_DEVICE, SOURCE_GROUP, ClassifiedProcess
from specdash.gpu.model import GpuSnapshot
from specdash.gpu.proctable import ProcessTable, read_process_table
from specdash.hosts.base import Host, HostError
from specdash.log import get_logger
from specdash.server.launch import LAUNCH_SHELL_LABEL, is_launch_shell

_log = get_logger(__name__)

ProgressCallback = Callable[[str], None]


@dataclasses.dataclass
class KillOutcome:
    """What happened to one target PID.

    ``result``: ``"released"`` (exited and its GPU memory is free), ``"exited"`` (exited; memory not yet seen
    free), ``"refused"`` (never signalled: foreign/unknown/another user/...), ``"identity changed"`` (the PID
    now belongs to another process: never signalled), ``"still running"`` (survived SIGKILL: state D, or no
    permission), ``"error"``. ``signals``: e.g. ``["SIGTERM group 4242", "SIGKILL pid 4243"]``.
    """

    pid: int
    user: str | None
    command: str
    gpu_indices: tuple[int | None, ...]
    before_mib: int
    after_mib: int = 0
    result: str = "pending"
    detail: str = ""
    signals: list[str] = dataclasses.field(default_factory=list)
    process_class: str = ""
    source: str = "driver"
    reason: str = ""

    @property
    def what(self) -> str:
        """What the process was, for reports: ``orphan of a crashed server``, ``server``, ``zombie``."""
        return describe_class(self.process_class, self.source)


def describe_class(process_class: str, source: str = "driver") -> str:
    """``orphan`` -> ``orphan of a crashed server``; a crashed server's member without GPU memory -> ``process of a
    crashed server (no GPU memory)``; others unchanged."""
    if process_class == ORPHAN:
        return "process of a crashed server (no GPU memory)" if source == SOURCE_GROUP else "orphan of a crashed server"
    if process_class == "server":
        return "process of a live server"
    return process_class or "process"


def describe_targets(targets: Iterable[tuple[str, str]]) -> str:
    """``(class, source)`` pairs -> ``2 orphans of a crashed server, 1 process of a crashed server (no GPU
    memory)``."""
    counts: dict[str, int] = {}
    for process_class, source in targets:
        what = describe_class(process_class, source)
        counts[what] = counts.get(what, 0) + 1
    parts = []
    for what, n in counts.items():
        if n != 1:
            what = what.replace("orphan ", "orphans ", 1).replace("process ", "processes ", 1).replace(
                "zombie", "zombies", 1)
        parts.append(f"{n} {what}")
    return ", ".join(parts)


@dataclasses.dataclass
class KillReport:
    """Result of :func:`safe_kill`: ``outcomes`` per PID; GPU memory used per GPU index before and after (MiB;
    None when unreadable); ``released`` True when every signalled target exited and its memory was released."""

    outcomes: list[KillOutcome]
    gpu_used_before_mib: dict[int, int | None]
    gpu_used_after_mib: dict[int, int | None]
    released: bool
    left: list[str] = dataclasses.field(default_factory=list)

    @property
    def before_mib(self) -> int:
        """MiB the targets held before."""
        return sum(o.before_mib for o in self.outcomes)

    @property
    def after_mib(self) -> int:
        """MiB the targets still hold."""
        return sum(o.after_mib for o in self.outcomes)

    def summary(self) -> str:
        """One line, e.g. ``killed 3 of 3 processes: 72900 MiB -> 0 MiB held (GPU 0: 72904 -> 4 MiB) — 2 orphans of
        a crashed server, 1 process of a crashed server (no GPU memory); left alone: ...``."""
        done = [o for o in self.outcomes if o.result in ("released", "exited")]
        gpus = ", ".join(f"GPU {i}: {self.gpu_used_before_mib.get(i)} -> {self.gpu_used_after_mib.get(i)} MiB"
                         for i in sorted(self.gpu_used_before_mib))
        text = f"killed {len(done)} of {len(self.outcomes)} processes"
        if any(o.source != SOURCE_DEVICE for o in self.outcomes):  # unlisted ones: only the GPUs' figures say
            text += f": {self.before_mib} MiB -> {self.after_mib} MiB held"
        skipped = [o for o in self.outcomes if o.result not in ("released", "exited")]
        if skipped:
            text += "; " + "; ".join(f"PID {o.pid} {o.result}" + (f" ({o.detail})" if o.detail else "")
                                     for o in skipped)
        text = f"{text} ({gpus})" if gpus else text
        signalled = [o for o in self.outcomes if o.result not in ("refused", "identity changed")]
        if signalled:
            text += f" — {describe_targets((o.process_class, o.source) for o in signalled)}"
        if any(o.source == SOURCE_DEVICE for o in signalled):
            text += " (memory of processes the driver does not list is unknown: judged by the GPUs' used memory)"
        if self.left:
            text += "; left alone: " + "; ".join(self.left)
        return text


def refusal(proc: ClassifiedProcess, current_user: str) -> str | None:
    """Why ``proc`` must never be signalled, or None when it may be (after confirmation)."""
    if proc.process_class not in KILLABLE:
        return f"{proc.process_class} processes are never killed"
    if proc.start_ticks is None or proc.user is None:
        return "not in this host's process table"
    if not proc.target_ok:
        return "holds no GPU memory and is not part of a crashed server that does"
    if proc.user != current_user:
        return f"belongs to user {proc.user}"
    if proc.pid <= 1:
        return "PID 1 is never signalled"
    return None


def _matches(table: ProcessTable, proc: ClassifiedProcess) -> str:
    """``"same"``, ``"gone"`` or ``"changed"`` for ``proc`` against a fresh table."""
    row = table.get(proc.pid)
    if row is None:
        return "gone"
    was_zombie = proc.stat is not None and proc.stat.startswith("Z")
    if row.is_zombie and not was_zombie:
        # exited, not yet reaped: ps shows "[name] <defunct>" now, so only start time and user identify it
        return "gone" if (row.start_ticks, row.user) == (proc.start_ticks, proc.user) else "changed"
    if (row.start_ticks, row.user, row.args) != (proc.start_ticks, proc.user, proc.command):
        return "changed"
    return "same"


def _held_by(snapshot: GpuSnapshot, pid: int) -> int:
    return sum(p.used_mib or 0 for p in snapshot.processes if p.pid == pid)


async def safe_kill(host: Host, targets: Iterable[ClassifiedProcess], current_user: str, sample: Callable,
                    *, grace_s: float = 10.0, kill_wait_s: float = 5.0, release_timeout_s: float = 30.0,
                    poll_s: float = 0.25, on_progress: ProgressCallback | None = None) -> KillReport:
    """Kill ``targets`` safely (module docstring) and wait for their GPU memory to be released.

    ``targets``: rows from :func:`specdash.gpu.classify.classify` (one per PID and GPU; duplicates merged);
    ``current_user``: login name on ``host``; ``sample``: ``async () -> GpuSnapshot`` (``GpuSampler.sample_once``);
    ``grace_s``: seconds between SIGTERM and SIGKILL; ``kill_wait_s``: seconds to wait after SIGKILL;
    ``release_timeout_s``: seconds to wait for the driver to free the memory; ``on_progress(line)``: progress
    text for the UI (the summary is not among it: callers show ``report.summary()`` once). Never raises for
    per-process problems (they are in the outcomes); raises HostError only when the host cannot be reached.
    """
    say = on_progress or (lambda _line: None)
    merged: dict[int, ClassifiedProcess] = {}
    gpus_of: dict[int, list[int | None]] = {}
    mib_of: dict[int, int] = {}
    for t in targets:
        merged.setdefault(t.pid, t)
        gpus_of.setdefault(t.pid, []).append(t.gpu_index)
        mib_of[t.pid] = mib_of.get(t.pid, 0) + (t.used_mib or 0)
    outcomes = {pid: KillOutcome(pid=pid, user=t.user, command=t.command, gpu_indices=tuple(gpus_of[pid]),
                                 before_mib=mib_of[pid], process_class=t.process_class, source=t.source,
                                 reason=t.reason) for pid, t in merged.items()}
    before = await sample()
    used_before = {g.index: g.memory_used_mib for g in before.gpus}
    touched = {i for gs in gpus_of.values() for i in gs if i is not None}
    unlisted = {pid for pid, t in merged.items() if t.source == SOURCE_DEVICE}
    if unlisted:  # which GPU they use is unknown: watch them all
        touched |= set(used_before)
    left: dict[int, str] = {}
    own_pgid = os.getpgrp() if host.is_local else None

    live: dict[int, ClassifiedProcess] = {}
    for pid, t in merged.items():
        why = refusal(t, current_user)
        if why is None and own_pgid is not None and t.pgid == own_pgid:
            why = "in specdash's own process group"
        if why:
            outcomes[pid].result, outcomes[pid].detail = "refused", why
        else:
            live[pid] = t

    crashed = all(t.process_class == ORPHAN for t in live.values())

    async def verify() -> ProcessTable:
        table = await read_process_table(host)
        if table.error:
            raise HostError(table.error)
        for pgid in {t.pgid for t in live.values() if t.pgid is not None and t.pgid > 1}:
            for row in table.group(pgid):
                if row.pid not in merged and not row.is_zombie and row.pid not in left:
                    if is_launch_shell(row.args):
                        left[row.pid] = f"PID {row.pid} ({LAUNCH_SHELL_LABEL} {pgid}): never signalled"
                    elif crashed:
                        left[row.pid] = (f"PID {row.pid} ({row.args[:60]}) in process group {pgid}: not verified "
                                         "as part of the crashed server, never signalled")
                    else:
                        left[row.pid] = f"PID {row.pid} ({row.args[:60]}) in process group {pgid}: never signalled"
        for pid in list(live):
            state = _matches(table, live[pid])
            if state == "gone":
                outcomes[pid].result = "exited"
                del live[pid]
            elif state == "changed":
                outcomes[pid].result = "identity changed"
                outcomes[pid].detail = "PID now belongs to another process: not signalled"
                del live[pid]
        return table

    async def send(signum: int) -> None:
        table = await verify()  # identity re-checked right before this signal
        name = signal.Signals(signum).name
        by_group: dict[int, list[int]] = {}
        for pid, t in live.items():
            by_group.setdefault(t.pgid if t.pgid is not None else -1, []).append(pid)
        for pgid, pids in by_group.items():
            members = [r for r in table.group(pgid) if not r.is_zombie] if pgid > 1 else []
            whole = bool(members) and pgid > 1 and pgid != own_pgid and all(r.pid in live for r in members)
            if whole:
                say(f"{name} to process group {pgid} ({len(members)} process{'es' if len(members) != 1 else ''})")
                await _signal(host, pgid, signum, True, [outcomes[p] for p in pids], f"{name} group {pgid}")
            else:
                for pid in pids:
                    say(f"{name} to PID {pid}")
                    await _signal(host, pid, signum, False, [outcomes[pid]], f"{name} pid {pid}")

    async def wait_exit(timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while live and time.monotonic() < deadline:
            await asyncio.sleep(poll_s)
            await verify()

    if live:
        await send(signal.SIGTERM)
        await wait_exit(grace_s)
    if live:
        say(f"{len(live)} still running after {grace_s:g} s: SIGKILL")
        await send(signal.SIGKILL)
        await wait_exit(kill_wait_s)
    for pid in live:
        if outcomes[pid].result == "pending":
            outcomes[pid].result = "still running"
            outcomes[pid].detail = "survived SIGKILL (uninterruptible sleep in the driver?)"

    # wait until the driver no longer lists the exited targets
    exited = [pid for pid, o in outcomes.items() if o.result == "exited"]
    after = before
    deadline = time.monotonic() + release_timeout_s
    unlisted_exited = [pid for pid in exited if pid in unlisted]

    def total_used(snap: GpuSnapshot) -> int | None:
        values = [g.memory_used_mib for g in snap.gpus]
        known = [v for v in values if v is not None]
        return None if not values or len(known) < len(values) else sum(known)

    def fell(snap: GpuSnapshot) -> bool:
        b, a = total_used(before), total_used(snap)
        return b is not None and a is not None and a < b

    if exited or live:
        say("waiting for the GPU memory to be released")
        while True:
            after = await sample()
            if after.error is None and not any(_held_by(after, pid) for pid in exited) \
                    and (not unlisted_exited or fell(after)):
                break
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(max(poll_s, 0.2))
    for pid, o in outcomes.items():
        if o.result in ("refused", "identity changed"):
            o.after_mib = o.before_mib if o.result == "refused" else 0
            continue
        o.after_mib = _held_by(after, pid) if after.error is None else o.before_mib
        if o.result == "exited" and o.after_mib == 0 and after.error is None \
                and (pid not in unlisted or fell(after)):
            o.result = "released"
    used_after = {g.index: g.memory_used_mib for g in after.gpus}
    signalled = [o for o in outcomes.values() if o.result not in ("refused", "identity changed")]
    released = bool(signalled) and all(o.result == "released" for o in signalled)
    report = KillReport(outcomes=list(outcomes.values()),
                        gpu_used_before_mib={i: used_before.get(i) for i in sorted(touched)},
                        gpu_used_after_mib={i: used_after.get(i) for i in sorted(touched)},
                        released=released, left=list(left.values()))
    return report  # the caller shows report.summary() once (a progress line too would print it twice)


async def _signal(host: Host, target: int, signum: int, group: bool, outcomes: list[KillOutcome],
                  label: str) -> None:
    _log.info("kill on %s: %s", host.name, label)
    try:
        await host.send_signal(target, signum, group=group)
    except ProcessLookupError:
        return  # exited in the meantime: the next table read records it
    except PermissionError:
        _log.warning("kill on %s: %s: permission denied", host.name, label)
        for o in outcomes:
            o.detail = f"{label}: permission denied"
        return
    for o in outcomes:
        o.signals.append(label)
