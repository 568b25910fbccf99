"""Markdown and CSV tables of per-configuration results (steps / topk / draft tokens / accept length / TPOT /
throughput / speedup ..., in any order, units in the headers).

A table is read when its header names at least two known columns, one of them a result (throughput, TPOT, ITL,
TTFT, accept length, speedup). Header cells are matched after dropping units in brackets and case:
``Output throughput (tok/s)``, ``TPOT (ms)``, ``TPOT (s)`` (converted to ms), ``Accept rate (%)``,
``speedup``... A cell that is not a number (``N/A``, ``-``, ``OOM``) is unknown for that row. A row whose depth
is all zeros, or whose first cell says ``baseline`` / ``no spec`` / ``w/o spec`` / ``w/o EAGLE`` / ``vanilla`` /
``AR``, is the run without speculative decoding. The last row of a text without its newline is read only when it
ends with ``|`` (a markdown row) - otherwise it may be cut.
"""

from __future__ import annotations

import csv
import re

from specdash.bench.imported.record import ImportedRecord, parse_number

#: normalised header (units removed) -> (key, kind); kind: "config", "metric", "label"
COLUMNS: dict[str, tuple[str, str]] = {}
for _names, _key, _kind in (
    (("steps", "num steps", "num_steps", "speculative_num_steps", "speculative num steps", "spec steps",
      "num-steps"), "speculative_num_steps", "config"),
    (("topk", "top-k", "top k", "eagle topk", "eagle_topk", "speculative_eagle_topk", "speculative eagle topk"),
     "speculative_eagle_topk", "config"),
    (("draft tokens", "num draft tokens", "num_draft_tokens", "draft_tokens", "ndt", "speculative_num_draft_tokens",
      "speculative num draft tokens", "num-draft-tokens", "draft"), "speculative_num_draft_tokens", "config"),
    (("batch size", "batch_size", "bs", "concurrency", "max concurrency", "max_concurrency", "batch"),
     "concurrency", "config"),
    (("cuda graph", "cuda_graph", "cuda graphs", "cudagraph"), "cuda_graph", "config"),
    (("backend", "attention backend", "attention_backend", "attn backend"), "attention_backend", "config"),
    (("algorithm", "method", "speculative algorithm", "speculative_algorithm", "spec algorithm"),
     "speculative_algorithm", "config"),
    (("accept length", "acceptance length", "acc_length", "acc length", "accept_length", "accept len",
      "avg accept length", "mean accept length", "average accept length", "accepted length"),
     "accept_length", "metric"),
    (("accept rate", "acceptance rate", "accept_rate", "acc rate"), "accept_rate", "metric"),
    (("tpot", "mean tpot", "avg tpot", "time per output token"), "tpot_ms.mean", "metric"),
    (("itl", "mean itl", "inter-token latency"), "itl_ms.mean", "metric"),
    (("ttft", "mean ttft", "time to first token"), "ttft_ms.mean", "metric"),
    (("median tpot", "p50 tpot"), "tpot_ms.p50", "metric"),
    (("median itl", "p50 itl"), "itl_ms.p50", "metric"),
    (("median ttft", "p50 ttft"), "ttft_ms.p50", "metric"),
    (("throughput", "output throughput", "output token throughput", "output tok/s", "tok/s", "tokens/s",
      "token/s", "speed", "decode throughput", "gen throughput", "output_throughput"),
     "output_tokens_per_s", "metric"),
    (("speedup", "speed-up", "speed up", "speedup ratio"), "speedup", "metric"),
    (("duration", "benchmark duration", "duration_s"), "duration_s", "metric"),
    (("output tokens", "generated tokens", "total generated tokens", "total output tokens"),
     "total_output_tokens", "metric"),
    (("completed", "successful requests"), "completed", "metric"),
    (("config", "configuration", "setting", "name", "run", "setup", "mode"), "label", "label"),
):
    for _name in _names:
        COLUMNS[_name] = (_key, _kind)

#: a header names at least one of these (cheap test before a line is split as a CSV header)
_HINT = re.compile("|".join(sorted({re.escape(name.split()[0].split("_")[0]) for name in COLUMNS}, key=len,
                                   reverse=True)))
_UNIT = re.compile(r"\s*[\(\[]([^\)\]]*)[\)\]]\s*")
#: "w/o" / "without" name the run without speculative decoding only when followed by what is left out
#: ("w/o CUDA graph" is a speculative run without CUDA graphs)
_BASELINE = re.compile(r"(?i)^\s*(baseline|no[ -]?spec\w*|(?:w/o|without)\s+(?:spec\w*|sd|eagle\w*|mtp|draft\w*|"
                       r"ngram|dflash|medusa)\b.*|vanilla|ar|autoregressive|none|off)\s*$")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")



def _csv_row(line: str) -> list[str] | None:
    """The cells of one CSV line; None when the csv module refuses it (``csv.Error``: e.g. a NUL byte, which
    Python 3.10 rejects and 3.11 accepts)."""
    try:
        return next(csv.reader([line]), [])
    except csv.Error:
        return None

