"""Text for the benchmarks pane, from core results (pure: no widgets here, so it is testable on its own)."""

from __future__ import annotations

from specdash.bench.results import RunResult, accept_source_words
from specdash.bench.runner import BenchProgress
from specdash.bench.sweep import SweepRow

RUN_COLUMNS = ("Started", "Workload", "API", "OK/failed", "out tok/s", "req/s", "TTFT p50/p99 ms",
               "ITL p50/p99 ms", "TPOT p50 ms", "Accept len", "Note")
SWEEP_COLUMNS = ("Config", "steps/topk/draft", "out tok/s", "spread", "speedup", "accept len", "α",
                 "predicted", "TTFT p50", "ITL p50", "Status")


def num(value: float | None, digits: int = 1) -> str:
    """``value`` with ``digits`` decimals, or "-" for None."""
    return "-" if value is None else f"{value:.{digits}f}"


def run_row(result: RunResult) -> tuple[str, ...]:
    """One results-table row for a run (see :data:`RUN_COLUMNS`)."""
    s = result.settings
    accept = ("-" if result.accept_length is None
              else f"{result.accept_length:.2f} ({accept_source_words(result.accept_length_source)})")
    notes = []
    if result.partial:
        notes.append("PARTIAL (cancelled)")
    if result.errors:
        notes.append(f"{result.errors} failed")
    return (
        result.started_at.replace("T", " ")[:19],
        str(s.get("workload", "")),
        str(s.get("api", "")),
        f"{result.completed}/{result.errors}",
        num(result.output_tokens_per_s),
        num(result.requests_per_s, 2),
        f"{num(result.ttft_ms.p50)}/{num(result.ttft_ms.p99)}",
        f"{num(result.itl_ms.p50, 2)}/{num(result.itl_ms.p99, 2)}",
        num(result.tpot_ms.p50, 2),
        accept,
        "; ".join(notes),
    )


def imported_row(record) -> tuple[str, ...]:
    """One results-table row for a :class:`~specdash.bench.imported.record.ImportedRecord` (same columns as
    :func:`run_row`; what the text does not state is ``-``; recomputed figures replace pasted ones that disagree)."""
    def value(key: str) -> float | None:
        return record.value(key)

    completed, errors = value("completed"), value("errors")
    ok = f"{'-' if completed is None else int(completed)}/{'-' if errors is None else int(errors)}"
    accept = value("accept_length")
    notes = [f"imported: {record.tool}, line {record.line}", record.depth_text()]
    if record.findings:
        notes.append(f"{len(record.findings)} finding{'s' if len(record.findings) != 1 else ''}")
    return (
        "-",
        record.label or "-",
        "-",
        ok,
        num(value("output_tokens_per_s") if value("output_tokens_per_s") is not None
            else value("speed_tokens_per_s")),
        num(value("requests_per_s"), 2),
        f"{num(value('ttft_ms.p50'))}/{num(value('ttft_ms.p99'))}",
        f"{num(value('itl_ms.p50'), 2)}/{num(value('itl_ms.p99'), 2)}",
        num(value("tpot_ms.p50") if value("tpot_ms.p50") is not None else value("tpot_ms.mean"), 2),
        "-" if accept is None else f"{accept:.2f} (imported)",
        "; ".join(notes),
    )


def progress_line(progress: BenchProgress) -> str:
    """Live figures of a running benchmark, one line."""
    ttft = "-" if progress.ttft_p50_ms is None else f"{progress.ttft_p50_ms:.1f} ms"
    return (
        f"{progress.phase}: {progress.done}/{progress.total} requests · {progress.errors} failed · "
        f"{progress.output_tokens} tokens · {progress.output_tokens_per_s:.1f} output tokens/s · TTFT p50 {ttft} · "
        f"{progress.elapsed_s:.1f} s"
    )


def sweep_row(row: SweepRow) -> tuple[str, ...]:
    """One sweep-table row (see :data:`SWEEP_COLUMNS`); the status cell is the status word alone ("ok",
    "unstable", "failed") so that a long note never pushes the figures off screen: :func:`sweep_notes` says it."""
    shape = (
        "no speculation"
        if row.depth == 0
        else f"{num(row.speculative_num_steps, 0) if row.speculative_num_steps is not None else '?'}/"
        f"{row.speculative_eagle_topk if row.speculative_eagle_topk is not None else '?'}/{row.depth}"
    )
    return (
        row.name,
        shape,
        num(row.output_tokens_per_s),
        "-" if row.spread_pct is None else f"±{row.spread_pct / 2:.1f} %",
        "-" if row.speedup is None else f"{row.speedup:.2f}x",
        num(row.accept_length, 2),
        num(row.alpha, 2),
        num(row.predicted_accept_length, 2),
        num(row.ttft_p50_ms),
        num(row.itl_p50_ms, 2),
        row.status,
    )


def sweep_notes(rows: list[SweepRow]) -> list[str]:
    """One line per row that has a note, shown under the sweep table: ``"chain-16: unstable: repeats differ by
    20.3 %; measured again (the earlier repeats 2521 / 1851 / 2656 were unstable)"`` (the status word once)."""
    return [f"{row.name}: {row.note if row.note.startswith(row.status) else f'{row.status}: {row.note}'}"
            for row in rows if row.note]
