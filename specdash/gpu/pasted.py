"""Classify the processes of a *pasted* nvidia-smi output, with what a paste can tell and nothing more.

The live rules (:mod:`specdash.gpu.classify`) decide ``server`` / ``orphan`` / ``zombie`` from the host's process
tree: parent, process group, session, state, container. A paste has none of that, so here:

* a row of Type ``G`` or ``C+G`` (a graphics context: a display server, a desktop, a browser) is ``foreign`` —
  never killed, as on a live host; so is the MPS server (``nvidia-cuda-mps-server``, Type ``M``);
* every other row is ``unknown``, with what its name shows: an SGLang / vLLM worker by its process title
  (``sglang::scheduler_TP0``, set with ``setproctitle`` in SGLang's ``python/sglang/srt/managers/*.py``), a Python
  process (nvidia-smi shows the executable, not the command line), a name the driver could not read
  (``[Not Found]``: another PID namespace), or a name cut by nvidia-smi;
* nothing is ever offered for killing: there is no host to check a PID against, and a PID from a paste may since
  have been reused.
"""

from __future__ import annotations

import dataclasses
import os

from specdash.gpu.classify import FOREIGN, UNKNOWN, is_launcher, looks_like_worker
from specdash.gpu.smi_table import GRAPHICS_TYPES, PastedProcess, PastedSmi

#: what every unknown row says (the summary line says why: :data:`NEEDS_HOST`)
ROW_NEEDS_HOST = "server or orphan: unknown without the host"
#: the summary line's sentence on what a paste cannot tell
NEEDS_HOST = ("server, orphan or zombie is unknown from a pasted table (that needs the process's parent, process "
              "group and container on the host: run `specdash ps HOST` there)")
NO_KILL = "nothing is offered for kill from a paste (there is no host to check a PID against)"
#: GPU memory in MiB above which used memory that no listed process holds is reported (a GPU's own context and
#: an idle driver hold a few hundred MiB)
UNLISTED_MIB = 1024


@dataclasses.dataclass(frozen=True)
class PastedVerdict:
    """A pasted process row with its label: ``process`` (the row), ``process_class`` (``foreign`` or
    ``unknown``), ``looks_like`` (a few words from its name and type: ``SGLang worker``, ``graphics``, ``Python
    process``, ...), ``reason`` (one line). ``killable`` is always False."""

    process: PastedProcess
    process_class: str
    looks_like: str
    reason: str

    @property
    def killable(self) -> bool:
        return False

    def to_json(self) -> dict:
        p = self.process
        return {"line": p.line, "gpu": p.gpu_index, "gi": p.gi, "ci": p.ci, "pid": p.pid, "type": p.process_type,
                "name": p.name, "name_cut": p.name_cut, "used_mib": p.used_mib, "row_cut": p.cut,
                "class": self.process_class, "looks_like": self.looks_like, "reason": self.reason,
                "killable": False}


def classify_pasted(processes: list[PastedProcess]) -> list[PastedVerdict]:
    """One :class:`PastedVerdict` per row, in order (rules in the module docstring)."""
    return [_verdict(p) for p in processes]


