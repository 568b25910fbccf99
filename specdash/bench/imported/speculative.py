"""SGLang ``bench_speculative`` output: one configuration per ``Finish`` line or JSON line.

``scripts/playground/bench_speculative.py`` (SGLang, 2025) relaunches the server for each ``(batch_size, steps,
topk, num_draft_tokens)`` with ``--cuda-graph-max-bs <batch_size>`` and prints
``Finish i=3: batch_size=1, steps=3, topk=1, num_draft_tokens=4, speed=201.52 token/s, step_time=12.41 ms``
(``speed`` = accept length / step time: decode tokens per second of one request; ``step_time`` = 20th percentile
of the server's step times, in ms), and appends a JSON line ``{"batch_size", "steps", "topk",
"num_draft_tokens", "acc_length", "step_time" (seconds), "speed", "completion_tokens"}`` to its output file.
``steps=0, topk=0, num_draft_tokens=0`` is the run without speculative decoding. A ``Start i=...`` line without
its ``Finish`` is a configuration that did not finish.
"""

from __future__ import annotations

import decimal
import json
import re

from specdash.bench.imported.record import Finding, ImportedRecord

FINISH = re.compile(
    r"Finish i=(\d+): batch_size=(\d+), steps=(\d+), topk=(\d+), num_draft_tokens=(\d+), "
    r"speed=(\d+\.\d\d) token/s, step_time=(\d+\.\d\d) ms")
START = re.compile(r"Start i=(\d+): batch_size=(\d+), steps=(\d+), topk=(\d+), num_draft_tokens=(\d+)\s*$")
_JSON_KEYS = ("batch_size", "steps", "topk", "num_draft_tokens", "acc_length", "step_time", "speed")
TOOL = "sglang bench_speculative"


def _config(record: ImportedRecord, batch: int, steps: int, topk: int, ndt: int) -> None:
    record.config["concurrency"] = batch
    record.settings["batch_size"] = batch
    if steps == topk == ndt == 0:
        record.baseline = True
        record.config.update(speculative_num_steps=0, speculative_eagle_topk=0, speculative_num_draft_tokens=0,
                             cuda_graph=True)
        return
    record.config.update(speculative_algorithm="EAGLE", speculative_num_steps=steps, speculative_eagle_topk=topk,
                         speculative_num_draft_tokens=ndt, cuda_graph=True)


def _from_json(text: str, number: int) -> ImportedRecord | None:
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}") and '"steps"' in stripped):
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not all(k in data for k in ("batch_size", "steps", "topk", "num_draft_tokens")):
        return None
    ints = [data[k] for k in ("batch_size", "steps", "topk", "num_draft_tokens")]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in ints):
        return None
    record = ImportedRecord(tool=TOOL, line=number)
    _config(record, *ints)
    for key, target, scale in (("acc_length", "accept_length", 1.0), ("step_time", "step_time_ms", 1000.0),
                               ("speed", "speed_tokens_per_s", 1.0),
                               ("completion_tokens", "avg_completion_tokens", 1.0)):
        value = data.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and abs(value) < 1e300:
            record.metrics[target] = float(value) * scale
            # the value as written, in the record's unit (its last digit tells the rounding)
            record.raw[target] = format(decimal.Decimal(repr(value)).scaleb(3 if scale == 1000.0 else 0), "f")
    return record


def parse(lines: list[str], complete: int) -> list[tuple[int, int, list[ImportedRecord]]]:
    """Runs of ``Finish``/``Start``/JSON lines (blank lines between allowed) as one result each: ``(first, last,
    records)``, 1-based inclusive. Lines at index >= ``complete`` may be cut and are read only if they match whole."""
    found: list[tuple[int, int, list[ImportedRecord]]] = []
    current: list[ImportedRecord] = []
    started: dict[str, int] = {}
    first = last = -1

    # the last Finish line of each configuration: bench_speculative prints the server's log and two bench_serving
    # result blocks between a Start line and its Finish, so a Start is unfinished only when no Finish follows it
    finished: dict[str, int] = {}
    for index, text in enumerate(lines):
        if len(text) <= 2000 and " i=" in text and (match := FINISH.search(text)):
            finished[match.group(1)] = index

    def close() -> None:
        nonlocal current, first, started
        if first >= 0:
            for key, line in started.items():
                if finished.get(key, -1) < line:
                    current.append(_unfinished(lines[line], line))
            if current:
                found.append((first + 1, last + 1, current))
        current, first, started = [], -1, {}

    for index, text in enumerate(lines):
        record = None
        short = len(text) <= 2000 and " i=" in text
        if short and (match := FINISH.search(text)) and (index < complete or text.rstrip().endswith(" ms")):
            i, batch, steps, topk, ndt = (int(g) for g in match.groups()[:5])
            started.pop(match.group(1), None)
            record = ImportedRecord(tool=TOOL, line=index + 1)
            _config(record, batch, steps, topk, ndt)
            record.metrics["speed_tokens_per_s"] = float(match.group(6))
            record.raw["speed_tokens_per_s"] = match.group(6)
            record.metrics["step_time_ms"] = float(match.group(7))
            record.raw["step_time_ms"] = match.group(7)
            record.settings["config_index"] = i
        elif short and (match := START.search(text)) and index < complete:
            if first < 0:
                first = index
            started[match.group(1)] = index
            last = index
            continue
        else:
            record = _from_json(text, index + 1)
        if record is not None:
            if first < 0:
                first = index
            current.append(record)
            last = index
        elif text.strip() and first >= 0:
            close()
    close()
    return found


def _unfinished(text: str, index: int) -> ImportedRecord:
    match = START.search(text)
    assert match is not None  # only Start lines are recorded in ``started``
    key = match.group(1)
    record = ImportedRecord(tool=TOOL, line=index + 1, label=f"i={key}")
    batch, steps, topk, ndt = (int(g) for g in match.groups()[1:])
    _config(record, batch, steps, topk, ndt)
    record.findings.append(Finding("warning", "config-unfinished", f"configuration i={key} started (line "
                                   f"{index + 1}) but has no Finish line: it failed or the output is cut", index + 1))
    return record
