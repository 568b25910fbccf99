"""The result block of SGLang ``bench_serving`` and vLLM ``vllm bench serve`` / ``benchmark_serving.py``.

Both tools print ``"{:<40} {:<10}"`` lines (label padded to 40 columns, then the value) under a header
``============ Serving Benchmark Result ============`` and section rules such as
``---------------Time to First Token----------------``, ending with 50 ``=`` (SGLang
``python/sglang/bench_serving.py`` ``benchmark()``, 2024-2026 releases; vLLM ``vllm/benchmarks/serve.py``
``benchmark()`` and the older ``benchmarks/benchmark_serving.py``). Float values are printed with ``{:<10.2f}``,
so a float written without exactly two decimals is not one of theirs (a cut-off line) and is not read; an integer
on the last line of a text without its newline may be cut and is not read either. A line of another program
inside a block that has its header (a server log printed into the same terminal) is skipped when the block goes
on after it without repeating a label (an info finding names it).

Labels by tool: SGLang prints ``Backend:``, ``Traffic request rate:``, ``Max request concurrency:``, ``Total
generated tokens (retokenized):``, ``Input token throughput (tok/s):``, ``Concurrency:``, ``Accept length:``
(only when the server reported one), ``Mean E2E Latency (ms):``; vLLM prints ``Failed requests:``, ``Maximum
request concurrency:``, ``Request rate configured (RPS):``, ``Peak output token throughput (tok/s):``, ``... E2EL
(ms):`` and a ``Speculative Decoding`` section (``Acceptance rate (%):``, ``Acceptance length:``, ``Drafts:``,
``Draft tokens:``, ``Accepted tokens:``, ``Per-position acceptance (%):``).
"""

from __future__ import annotations

import re

from specdash.bench.imported.record import Finding, ImportedRecord, parse_number

HEADER = re.compile(r"^\s*=+\s*Serving Benchmark Result\s*=+\s*$")
FOOTER = re.compile(r"^\s*={20,}\s*$")
SECTION = re.compile(r"^\s*-{3,}\s*[A-Za-z][A-Za-z0-9 .()\-]*?\s*-{3,}\s*$")
LINE = re.compile(r"^\s*([A-Za-z#][^:]{1,60}):\s+(\S.*?)\s*$")
POSITION = re.compile(r"^\s*Position \d+:\s+")
#: lines vLLM prints before the run (``print(f"Traffic request rate: {request_rate}")`` ...) and tqdm's progress bar
PRELUDE = re.compile(r"^\s*(Traffic request rate: \S+|Burstiness factor: .*|Maximum request concurrency: \S+|"
                     r".*\d+%\|.*\| *\d+/\d+ \[.*|Starting initial single prompt test run\.\.\.|"
                     r"Initial test run completed\..*|Starting main benchmark run\.\.\.)\s*$")
_PRELUDE_VALUE = re.compile(r"^\s*(Traffic request rate|Maximum request concurrency): (\S+)\s*$")

#: label -> (key, kind): kind "int", "float" (printed .2f), "text" (settings/config), "rate"
LABELS: dict[str, tuple[str, str]] = {
    "backend": ("settings.backend", "text"),
    "traffic request rate": ("settings.request_rate", "rate"),
    "request rate configured (rps)": ("settings.request_rate", "rate"),
    "max request concurrency": ("config.concurrency", "concurrency"),
    "maximum request concurrency": ("config.concurrency", "concurrency"),
    "successful requests": ("completed", "int"),
    "failed requests": ("errors", "int"),
    "benchmark duration (s)": ("duration_s", "float"),
    "total input tokens": ("total_input_tokens", "int"),
    "total input text tokens": ("total_input_text_tokens", "int"),
    "total input vision tokens": ("total_input_vision_tokens", "int"),
    "total generated tokens": ("total_output_tokens", "int"),
    "total generated tokens (retokenized)": ("total_output_tokens_retokenized", "int"),
    "request throughput (req/s)": ("requests_per_s", "float"),
    "request goodput (req/s)": ("goodput_requests_per_s", "float"),
    "input token throughput (tok/s)": ("input_tokens_per_s", "float"),
    "output token throughput (tok/s)": ("output_tokens_per_s", "float"),
    "peak output token throughput (tok/s)": ("peak_output_tokens_per_s", "float"),
    "peak concurrent requests": ("peak_concurrent_requests", "float"),
    "total token throughput (tok/s)": ("total_tokens_per_s", "float"),
    "total throughput (tok/s)": ("total_tokens_per_s", "float"),
    "concurrency": ("concurrency_measured", "float"),
    "accept length": ("accept_length", "float"),
    "acceptance length": ("accept_length", "float"),
    "acceptance rate (%)": ("accept_rate_pct", "float"),
    "drafts": ("drafts", "int"),
    "draft tokens": ("draft_tokens", "int"),
    "accepted tokens": ("accepted_tokens", "int"),
}
_LATENCY = re.compile(
    r"^(mean|median|std|max|p(\d+(?:\.\d+)?)) (ttft|tpot|itl|e2el|e2e latency) \(ms\)$")
