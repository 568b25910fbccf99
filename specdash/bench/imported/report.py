"""Text a user reads for imported benchmark results: one block per result, its records, findings and ranking."""

from __future__ import annotations

from collections.abc import Sequence

from specdash.bench.difference import SINGLE_RUN_FLOOR_PCT, rank_label
from specdash.bench.imported.record import CONFIG_KEYS, ImportedRecord

#: (key, label, unit) of the figures shown per record, in this order
SHOWN: tuple[tuple[str, str, str], ...] = (
    ("output_tokens_per_s", "output throughput", "tok/s"),
    ("speed_tokens_per_s", "speed", "token/s"),
    ("requests_per_s", "request throughput", "req/s"),
    ("tpot_ms.mean", "TPOT mean", "ms"),
    ("tpot_ms.p50", "TPOT median", "ms"),
    ("itl_ms.mean", "ITL mean", "ms"),
    ("itl_ms.p50", "ITL median", "ms"),
    ("ttft_ms.mean", "TTFT mean", "ms"),
    ("ttft_ms.p50", "TTFT median", "ms"),
    ("ttft_ms.p99", "TTFT p99", "ms"),
    ("e2e_ms.mean", "E2E mean", "ms"),
    ("step_time_ms", "step time", "ms"),
    ("accept_length", "accept length", ""),
    ("accept_rate_pct", "accept rate", "%"),
    ("speedup", "speedup", "x"),
    ("completed", "completed", "requests"),
    ("errors", "failed", "requests"),
    ("duration_s", "duration", "s"),
    ("total_output_tokens", "output tokens", ""),
    ("total_output_tokens_retokenized", "retokenized", "tokens"),
)
_CONFIG_NAMES = {"speculative_algorithm": "algorithm", "speculative_num_steps": "steps",
                 "speculative_eagle_topk": "topk", "speculative_num_draft_tokens": "draft tokens",
                 "cuda_graph": "CUDA graph", "attention_backend": "attention backend",
                 "concurrency": "concurrency"}
_MARKS = {"error": "E", "warning": "W", "info": "i"}


def number(value: float | None, unit: str = "") -> str:
    """``142.1 tok/s``-style text; ``unknown`` for None."""
    if value is None:
        return "unknown"
    if unit == "x":
        return f"{value:.2f}x"
    text = f"{int(value)}" if value == int(value) and abs(value) < 1e15 else f"{value:.2f}"
    return f"{text} {unit}".rstrip()


def pasted(record: ImportedRecord, key: str, unit: str) -> str:
    """The pasted value of ``key`` as the text wrote it (when plain), with its unit."""
    raw = record.raw.get(key)
    if raw is None or not _plain(raw):
        return number(record.metrics[key], unit)
    return raw + "x" if unit == "x" else f"{raw} {unit}".rstrip()


def _plain(raw: str) -> bool:
    """A plain decimal with at most 3 decimals: shown as pasted (else formatted with 2 decimals)."""
    return (bool(raw) and all(c.isdigit() or c == "." for c in raw) and raw.count(".") <= 1 and len(raw) < 20
            and len(raw.partition(".")[2]) <= 3)


def config_text(record: ImportedRecord) -> str:
    """Every configuration key with its value or ``unknown`` (never guessed)."""
    parts = []
    for key in CONFIG_KEYS:
        if key == "speculative_algorithm" and record.baseline:
            parts.append("algorithm none (baseline)")
            continue
        value = record.config.get(key)
        shown = "unknown" if value is None else ("on" if value is True else "off" if value is False else value)
        parts.append(f"{_CONFIG_NAMES[key]} {shown}")
    parts.extend(f"{key.replace('_', ' ')} {value}" for key, value in record.config.items()
                 if key not in CONFIG_KEYS and value is not None)
    return ", ".join(parts)


def record_lines(record: ImportedRecord, indent: str = "  ") -> list[str]:
    """A record: title line, configuration line, figures (pasted, and recomputed ones marked), findings."""
    out = [f"{indent}line {record.line}: {record.title()}"]
    out.append(f"{indent}  config: {config_text(record)}")
    figures = []
    for key, label, unit in SHOWN:
        if key in record.metrics:
            shown = pasted(record, key, unit)
            if key in record.derived:
                shown += f" (recomputed {number(record.derived[key], unit)})"
            figures.append(f"{label} {shown}")
        elif key in record.derived:
            figures.append(f"{label} {number(record.derived[key], unit)} (recomputed)")
    out.append(f"{indent}  " + ("; ".join(figures) if figures else "no figures"))
    for f in record.findings:
        out.append(f"{indent}  [{_MARKS.get(f.severity, '?')}] {f.message}")
    return out


def result_text(result) -> str:
    """An :class:`~specdash.bench.imported.ImportedResult` as the user reads it."""
    out = [f"lines {result.first_line}-{result.last_line}: {result.tool} output, {len(result.records)} "
           f"result{'s' if len(result.records) != 1 else ''}"]
    for record in result.records:
        out.extend(record_lines(record))
    out.extend(ranking_lines(result.ranking()))
    return "\n".join(out)


def ranking_lines(groups: Sequence[dict]) -> list[str]:
    """The depth ranking per concurrency (best first), with the accept-length note when there is one."""
    out: list[str] = []
    for group in groups:
        if len(group["order"]) < 2:
            continue
        where = "" if group["concurrency"] is None else f" at concurrency {group['concurrency']}"
        out.append(f"  ranking{where} by {group['basis_text']}:")
        ranks = group.get("ranks") or list(range(1, len(group["order"]) + 1))
        for n, record in zip(ranks, group["order"], strict=False):
            key = group["basis"]
            unit = next((u for k, _, u in SHOWN if k == key), "")
            value = (pasted(record, key, unit) if key in record.metrics and key not in record.derived
                     else number(record.value(key), unit) + " (recomputed)")
            label = rank_label(n, ranks)
            out.append(f"    {label if label.endswith('=') else label + '.'} {record.title()}: {value}")
        if len(set(ranks)) < len(ranks):
            out.append(f"    n= : within noise of each other (one run each: differences under "
                       f"{SINGLE_RUN_FLOOR_PCT:g} % cannot be told apart), so they share a rank")
        if group["unranked"]:
            out.append("    not ranked (figure unknown): " + "; ".join(r.title() for r in group["unranked"]))
        if group["note"]:
            out.append(f"    note: {group['note']}")
    return out