def _header(cell: str) -> tuple[str, str, str] | None:
    """``(key, kind, unit)`` of a header cell, or None."""
    units = " ".join(_UNIT.findall(cell)).lower()
    name = _UNIT.sub(" ", cell).strip().strip("*_`").lower()
    name = " ".join(name.replace("_", " ").split()) if name not in COLUMNS else name
    spec = COLUMNS.get(name) or COLUMNS.get(name.replace(" ", "_"))
    if spec is None:
        return None
    key, kind = spec
    unit = units
    if key == "output_tokens_per_s" and re.search(r"\breq", units):  # "Throughput (req/s)" counts requests
        key = "requests_per_s"
    if re.search(r"_ms\.(mean|p50)$", key) and re.search(r"\bs\b|sec", units) and "ms" not in units:
        unit = "s"
    if key == "accept_rate" and ("%" in cell):
        unit = "%"
    return key, kind, unit


def _cells(text: str) -> list[str]:
    body = text.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [c.strip() for c in body.split("|")]


def _cell_value(raw: str) -> tuple[float, str] | None:
    text = raw.strip().strip("*`").strip()
    text = re.sub(r"(?i)\s*(x|×|%|ms|s|tok/s|tokens/s|token/s)$", "", text)
    number = parse_number(text.replace(",", "")) if re.fullmatch(r"[\d.,eE+\-]+", text) else None
    if number is None or ("," in text and not re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", text)):
        return None
    return number, text.replace(",", "")


def _rows_to_records(header: list[str], rows: list[tuple[int, list[str]]], tool: str) -> list[ImportedRecord] | None:
    specs = [_header(c) for c in header]
    known = [s for s in specs if s]
    if len(known) < 2 or not any(s[1] == "metric" for s in known):
        return None
    records: list[ImportedRecord] = []
    for number, cells in rows:
        if len(cells) != len(header):
            continue
        record = ImportedRecord(tool=tool, line=number)
        for spec, cell in zip(specs, cells, strict=True):
            if spec is None:
                continue
            key, kind, unit = spec
            if kind == "label":
                record.label = cell.strip("*` ")[:80]
                if _BASELINE.match(record.label):
                    record.baseline = True
                continue
            if key in ("cuda_graph", "attention_backend", "speculative_algorithm"):
                text = cell.strip("*` ")
                if key == "cuda_graph":
                    low = text.lower()
                    if low in ("on", "yes", "true", "enabled", "1", "✓"):
                        record.config[key] = True
                    elif low in ("off", "no", "false", "disabled", "0", "✗"):
                        record.config[key] = False
                elif text and text not in ("-", "?", "N/A", "n/a"):
                    record.config[key] = text[:40]
                continue
            parsed = _cell_value(cell)
            if parsed is None:
                continue
            value, raw = parsed
            if kind == "config":
                if value == int(value) and value >= 0:
                    record.config[key] = int(value)
                continue
            if unit == "s":
                value *= 1000.0
                raw = f"{value:g}"
            if key == "accept_rate":
                if unit == "%" or cell.strip().endswith("%") or value > 1.0:
                    key = "accept_rate_pct"
                else:
                    key, value, raw = "accept_rate_pct", value * 100.0, f"{value * 100.0:g}"
                    record.raw["accept_rate_fraction"] = cell.strip()
            record.metrics[key] = value
            record.raw[key] = raw
        depth = [record.config.get(k) for k in ("speculative_num_steps", "speculative_eagle_topk",
                                                "speculative_num_draft_tokens")]
        if any(v is not None for v in depth) and all(v in (None, 0) for v in depth):
            record.baseline = True
        if record.metrics or record.config:
            records.append(record)
    return records or None


def parse(lines: list[str], complete: int) -> list[tuple[int, int, list[ImportedRecord]]]:
    """Markdown tables (header, ``|---|`` rule, rows) and CSV blocks (a header line with commas, then rows with the
    same number of fields) as ``(first, last, records)``, 1-based inclusive."""
    found: list[tuple[int, int, list[ImportedRecord]]] = []
    i, n = 0, len(lines)
    while i < n:
        text = lines[i]
        if len(text) > 2000:
            i += 1
            continue
        if "|" in text and i + 1 < n and _SEPARATOR.match(lines[i + 1]) and "-" in lines[i + 1]:
            header = _cells(text)
            rows: list[tuple[int, list[str]]] = []
            j = i + 2
            while j < n and "|" in lines[j] and lines[j].strip():
                if j < complete or lines[j].rstrip().endswith("|"):
                    rows.append((j + 1, _cells(lines[j])))
                j += 1
            records = _rows_to_records(header, rows, "markdown table")
            if records:
                found.append((i + 1, j, records))
                i = j
                continue
        elif (text.count(",") >= 1 and i + 1 < n and "|" not in text and ":" not in text
              and lines[i + 1].count(",") == text.count(",")
              and text.count(",") < 40 and _HINT.search(text.lower())):
            csv_header = _csv_row(text)
            if csv_header and all(len(c) <= 60 for c in csv_header) and sum(1 for c in csv_header if _header(c)) >= 2:
                rows = []
                j = i + 1
                while j < n and lines[j].strip() and lines[j].count(",") == text.count(","):
                    if j < complete:
                        row = _csv_row(lines[j])
                        if row is None:  # a line the csv module refuses (a NUL byte on Python 3.10): not a row
                            break
                        rows.append((j + 1, row))
                    j += 1
                records = _rows_to_records(csv_header, rows, "csv table")
                if records:
                    found.append((i + 1, j, records))
                    i = j
                    continue
        i += 1
    return found