def _verdict(p: PastedProcess) -> PastedVerdict:
    name = p.name
    base = os.path.basename(name.rstrip("/")) if name.startswith("/") else name
    cut = " (its name is cut by nvidia-smi, so the program is not certain)" if p.name_cut else ""
    if p.process_type in GRAPHICS_TYPES:
        what = "graphics" if p.process_type == "G" else "graphics (C+G)"
        return PastedVerdict(p, FOREIGN, what, f"Type {p.process_type}: it holds a graphics context (a display, "
                                               "desktop or browser) — never killed")
    if base.startswith("nvidia-cuda-mps") or p.process_type == "M":
        return PastedVerdict(p, FOREIGN, "MPS server", "the CUDA MPS server: every MPS client depends on it — "
                                                       "never killed")
    if name.startswith("[") and name.endswith("]"):
        return PastedVerdict(p, UNKNOWN, "unnamed", f"the driver could not name it ({name}): a process of another "
                                                    "PID namespace (a container); " + ROW_NEEDS_HOST)
    if not name:
        return PastedVerdict(p, UNKNOWN, "unnamed", "no name in the paste; " + ROW_NEEDS_HOST)
    if looks_like_worker(name) or is_launcher(name):
        engine = "vLLM" if name.lower().startswith("vllm") or "/vllm/" in name else "SGLang"
        return PastedVerdict(p, UNKNOWN, f"{engine} worker",
                             f"an {engine} process by its title ({name}){cut}; " + ROW_NEEDS_HOST)
    if base.startswith("python") or name.endswith(("/python", "/python3")) or "python3." in base:
        return PastedVerdict(p, UNKNOWN, "Python process",
                             f"a Python process ({name}){cut}: nvidia-smi shows the executable, not the command "
                             "line, so which program (an SGLang launcher started without a process title, training, "
                             "a notebook) is unknown; " + ROW_NEEDS_HOST)
    return PastedVerdict(p, UNKNOWN, "other program", f"{name}{cut}; " + ROW_NEEDS_HOST)


def unlisted_mib(smi: PastedSmi) -> dict[int, int]:
    """GPU index -> MiB used on that GPU beyond what its listed processes hold, when the paste allows the sum:
    the process list is in the paste and complete, every row on that GPU has its memory, and the GPU is not in
    MIG mode. Only amounts above :data:`UNLISTED_MIB` are returned."""
    if not smi.processes_listed or not smi.complete:
        return {}
    out: dict[int, int] = {}
    for gpu in smi.gpus:
        if gpu.memory_used_mib is None or gpu.mig:
            continue
        rows = [p for p in smi.processes if p.gpu_index == gpu.index]
        if any(p.used_mib is None for p in rows) or any(p.gpu_index is None for p in smi.processes):
            continue
        extra = gpu.memory_used_mib - sum(p.used_mib or 0 for p in rows)
        if extra > UNLISTED_MIB:
            out[gpu.index] = extra
    return out


def summary_line(smi: PastedSmi, verdicts: list[PastedVerdict]) -> str:
    """One line: how many GPUs and processes, what the processes look like, and the two facts a paste cannot give,
    e.g. ``2 GPUs; 3 processes (2 SGLang worker, 1 graphics) hold at least 140.2 GiB; server, orphan ...``."""
    parts = [f"{len(smi.gpus)} GPU{'s' if len(smi.gpus) != 1 else ''}" if smi.gpus else "no GPU rows in the paste"]
    if not smi.processes_listed:
        parts.append("no process list in the paste")
    elif not verdicts:
        parts.append("no processes listed" + ("" if smi.complete else " (the list is cut)"))
    else:
        counts: dict[str, int] = {}
        for v in verdicts:
            counts[v.looks_like] = counts.get(v.looks_like, 0) + 1
        mib = sum(v.process.used_mib or 0 for v in verdicts)
        unknown = any(v.process.used_mib is None for v in verdicts)
        amount = f"{mib / 1024:.1f} GiB" if not unknown else (f"at least {mib / 1024:.1f} GiB" if mib else
                                                               "an unknown amount of memory")
        n = len(verdicts)
        kinds = ", ".join(f"{c} {k}" for k, c in counts.items())
        parts.append(f"{n} process{'es' if n != 1 else ''} ({kinds}) hold{'s' if n == 1 else ''} {amount}")
    text = "; ".join(parts)
    if verdicts:
        text += "; " + NEEDS_HOST
    return text + "; " + NO_KILL


