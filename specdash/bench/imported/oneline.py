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
SPEED = re.compile(r"(?i)\b(speed|throughput|output throughput|decode throughput)\s*:\s*" + _NUM
                   + r"\s*(?:token|tok|tokens)/s\b")
ACCEPT = re.compile(r"(?i)\b(accept(?:ance)? length|acc_length|avg accept length|mean accept length)\s*[:=]\s*"
                    + _NUM + r"(?=\s*(?:,|$))")
QUESTIONS = re.compile(r"#questions:\s*(\d+),")
TOOL = "one-line report"


_SPEED_HINT = re.compile(r"(?:speed|throughput)\s*:")
#: a server's own log line (SGLang ``[2025-01-01 10:00:00 TP0] ...``, vLLM ``(APIServer pid=8998) INFO 08-06
#: 09:48:40 [metrics.py:100] SpecDecoding metrics: Mean acceptance length: 2.67, ...``): log content for the log
#: reader, never a benchmark report
_SERVER_LOG_LINE = re.compile(r"^\s*(?:\(\w+ pid=\d+\)\s*)?(?:\[\d{4}-\d{2}-\d{2}[ T]\d|"
                              r"(?:INFO|WARNING|DEBUG|ERROR)\s+\d{2}-\d{2} \d{2}:\d{2}:\d{2})")


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
    record."""
    found: list[tuple[int, int, list[ImportedRecord]]] = []
    record: ImportedRecord | None = None
    first = last = 0
    for index, text in enumerate(lines):
        if len(text) > 400 or ("/s" not in text and "ength" not in text) or _SERVER_LOG_LINE.match(text):
            values = {}
        else:
            values = _read(text, index >= complete)
        if not values:
            if text.strip() and record is not None:
                found.append((first, last, [record]))
                record = None
            continue
        if record is not None and set(values) & set(record.metrics):
            found.append((first, last, [record]))
            record = None
        if record is None:
            record = ImportedRecord(tool=TOOL, line=index + 1)
            first = index + 1
        for key, raw in values.items():
            record.metrics[key] = float(raw)
            record.raw[key] = raw
        if "#questions" in text:
            record.tool = "sglang mtbench"
        last = index + 1
    if record is not None:
        found.append((first, last, [record]))
    return found