_METRIC_NAMES = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e", "e2e latency": "e2e"}
_STAT_NAMES = {"mean": "mean", "median": "p50", "std": "std", "max": "max"}

#: labels only SGLang's bench_serving prints / only vLLM's prints
SGLANG_ONLY = frozenset({"backend", "total generated tokens (retokenized)", "accept length", "concurrency",
                         "max request concurrency", "input token throughput (tok/s)", "traffic request rate"})
VLLM_ONLY = frozenset({"failed requests", "maximum request concurrency", "request rate configured (rps)",
                       "peak output token throughput (tok/s)", "peak concurrent requests", "acceptance length",
                       "acceptance rate (%)", "drafts", "accepted tokens", "vllm total token throughput",
                       "vllm prelude"})
_FLOAT_2 = re.compile(r"^-?\d+\.\d\d$")
_INT = re.compile(r"^\d+$")


def _key(label: str) -> tuple[str, str] | None:
    low = " ".join(label.lower().split())
    if low in LABELS:
        return LABELS[low]
    match = _LATENCY.match(low)
    if match:
        stat = _STAT_NAMES.get(match.group(1)) or "p" + match.group(2).replace(".", "_")
        return f"{_METRIC_NAMES[match.group(3)]}_ms.{stat}", "float"
    return None


def _is_block_line(text: str) -> bool:
    if not text.strip() or SECTION.match(text) or POSITION.match(text):
        return True
    if text.strip() == "Per-position acceptance (%):":
        return True
    match = LINE.match(text)
    return bool(match and _key(match.group(1)))


def _block_goes_on(lines: list[str], k: int, seen: set[str]) -> bool:
    """True when the next non-blank line from index ``k`` (within a few lines) is a line of the result block that
    does not repeat a label of it (``seen``: the block's labels so far; a repeated one starts another run)."""
    for index in range(k, min(k + 5, len(lines))):
        text = lines[index]
        if text.strip():
            match = LINE.match(text)
            if match and " ".join(match.group(1).lower().split()) in seen:
                return False
            return bool(FOOTER.match(text) or (_is_block_line(text) and not HEADER.match(text)))
    return False