def pasted_json(smi: PastedSmi) -> dict:
    """The ``specdash ps --from --json`` object: ``source`` ("pasted"), ``formats``, ``smi_version``,
    ``driver_version``, ``cuda_version``, ``gpus`` (index, name, name_cut, memory_used_mib, memory_total_mib,
    utilization_pct, mig, line, unlisted_mib), ``mig_devices``, ``processes`` (:meth:`PastedVerdict.to_json`),
    ``processes_listed``, ``no_processes``, ``complete``, ``error``, ``notes`` and ``summary`` (the line printed
    last)."""
    verdicts = classify_pasted(smi.processes)
    unlisted = unlisted_mib(smi)
    return {
        "source": "pasted",
        "formats": smi.formats,
        "smi_version": smi.smi_version, "driver_version": smi.driver_version, "cuda_version": smi.cuda_version,
        "gpus": [{"index": g.index, "name": g.name, "name_cut": g.name_cut, "memory_used_mib": g.memory_used_mib,
                  "memory_total_mib": g.memory_total_mib, "utilization_pct": g.utilization_pct, "mig": g.mig,
                  "line": g.line, "unlisted_mib": unlisted.get(g.index)} for g in smi.gpus],
        "mig_devices": [dataclasses.asdict(m) for m in smi.mig_devices],
        "processes": [v.to_json() for v in verdicts],
        "processes_listed": smi.processes_listed, "no_processes": smi.no_processes, "complete": smi.complete,
        "error": smi.error,
        "notes": list(smi.notes),
        "summary": summary_line(smi, verdicts),
    }


def pasted_text(smi: PastedSmi) -> str:
    """What ``specdash ps --from`` prints: the driver line, the GPU table, the process rows each with its reason,
    the notes, and the summary line (the same values as :func:`pasted_json`)."""
    data = pasted_json(smi)
    lines: list[str] = []
    if smi.driver_version:
        lines.append(f"pasted nvidia-smi {smi.smi_version}: driver {smi.driver_version}, CUDA "
                     f"{smi.cuda_version or 'unknown'}")
    if smi.error:
        lines.append(f"nvidia-smi said: {smi.error}")
    if data["gpus"]:
        lines.append(f"{'GPU':<4}{'NAME':<28}{'MEMORY USED / TOTAL':<24}UTIL")
        for g in data["gpus"]:
            used = "?" if g["memory_used_mib"] is None else g["memory_used_mib"]
            total = "?" if g["memory_total_mib"] is None else g["memory_total_mib"]
            util = "[N/A]" if g["utilization_pct"] is None else f"{g['utilization_pct']} %"
            name = g["name"][:27] + (" (MIG)" if g["mig"] else "")
            lines.append(f"{g['index']:<4}{name:<28}{f'{used} / {total} MiB':<24}{util}")
            if g["unlisted_mib"]:
                lines.append(f"    GPU {g['index']}: {g['unlisted_mib']} MiB used that no listed process holds "
                             "(processes of another container or PID namespace?)")
    for m in smi.mig_devices:
        lines.append(f"MIG GPU {m.gpu} GI {m.gi} CI {m.ci} dev {m.mig_dev}: {m.memory_used_mib} / "
                     f"{m.memory_total_mib} MiB")
    if data["processes"]:
        lines.append("")
        lines.append(f"{'LINE':<6}{'PID':<10}{'GPU':<5}{'TYPE':<6}{'MiB':<9}{'CLASS':<9}{'LOOKS LIKE':<17}NAME")
        for p in data["processes"]:
            gpu = "?" if p["gpu"] is None else p["gpu"]
            mib = "?" if p["used_mib"] is None else p["used_mib"]
            lines.append(f"{p['line']:<6}{p['pid']:<10}{gpu!s:<5}{p['type'] or '?':<6}{mib!s:<9}{p['class']:<9}"
                         f"{p['looks_like']:<17}{p['name'][:80]}")
            lines.append(f"{'':<6}{p['reason']}")
    elif smi.no_processes:
        lines.append("")
        lines.append("no running processes (nvidia-smi: No running processes found)")
    for note in data["notes"]:
        lines.append(f"note: {note}")
    lines.append("")
    lines.append(data["summary"])
    return "\n".join(lines) + "\n"
