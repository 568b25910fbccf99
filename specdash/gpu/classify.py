"""Label every GPU process: ``server``, ``orphan``, ``zombie``, ``foreign`` or ``unknown`` (pure: data in, data out).

The label comes from the process *tree* (ancestors, process group, session), never from the PPID alone: PPID 1
only means "detached" — a healthy ``nohup python3 -m sglang.launch_server ... &`` started from a shell that has
exited has PPID 1, and so has a user's ``nohup python3 train.py &``.

Words used below:

* **launcher** — a process whose command line starts an inference server: ``python3 -m sglang.launch_server``,
  ``sglang serve``, ``python3 -m sglang...`` / ``sglang_router.launch_server``, ``vllm serve`` /
  ``python3 -m vllm...`` (:func:`is_launcher`). *Live* = in the table and not a zombie.
* **inference worker** — a process SGLang (or vLLM) started: its title is ``sglang::scheduler_TP0``,
  ``sglang::detokenizer``, ``sglang::data_parallel_controller`` ... (SGLang sets them with ``setproctitle`` in
  ``python/sglang/srt/managers/*.py``, since v0.4), ``VLLM::EngineCore`` / ``VLLM::Worker``, or an SGLang/vLLM
  module is in its command line (:func:`looks_like_worker`). A bare ``multiprocessing`` child
  (``python3 -c "from multiprocessing.spawn import spawn_main..."``, SGLang without ``setproctitle``) counts only
  when its process group holds such a worker.

Rules, first match wins:

1. ``unknown`` — the driver reports a PID with no entry in this host's process table: NVML/nvidia-smi report PIDs
   of the *host's* PID namespace; inside a container they do not exist (or are someone else). Never signalled.
2. ``foreign`` — a graphics process, PID 1 / a child of PID 0 (init) that is not a launcher, or a process of
   another user: never offered for killing.
3. ``zombie`` — state Z: exited but not reaped; the driver still counts its memory.
4. ``server`` — a live launcher is the process itself or one of its ancestors, whatever that launcher's PPID or
   process-group leadership; or the process is in a process group given in ``server_pgids`` (a server specdash
   launched); or it is an inference worker and a live launcher is in its process group or session; or it is an
   inference worker whose nearest non-worker ancestor is alive and shares its process group or session (a
   program that runs ``sglang.Engine`` in-process, a custom launcher).
5. ``orphan`` — an inference worker that no live launcher owns: its launcher crashed, it was re-parented to PID 1
   or a subreaper. It still holds GPU memory, and the next launch will OOM.
6. ``foreign`` — everything else of yours: a detached job that is not an inference worker ("detached job, not from
   a server") or a process whose parent is alive. Left alone.

Only ``orphan`` and ``zombie`` are cleaned by ``specdash clean``; ``server`` rows can be killed from the pane
after confirmation; ``foreign`` and ``unknown`` never. A driver-listed process that holds 0 MiB is never a target,
unless it belongs to a crashed server another member of which holds memory (then the whole server goes).

**Whole crashed servers** (:func:`crashed_server_members`): the other processes of an orphan's process group —
the detokenizer, the data-parallel controller, schedulers without GPU memory — are classified with the same rules;
those that are orphans too join the clean-up (``source="group"``), the rest are reported as left alone.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable

from specdash.gpu.model import GpuSnapshot
from specdash.gpu.proctable import ProcessRow, ProcessTable

SERVER, ORPHAN, ZOMBIE, FOREIGN, UNKNOWN = "server", "orphan", "zombie", "foreign", "unknown"
CLASSES: tuple[str, ...] = (SERVER, ORPHAN, ZOMBIE, FOREIGN, UNKNOWN)
#: classes that ``specdash clean`` kills
CLEANABLE: frozenset[str] = frozenset({ORPHAN, ZOMBIE})
#: classes the GPU pane may kill (after confirmation)
KILLABLE: frozenset[str] = frozenset({ORPHAN, ZOMBIE, SERVER})

#: where a row comes from: the driver's process list, open GPU device files, or the process group of a crashed
#: server (a member holding no GPU memory)
SOURCE_DRIVER, SOURCE_DEVICE, SOURCE_GROUP = "driver", "device files", "process group"

_MODULE_LAUNCHER = re.compile(r"^(sglang|sglang_router|vllm)(\.|$)")
_SCRIPT_LAUNCHER = re.compile(r"(^|/)(sglang|sglang_router)/launch_server\.py$")
_WORKER_TITLE = re.compile(r"^(sglang::|sglang:|VLLM::|vllm::)")
_WORKER_SCRIPT = re.compile(r"(^|/)(sglang|sglang_router|vllm)/\S*\.py$")
_MP_CHILD = ("multiprocessing.spawn", "multiprocessing.forkserver", "--multiprocessing-fork",
             "multiprocessing.resource_tracker")


def is_launcher(args: str) -> bool:
    """True for the command line of an inference-server launcher: ``python3 -m sglang.launch_server ...``,
    ``sglang serve ...``, ``python3 -m sglang_router.launch_server``, ``python3 .../sglang/launch_server.py``,
    ``vllm serve ...``, ``python3 -m vllm.entrypoints.openai.api_server``."""
    words = args.split()
    for i, word in enumerate(words[:6]):
        if word == "-m" and i + 1 < len(words) and _MODULE_LAUNCHER.match(words[i + 1]):
            return True
        if _SCRIPT_LAUNCHER.search(word) or word.endswith(("sglang.launch_server", "sglang_router.launch_server")):
            return True
        if os.path.basename(word) in ("sglang", "vllm") and i + 1 < len(words) and words[i + 1] == "serve":
            return True
    return False


def looks_like_worker(args: str) -> bool:
    """True for an SGLang/vLLM process: an ``sglang::``/``VLLM::`` process title, an SGLang/vLLM module run with
    ``-m``, an SGLang/vLLM script (``.../sglang/....py``) or the ``sglang``/``vllm`` console script as the program.
    Only the first words count: an argument such as ``--out /data/sglang/ckpt`` does not make a worker."""
    if _WORKER_TITLE.match(args):
        return True
    words = args.split()
    for i, word in enumerate(words[:4]):
        if word == "-m" and i + 1 < len(words) and _MODULE_LAUNCHER.match(words[i + 1]):
            return True
        if i <= 1 and (_WORKER_SCRIPT.search(word) or os.path.basename(word) in ("sglang", "vllm")):
            return True
    return False


def _mp_child(args: str) -> bool:
    return any(mark in args for mark in _MP_CHILD)


@dataclasses.dataclass(frozen=True)
class ClassifiedProcess:
    """A GPU process joined with its process-table row.

    ``pid``; ``gpu_index`` (None when unknown: its GPU UUID matched none, or it was found through device files or
    its process group); ``gpu_uuid``; ``used_mib`` (None when unknown: ``[N/A]`` or not listed by the driver);
    ``name`` (process title when known, else the driver's name); ``command`` (full command line, "" when unknown);
    ``user``, ``ppid``, ``pgid``, ``sid``, ``stat``, ``start_ticks`` (start time in clock ticks after boot; with
    user and command the identity checked before every signal) — None when the PID is not in the table;
    ``process_class`` (one of :data:`CLASSES`); ``reason`` (one line a user can act on); ``source`` (one of
    :data:`SOURCE_DRIVER`, :data:`SOURCE_DEVICE`, :data:`SOURCE_GROUP`); ``devices`` (GPU device files it holds
    open, when found that way); ``crashed_group`` (for orphans: the process group of the crashed server they come
    from); ``target_ok`` (False when the class would allow cleaning but this row must not be a target, e.g. 0 MiB).
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
    start_ticks: int | None
    process_class: str
    reason: str
    source: str = SOURCE_DRIVER
    devices: tuple[str, ...] = ()
    sid: int | None = None
    crashed_group: int | None = None
    target_ok: bool = True

    @property
    def killable(self) -> bool:
        """True when the GPU pane may offer to kill it (``orphan``, ``zombie``, ``server``)."""
        return self.process_class in KILLABLE and self.start_ticks is not None and self.target_ok

    @property
    def cleanable(self) -> bool:
        """True when ``specdash clean`` kills it (``orphan`` or ``zombie``)."""
        return self.process_class in CLEANABLE and self.start_ticks is not None and self.target_ok

    @property
    def holds(self) -> str:
        """What it holds, for lists and dialogs: ``GPU 0: 36000 MiB``, ``/dev/nvidia0, /dev/nvidiactl (memory
        unknown)``, ``no GPU memory``."""
        if self.source == SOURCE_GROUP:
            return "no GPU memory"
        if self.source == SOURCE_DEVICE:
            return f"{', '.join(self.devices) or 'GPU devices'} open (memory per process unknown)"
        gpu = "GPU ?" if self.gpu_index is None else f"GPU {self.gpu_index}"
        return f"{gpu}: {'[N/A]' if self.used_mib is None else self.used_mib} MiB"

    def to_json(self) -> dict:
        """The ``specdash ps --json`` process object: pid, gpu, used_mib, name, user, ppid, pgid, class, reason,
        source (``driver`` / ``device files`` / ``process group``), devices, target (would ``clean`` take it)."""
        return {"pid": self.pid, "gpu": self.gpu_index, "used_mib": self.used_mib, "name": self.name,
                "user": self.user, "ppid": self.ppid, "pgid": self.pgid, "class": self.process_class,
                "reason": self.reason, "source": self.source, "devices": list(self.devices),
                "target": self.cleanable}


def _title(row: ProcessRow | None, fallback: str) -> str:
    if row is None or not row.args:
        return fallback
    return row.args.split()[0]


def _short(row: ProcessRow, limit: int = 60) -> str:
    text = row.args if len(row.args) <= limit else row.args[:limit - 1] + "…"
    return f"PID {row.pid} ({text})"


def _mib(value: int | None) -> str:
    return "? MiB" if value is None else f"{value} MiB"


class _Tree:
    """The process table with the questions the rules ask, answered once per table."""

    def __init__(self, table: ProcessTable, server_pgids: Iterable[int]) -> None:
        self.table = table
        self.servers = set(server_pgids)
        self.live_launchers = [r for r in table.rows.values() if not r.is_zombie and is_launcher(r.args)]
        self.launcher_by_pgid: dict[int, ProcessRow] = {}
        self.launcher_by_sid: dict[int, ProcessRow] = {}
        for r in self.live_launchers:
            self.launcher_by_pgid.setdefault(r.pgid, r)
            if r.sid > 1:
                self.launcher_by_sid.setdefault(r.sid, r)
        self.worker_groups = {r.pgid for r in table.rows.values()
                              if r.pgid > 1 and not r.is_zombie and looks_like_worker(r.args)}

    def worker_like(self, row: ProcessRow) -> bool:
        return looks_like_worker(row.args) or (_mp_child(row.args) and row.pgid in self.worker_groups)

    def owner(self, row: ProcessRow) -> tuple[str, ProcessRow] | None:
        """``(how, launcher_row)`` of the live server that owns ``row``, or None."""
        chain = [row] + self.table.ancestors(row.pid)
        known = next((r for r in chain if r.pgid in self.servers or r.pid in self.servers), None)
        if known is not None:
            return "known", known
        launcher = next((r for r in chain if not r.is_zombie and is_launcher(r.args)), None)
        if launcher is not None:
            return ("self" if launcher.pid == row.pid else "ancestor"), launcher
        if not self.worker_like(row):
            return None
        if row.pgid > 1 and row.pgid in self.launcher_by_pgid:
            return "group", self.launcher_by_pgid[row.pgid]
        if row.sid > 1 and row.sid in self.launcher_by_sid:
            return "session", self.launcher_by_sid[row.sid]
        # nearest ancestor that is not a worker itself: alive, in the same group or session, not init -> it runs
        # these workers (sglang.Engine in a script, a custom launcher); a subreaper / PID 1 that adopted them is not
        for r in chain[1:]:
            if self.worker_like(r):
                continue
            if r.pid > 1 and r.ppid != 0 and not r.is_zombie and (
                    (r.pgid == row.pgid and row.pgid > 1) or (r.sid == row.sid and row.sid > 1)):
                return "program", r
            break
        return None


def classify_row(row: ProcessRow, tree: _Tree, current_user: str, gpu: str, held: str,
                 title: str) -> tuple[str, str]:
    """``(class, reason)`` for a process that is in the table (rules 2–6 of the module docstring)."""
    if row.pid == 1 or row.ppid == 0:
        if is_launcher(row.args) and not row.is_zombie:
            return SERVER, f"PID {row.pid} is a live SGLang launcher (container init) — stop it explicitly"
        return FOREIGN, f"PID {row.pid} is the init process of this host or container — never killed"
    if row.user != current_user:
        return FOREIGN, f"belongs to user {row.user}, not {current_user} — never killed"
    if row.is_zombie:
        return ZOMBIE, (f"{gpu} held by PID {row.pid} ({title}, {held}) — zombie (state Z), parent PID {row.ppid} "
                        "has not reaped it")
    owned = tree.owner(row)
    if owned is not None:
        how, r = owned
        if how == "known":
            return SERVER, f"in process group {r.pgid} of the running server"
        if how == "self":
            return SERVER, f"a live SGLang launcher (PPID {row.ppid}) — a running server: stop it explicitly"
        if how == "ancestor":
            return SERVER, f"part of the live server launched by {_short(r)} — stop that server explicitly"
        if how in ("group", "session"):
            return SERVER, (f"in the {'process group' if how == 'group' else 'session'} of the live server "
                            f"{_short(r)} — stop that server explicitly")
        return SERVER, (f"SGLang workers of the live program {_short(r)} (an in-process engine or a custom "
                        "launcher) — stop that program explicitly")
    if tree.worker_like(row):
        parent = tree.table.get(row.ppid)
        if parent is None:
            why = f"its parent PID {row.ppid} is gone"
        elif row.ppid == 1 or parent.ppid == 0:
            why = f"re-parented to PID {row.ppid} (its launcher exited)"
        else:
            why = (f"its parent PID {row.ppid} ({_title(parent, '?')}) is no SGLang launcher and not in its "
                   "process group or session")
        return ORPHAN, (f"{gpu} held by PID {row.pid} ({title}, {held}) — orphan of a crashed server: no live "
                        f"SGLang launcher owns it; {why}")
    parent = tree.table.get(row.ppid)
    if parent is None or row.ppid == 1 or parent.ppid == 0 or parent.is_zombie:
        return FOREIGN, (f"detached job, not from a server (PPID {row.ppid}; no SGLang launcher or worker in its "
                         "process tree) — left alone")
    return FOREIGN, (f"your process, not part of a server; its parent PID {row.ppid} ({_title(parent, '?')}) is "
                     "alive — left alone")


def classify(snapshot: GpuSnapshot, proc_table: ProcessTable, current_user: str,
             server_pgids: Iterable[int] = frozenset()) -> list[ClassifiedProcess]:
    """Classify each of ``snapshot``'s GPU processes (one result per process and GPU, in snapshot order).

    ``proc_table``: the same host's table (:func:`specdash.gpu.proctable.read_process_table`); ``current_user``:
    login name specdash acts as (``id -un``); ``server_pgids``: process groups of live servers specdash launched.
    Rules in the module docstring. Orphans get ``crashed_group``; see :func:`mark_targets` for ``target_ok``.
    """
    tree = _Tree(proc_table, server_pgids)
    out: list[ClassifiedProcess] = []
    for proc in snapshot.processes:
        row = proc_table.get(proc.pid)
        held = _mib(proc.used_mib)
        gpu = f"GPU {proc.gpu_index}" if proc.gpu_index is not None else f"GPU {proc.gpu_uuid or '?'}"
        if row is None:
            hint = " (the driver could not name it either)" if proc.name.startswith("[") else ""
            cls, reason = UNKNOWN, (
                f"PID {proc.pid} is not in this host's process table{hint}: seen from a container the driver "
                "reports host PIDs, so this is probably a process in a container or another PID namespace — "
                "inspect and clean it from the host itself (or a container started with --pid=host)")
        elif proc.kind == "graphics":
            cls, reason = FOREIGN, f"graphics process ({_title(row, proc.name)}) — display/desktop, never killed"
        else:
            cls, reason = classify_row(row, tree, current_user, gpu, held, _title(row, proc.name))
        out.append(_from_row(row, proc.pid, proc.name, cls, reason, gpu_index=proc.gpu_index,
                             gpu_uuid=proc.gpu_uuid, used_mib=proc.used_mib))
    return out


def classify_holders(holders: dict[int, tuple[str, ...]], proc_table: ProcessTable, current_user: str,
                     server_pgids: Iterable[int] = frozenset()) -> list[ClassifiedProcess]:
    """Classify processes found holding GPU device files (``pid -> device paths``, see
    :mod:`specdash.gpu.devices`) that the driver did not list: same rules, memory per process unknown."""
    tree = _Tree(proc_table, server_pgids)
    out = []
    for pid, devices in sorted(holders.items()):
        row = proc_table.get(pid)
        if row is None:
            continue  # exited since the scan
        held = "memory unknown"
        cls, reason = classify_row(row, tree, current_user, "GPU memory (device files open)", held,
                                   _title(row, "?"))
        reason += " (not listed by the driver: found by its open GPU device files)"
        out.append(_from_row(row, pid, _title(row, "?"), cls, reason, source=SOURCE_DEVICE, devices=devices))
    return out


def _from_row(row: ProcessRow | None, pid: int, name: str, cls: str, reason: str, *, gpu_index: int | None = None,
              gpu_uuid: str = "", used_mib: int | None = None, source: str = SOURCE_DRIVER,
              devices: tuple[str, ...] = ()) -> ClassifiedProcess:
    return ClassifiedProcess(
        pid=pid, gpu_index=gpu_index, gpu_uuid=gpu_uuid, used_mib=used_mib,
        name=_title(row, name) if row is not None else name,
        command=row.args if row is not None else "", user=row.user if row is not None else None,
        ppid=row.ppid if row is not None else None, pgid=row.pgid if row is not None else None,
        sid=row.sid if row is not None else None,
        stat=row.stat if row is not None else None, start_ticks=row.start_ticks if row is not None else None,
        process_class=cls, reason=reason, source=source, devices=devices,
        crashed_group=row.pgid if (cls == ORPHAN and row is not None) else None)


def distrust_pids_without_devices(processes: list[ClassifiedProcess], holders: dict[int, tuple[str, ...]],
                                  current_user: str) -> list[ClassifiedProcess]:
    """Inside a container, a PID the driver lists may be a *host* PID that here names another process. A process
    that really holds GPU memory keeps the GPU device files open (CUDA holds ``/dev/nvidiactl``, ``/dev/nvidiaN``,
    ``/dev/nvidia-uvm``), so when the device scan works (``holders`` is not empty) a driver-listed, live process of
    ``current_user`` that holds none of them is relabelled ``unknown`` and never signalled. Zombies (their files are
    closed) and other users' processes (their files cannot be read) are left as they are."""
    out = []
    for p in processes:
        if (p.source == SOURCE_DRIVER and p.user == current_user and p.pid not in holders
                and p.stat is not None and not p.stat.startswith(("Z", "X")) and p.process_class != UNKNOWN):
            p = dataclasses.replace(p, process_class=UNKNOWN, crashed_group=None, reason=(
                f"the driver lists PID {p.pid} with GPU memory, but PID {p.pid} here ({p.name}) holds no GPU device "
                "file: inside this container the driver's number is probably a host PID that means another "
                "process — never signalled"))
        out.append(p)
    return out


def crashed_server_members(processes: list[ClassifiedProcess], proc_table: ProcessTable, current_user: str,
                           server_pgids: Iterable[int] = frozenset()
                           ) -> tuple[list[ClassifiedProcess], list[tuple[ProcessRow, str]]]:
    """The rest of each crashed server: ``(members, left)``.

    ``members``: processes of an orphan's process group, not already in ``processes``, that the same rules call
    ``orphan`` (``source="group"``, no GPU memory: the detokenizer, the data-parallel controller, ...). ``left``:
    the group's other live processes with why they are left alone (another user, not an inference worker, ...).
    """
    tree = _Tree(proc_table, server_pgids)
    listed = {p.pid for p in processes}
    groups = sorted({p.crashed_group for p in processes if p.crashed_group is not None and p.crashed_group > 1})
    members: list[ClassifiedProcess] = []
    left: list[tuple[ProcessRow, str]] = []
    for pgid in groups:
        for row in sorted(proc_table.group(pgid), key=lambda r: r.pid):
            if row.pid in listed or row.is_zombie:
                continue
            cls, reason = classify_row(row, tree, current_user, "no GPU memory", "0 MiB", _title(row, "?"))
            if cls == ORPHAN:
                reason = (f"PID {row.pid} ({_title(row, '?')}) holds no GPU memory — another process of the crashed "
                          f"server in process group {pgid}; cleaned with it")
                members.append(_from_row(row, row.pid, _title(row, "?"), cls, reason, source=SOURCE_GROUP))
            else:
                left.append((row, f"{cls}: {reason.removesuffix(' — left alone')}"))
    return members, left


def mark_targets(processes: list[ClassifiedProcess]) -> list[ClassifiedProcess]:
    """Set ``target_ok`` so that a process holding no GPU memory is never a target on its own account: a crashed
    server (orphans of one process group) is a target only when one of its members holds memory (more than 0 MiB,
    or an unknown amount); a zombie listed with 0 MiB is never one."""
    holding: set[int] = set()
    for p in processes:
        if p.process_class == ORPHAN and p.crashed_group is not None and p.source != SOURCE_GROUP \
                and (p.used_mib is None or p.used_mib > 0):
            holding.add(p.crashed_group)
    out = []
    for p in processes:
        if p.process_class == ORPHAN and p.crashed_group not in holding:
            p = dataclasses.replace(p, target_ok=False,
                                    reason=p.reason + " — holds no GPU memory: never a clean-up target")
        elif p.process_class == ZOMBIE and p.used_mib == 0:
            p = dataclasses.replace(p, target_ok=False, reason=p.reason + " — holds 0 MiB: never a target")
        out.append(p)
    return out


def _gpu_ranges(indices: Iterable[int | None]) -> str:
    """``[0, 1, 3]`` -> ``"GPU 0–1, 3"``."""
    nums = sorted({i for i in indices if i is not None})
    if not nums:
        return "an unknown GPU"
    spans: list[str] = []
    start = prev = nums[0]
    for n in nums[1:] + [None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        spans.append(f"{start}" if start == prev else f"{start}–{prev}")
        if n is not None:
            start = prev = n
    return "GPU " + ", ".join(spans)


def _gib(mib: int) -> str:
    return f"{mib / 1024:.1f} GiB"


def unattributed_text(unattributed_mib: dict[int, int]) -> str:
    """``{0: 69939}`` -> ``GPU 0: 68.3 GiB held by processes the driver does not list — container PID
    namespace?``; "" when empty."""
    if not unattributed_mib:
        return ""
    each = ", ".join(f"GPU {i}: {_gib(m)}" for i, m in sorted(unattributed_mib.items()))
    return f"{each} held by processes the driver does not list — container PID namespace?"


def summarize(processes: list[ClassifiedProcess], unattributed_mib: dict[int, int] | None = None) -> str:
    """One line for the pane header and ``specdash ps``, e.g. ``3 orphans from a crashed server hold 71.2 GiB on
    GPU 0–1``; ``unattributed_mib`` (GPU index -> MiB beyond the idle baseline that no listed process holds) adds
    ``GPU 0: 68.3 GiB held by processes the driver does not list — container PID namespace?``. ``no orphaned GPU
    memory`` only when nothing is orphaned and nothing is unaccounted for."""
    parts: list[str] = []
    for cls, singular, plural in ((ORPHAN, "orphan", "orphans"), (ZOMBIE, "zombie", "zombies")):
        rows = [p for p in processes if p.process_class == cls and p.source != SOURCE_GROUP and p.target_ok]
        if not rows:
            continue
        pids = {p.pid for p in rows}
        mib = sum(p.used_mib or 0 for p in rows)
        unknown = any(p.used_mib is None for p in rows)
        origin = " from a crashed server" if cls == ORPHAN else ""
        noun = singular if len(pids) == 1 else plural
        verb = "holds" if len(pids) == 1 else "hold"
        amount = _gib(mib) if not unknown else (f"at least {_gib(mib)}" if mib else "an unknown amount of memory")
        where = _gpu_ranges(p.gpu_index for p in rows)
        text = f"{len(pids)} {noun}{origin} {verb} {amount}" + ("" if where == "an unknown GPU" else f" on {where}")
        if cls == ORPHAN:
            extra = {p.pid for p in processes if p.process_class == ORPHAN and p.source == SOURCE_GROUP}
            if extra:
                text += (f" (+{len(extra)} more process{'es' if len(extra) != 1 else ''} of the same server "
                         "without GPU memory)")
        parts.append(text)
    foreign = [p for p in processes if p.process_class == UNKNOWN]
    if foreign:
        mib = sum(p.used_mib or 0 for p in foreign)
        n = len({p.pid for p in foreign})
        parts.append(f"{n} process{'es' if n != 1 else ''} from another PID namespace (container?) "
                     f"hold{'s' if n == 1 else ''} {_gib(mib)} — not visible here")
    if unattributed_mib:
        parts.append(unattributed_text(unattributed_mib))
    if not parts:
        return "no orphaned GPU memory"
    return "; ".join(parts)