def parse(lines: list[str], complete: int) -> list[tuple[int, int, list[ImportedRecord]]]:
    """Find every result block in ``lines`` (0-based list; lines at index >= ``complete`` may be cut).

    Returns ``(first, last, [record])`` with 1-based inclusive line numbers. A block starts at the header line, or
    at three consecutive known label lines without it; it ends at the closing ``=`` rule or the first line that is
    not part of it (trailing blank lines are not claimed)."""
    found: list[tuple[int, int, list[ImportedRecord]]] = []
    i, n = 0, len(lines)
    while i < n:
        start = i
        if HEADER.match(lines[i]):
            j = i + 1
            while start > 0 and start - 1 < complete and (PRELUDE.match(lines[start - 1]) or (
                    not lines[start - 1].strip() and start - 2 >= 0 and PRELUDE.match(lines[start - 2]))):
                start -= 1
            start = next((k for k in range(start, i) if lines[k].strip()), i)
        elif sum(1 for k in range(i, min(i + 3, n)) if (m := LINE.match(lines[k])) and _key(m.group(1))) == 3:
            j = i
        else:
            i += 1
            continue
        end = start
        foreign: list[int] = []  # lines of another program printed into the block (a server log in one terminal)
        by_header = HEADER.match(lines[i]) is not None
        seen: set[str] = set()  # the block's labels so far
        while j < n:
            if FOOTER.match(lines[j]):
                end = j
                j += 1
                break
            if HEADER.match(lines[j]) or not _is_block_line(lines[j]):
                if by_header and not HEADER.match(lines[j]) and _block_goes_on(lines, j + 1, seen):
                    foreign.append(j)
                    j += 1
                    continue
                break
            if lines[j].strip():
                end = j
                if match := LINE.match(lines[j]):
                    seen.add(" ".join(match.group(1).lower().split()))
            j += 1
        foreign = [k for k in foreign if k < end]
        record = _record(lines, start, end, complete)
        if record is not None:
            if foreign:
                shown = ", ".join(str(k + 1) for k in foreign[:5]) + (" ..." if len(foreign) > 5 else "")
                record.findings.append(Finding(
                    "info", "foreign-lines", (f"lines {shown} inside the result block belong" if len(foreign) > 1 else
                                             f"line {shown} inside the result block belongs")
                    + " to another program (printed into the same terminal) and not read", record.line))
            found.append((start + 1, end + 1, [record]))
        i = max(j, start + 1)
    return found


def _record(lines: list[str], start: int, end: int, complete: int) -> ImportedRecord | None:
    record = ImportedRecord(tool="", line=start + 1)
    labels: set[str] = set()
    header = next((k for k in range(start, end + 1) if HEADER.match(lines[k])), None)
    if header is not None:
        record.line = header + 1
    for index in range(start, end + 1):
        prelude = _PRELUDE_VALUE.match(lines[index]) if header is not None and index < header else None
        if prelude:
            value = prelude.group(2)
            if prelude.group(1) == "Maximum request concurrency" and value.isdigit():
                record.config["concurrency"] = int(value)
                labels.add("vllm prelude")
            elif prelude.group(1) == "Traffic request rate":
                number = parse_number(value)
                record.settings["request_rate"] = value if number is None else number
            continue
        match = LINE.match(lines[index])
        if not match:
            continue
        label, value = match.group(1), match.group(2)
        spec = _key(label)
        if spec is None:
            continue
        labels.add(" ".join(label.lower().split()))
        if label.strip() == "Total Token throughput (tok/s)":  # capital T: vLLM's benchmark_serving.py
            labels.add("vllm total token throughput")
        key, kind = spec
        cut = index >= complete
        if kind == "float":
            if _FLOAT_2.match(value):
                record.metrics[key] = float(value)
                record.raw[key] = value
        elif kind == "int":
            if _INT.match(value) and not cut:
                record.metrics[key] = float(value)
                record.raw[key] = value
        elif kind == "concurrency":
            if value == "not set":
                record.settings["max_concurrency"] = "not set"
            elif _INT.match(value) and not cut:
                record.config["concurrency"] = int(value)
        elif kind == "rate":
            number = parse_number(value)
            if value in ("inf", "trace"):
                record.settings["request_rate"] = value
            elif number is not None and not cut:
                record.settings["request_rate"] = number
        elif kind == "text" and not cut:
            record.settings[key.split(".", 1)[1]] = value
    if not record.metrics:
        return None
    sglang = bool(labels & SGLANG_ONLY)
    vllm = bool(labels & VLLM_ONLY)
    record.tool = ("sglang bench_serving" if sglang and not vllm else "vllm bench serve" if vllm and not sglang
                   else "bench_serving-style output")
    backend = str(record.settings.get("backend", ""))
    if record.tool == "sglang bench_serving" and backend.startswith("sglang"):
        record.settings["server"] = "sglang"
    return record
