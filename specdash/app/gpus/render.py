"""Pure text builders for the GPU pane (Textual content markup with theme variables; no widgets here)."""

from __future__ import annotations

from textual.markup import escape

from specdash.gpu.classify import FOREIGN, ORPHAN, SERVER, UNKNOWN, ZOMBIE, ClassifiedProcess
from specdash.gpu.model import GpuInfo, GpuSnapshot

BAR_WIDTH = 24

#: theme variable per process class
CLASS_VARIABLE = {SERVER: "success", ORPHAN: "warning", ZOMBIE: "error", FOREIGN: "foreground-muted",
                  UNKNOWN: "secondary"}


def memory_variable(used_mib: int | None, total_mib: int | None) -> str:
    """Theme variable for a memory bar: success below 50 %, warning below 90 %, error above."""
    if not used_mib or not total_mib:
        return "success"
    share = used_mib / total_mib
    return "success" if share < 0.5 else "warning" if share < 0.9 else "error"


def bar(used_mib: int | None, total_mib: int | None, width: int = BAR_WIDTH) -> str:
    """``████░░░░`` markup: filled share of ``width`` cells coloured by :func:`memory_variable`."""
    if used_mib is None or not total_mib:
        return f"[$foreground-muted]{'·' * width}[/]"
    filled = max(0, min(width, round(width * used_mib / total_mib)))
    if used_mib > 0 and filled == 0:
        filled = 1
    return f"[${memory_variable(used_mib, total_mib)}]{'█' * filled}[/][$foreground-muted]{'░' * (width - filled)}[/]"


#: below this many columns a GPU takes the short form of :func:`gpu_line` (one line at 80 columns)
COMPACT_BELOW = 100


def gpu_line(gpu: GpuInfo, compact: bool = False) -> str:
    """One GPU: ``GPU 0  NVIDIA H100 80GB HBM3  ████░░ 70009 / 81559 MiB  util 37 %``; ``compact`` (a narrow
    pane): ``GPU 0 NVIDIA H100 80GB HB ████░░ 70009/81559 MiB  37 %`` (70 columns at most)."""
    used = "[N/A]" if gpu.memory_used_mib is None else str(gpu.memory_used_mib)
    total = "[N/A]" if gpu.memory_total_mib is None else str(gpu.memory_total_mib)
    util = "[N/A]" if gpu.utilization_pct is None else f"{gpu.utilization_pct:>3} %"
    if compact:
        memory = bar(gpu.memory_used_mib, gpu.memory_total_mib, 10)
        return (f"[b]GPU {gpu.index}[/b] {escape(gpu.name[:18]):<18} {memory} {escape(used):>6}/{escape(total)} MiB "
                f"{escape(util)}")
    return (f"[b]GPU {gpu.index}[/b]  {escape(gpu.name[:26]):<26}  {bar(gpu.memory_used_mib, gpu.memory_total_mib)} "
            f"{escape(used):>6} / {escape(total)} MiB  util {escape(util)}")


def over_capacity_note(gpu: GpuInfo) -> str | None:
    """The plain-text comment for a reading with more memory used than the GPU's total, else None.

    nvidia-smi's ``memory.used`` and ``memory.total`` are both framebuffer figures for the same device, so used above
    total cannot be a true reading of one GPU; specdash does not know which figure is wrong (the driver's count, a
    MIG or vGPU view, a pasted or scripted sample), so it says so instead of guessing."""
    used, total = gpu.memory_used_mib, gpu.memory_total_mib
    if used is None or not total or used <= total:
        return None
    return (f"GPU {gpu.index}: {used} MiB used is more than its {total} MiB total — an inconsistent reading "
            "(specdash cannot tell which figure is wrong); its bar is shown full, the figures unchanged")


def devices_markup(snapshot: GpuSnapshot | None, width: int | None = None) -> str:
    """All GPU lines (the short form when ``width`` columns is below :data:`COMPACT_BELOW`), a warning line under a
    GPU whose reading has more memory used than its total, or the no-GPU state as a normal, muted line."""
    if snapshot is None:
        return "[$foreground-muted]reading GPUs…[/]"
    if snapshot.error:
        return f"[$foreground-muted]{escape(snapshot.error)}[/]"
    compact = width is not None and width < COMPACT_BELOW
    lines = []
    for g in snapshot.gpus:
        lines.append(gpu_line(g, compact))
        note = over_capacity_note(g)
        if note:
            lines.append(f"[$warning]⚠ {escape(note)}[/]")
    if snapshot.warning:
        lines.append(f"[$warning]{escape(snapshot.warning)}[/]")
    return "\n".join(lines)


def summary_markup(summary: str, processes: tuple[ClassifiedProcess, ...] | list[ClassifiedProcess],
                   notes: list[str] | tuple[str, ...] = (), unaccounted: bool = False) -> str:
    """The summary line, in $warning when something holds orphaned memory or memory no listed process holds;
    ``notes`` (container, how unlisted memory was looked for) follow, muted, one per line."""
    bad = unaccounted or any(p.process_class in (ORPHAN, ZOMBIE) and p.cleanable for p in processes)
    text = f"[$warning b]{escape(summary)}[/]" if bad else f"[$foreground-muted]{escape(summary)}[/]"
    return "\n".join([text] + [f"[$foreground-muted]{escape(note)}[/]" for note in notes])


def confirm_lines(processes: list[ClassifiedProcess]) -> list[str]:
    """One markup line per process for the kill confirmation: PID, user, what it holds (``GPU 0: 36000 MiB``,
    ``no GPU memory``, device files with memory unknown), class, PGID, then the command line."""
    lines = []
    for p in processes:
        lines.append(f"[b]PID {p.pid}[/b]  user {escape(p.user or '?')}  {escape(p.holds)}  "
                     f"[${CLASS_VARIABLE[p.process_class]}]{p.process_class}[/]  PGID {p.pgid}\n"
                     f"  {escape((p.command or p.name)[:300])}")
    return lines
