"""One-line reports: ``speed: 56.8 token/s``, ``accept length: 1.6``, and SGLang's MT-Bench line
``#questions: 80, Throughput: 378.57 token/s, Acceptance length: 5.39`` (``benchmark/mtbench/bench_sglang_eagle.py``:
throughput = completion tokens / wall time, accept length = completion tokens / verify steps).

Consecutive such lines (blank lines between allowed) make one record. A value is read only with its unit for
speeds (``token/s``, ``tok/s``, ``tokens/s``); an accept length on the last line of a text without its newline may
be cut (``1.6`` of ``1.65``) and is not read.
"""

from __future__ import annotations

import re

from specdash.bench.imported.record import ImportedRecord

_NUM = r"(\d+(?:\.\d+)?)"
SPEED = re.compile(r"(?i)(?:^|[,;|]\s*|#\s*)(speed|throughput|output throughput|decode throughput)\s*:\s*" + _NUM
                   + r"\s*(?:token|tok|tokens)/s\b")
ACCEPT = re.compile(r"(?i)\b(accept(?:ance)? length|acc_length|avg accept length|mean accept length)\s*[:=]\s*"
                    + _NUM + r"(?=\s*(?:,|$))")
QUESTIONS = re.compile(r"#questions:\s*(\d+),")
TOOL = "one-line report"


#: lines of SGLang ``bench_one_batch_server`` (``python/sglang/bench_one_batch_server.py``, ``run_one_case``)
#: between its ``batch size:`` line and its ``output throughput: ... tok/s`` / ``acc_length:`` lines; only those two
#: are read (``input throughput`` is prefill, ``last generation throughput`` the server's last logged interval)
ONE_BATCH = re.compile(r"(?i)^\s*(batch size|input_len|output_len|latency|ttft|last_ttft|input throughput|"
                       r"last generation throughput|first-token spread|cache hit rate|spec_accept_rate|"
                       r"(?:client-observed |steady )?decode-only throughput):\s*(.*)$")
ONE_BATCH_TOOL = "sglang bench_one_batch_server"
_SPEED_HINT = re.compile(r"(?:speed|throughput)\s*:")
#: a server's log line (vLLM ``INFO 08-12 16:25:00 [loggers.py:123] ...``, also behind ``(APIServer pid=8998)``;
#: SGLang ``[2025-08-12 16:25:00 TP0] ...``):
#: its throughput and accept length are the server's figures for one logging interval, not a benchmark's result
_LOG_LINE = re.compile(r"^\s*(?:(?:\([^)]{1,80}\)\s*)?(?:INFO|WARNING|DEBUG|ERROR)\s+\d\d-\d\d \d\d:\d\d:\d\d|"
                       r"\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d)")


def _read(text: str, cut: bool) -> dict[str, str]:
    found: dict[str, str] = {}
    low = text.lower()
    if _SPEED_HINT.search(low) and (match := SPEED.search(text)):
        found["output_tokens_per_s"] = match.group(2)
    if "length" in low and (match := ACCEPT.search(text)) and not (cut and match.end() >= len(text.rstrip())):
        found["accept_length"] = match.group(2)
    if found and (match := QUESTIONS.search(text)):
        found["completed"] = match.group(1)
    return found


def parse(lines: list[str], complete: int) -> list[tuple[int, int, list[ImportedRecord]]]:
    """Runs of one-line reports as ``(first, last, [record])`` (1-based, inclusive); a repeated key starts a new
    record. The other lines of a ``bench_one_batch_server`` case (:data:`ONE_BATCH`) keep its record open and its
    ``batch size:`` line, which opens each case, gives the record's concurrency."""
    found: list[tuple[int, int, list[ImportedRecord]]] = []
    record: ImportedRecord | None = None
    first = last = 0
    batch: tuple[int, int] | None = None  # (0-based line, batch size) of the case being read
    for index, text in enumerate(lines):
        if len(text) > 400 or ("/s" not in text and "ength" not in text) or _LOG_LINE.match(text):
            values = {}
        else:
            values = _read(text, index >= complete)
        if not values:
            case = ONE_BATCH.match(text)
            if case and case.group(1).lower() == "batch size":
                if record is not None:
                    found.append((first, last, [record]))
                    record = None
                size = case.group(2).strip()
                batch = (index, int(size)) if size.isdigit() and index < complete else None
                continue
            if case:
                continue
            if text.strip():
                batch = None
                if record is not None:
                    found.append((first, last, [record]))
                    record = None
            continue
        if record is not None and set(values) & set(record.metrics):
            found.append((first, last, [record]))
            record = None
        if record is None:
            record = ImportedRecord(tool=TOOL, line=index + 1)
            first = index + 1
            if batch is not None:
                record.tool, record.line, first = ONE_BATCH_TOOL, batch[0] + 1, batch[0] + 1
                record.config["concurrency"] = record.settings["batch_size"] = batch[1]
        for key, raw in values.items():
            record.metrics[key] = float(raw)
            record.raw[key] = raw
        if "#questions" in text:
            record.tool = "sglang mtbench"
        last = index + 1
    if record is not None:
        found.append((first, last, [record]))
    return found
