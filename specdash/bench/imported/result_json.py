"""The JSON result line that SGLang ``bench_serving`` appends to its ``--output-file`` (one object per run, JSONL)
and the JSON that vLLM ``vllm bench serve --save-result`` writes, one object per line.

Keys read (SGLang ``python/sglang/bench_serving.py`` ``benchmark()`` result dict, 2024-2026; vLLM
``vllm/benchmarks/serve.py``): ``duration``, ``completed``, ``failed``, ``total_input_tokens``,
``total_output_tokens``, ``total_output_tokens_retokenized``, ``request_throughput``, ``input_throughput``,
``output_throughput``, ``total_token_throughput``, ``concurrency``, ``accept_length``, ``mean/median/std/pNN`` of
``ttft``/``tpot``/``itl``/``e2e_latency``/``e2el`` in ms, ``max_concurrency``, ``request_rate``, ``backend``,
vLLM's ``spec_decode_acceptance_length`` / ``spec_decode_acceptance_rate`` / ``spec_decode_num_drafts`` /
``spec_decode_draft_tokens`` / ``spec_decode_accepted_tokens``. A line is one of these when it is a JSON object
holding ``output_throughput`` and ``duration`` or ``completed``; per-request lists (``--output-details``) are
ignored.
"""

from __future__ import annotations

import json
import math
import re

from specdash.bench.imported.record import ImportedRecord

_DIRECT = {
    "duration": "duration_s", "completed": "completed", "failed": "errors",
    "total_input_tokens": "total_input_tokens", "total_output_tokens": "total_output_tokens",
    "total_output_tokens_retokenized": "total_output_tokens_retokenized", "request_throughput": "requests_per_s",
    "input_throughput": "input_tokens_per_s", "output_throughput": "output_tokens_per_s",
    "total_token_throughput": "total_tokens_per_s", "concurrency": "concurrency_measured",
    "accept_length": "accept_length", "spec_decode_acceptance_length": "accept_length",
    "spec_decode_acceptance_rate": "accept_rate_pct", "spec_decode_num_drafts": "drafts",
    "spec_decode_draft_tokens": "draft_tokens", "spec_decode_accepted_tokens": "accepted_tokens",
}
_LATENCY = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?|max)_(ttft|tpot|itl|e2e_latency|e2el)_ms$")
_METRIC = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2e_latency": "e2e", "e2el": "e2e"}


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if number == number and abs(number) < 1e300 else None


def _record(data: dict, line: int) -> ImportedRecord | None:
    if "output_throughput" not in data or not ("duration" in data or "completed" in data):
        return None
    sglang = "total_output_tokens_retokenized" in data or "accept_length" in data
    vllm = any(k.startswith("spec_decode_") for k in data) or "max_output_tokens_per_s" in data
    tool = ("sglang bench_serving (JSON)" if sglang and not vllm else "vllm bench serve (JSON)" if vllm and not sglang
            else "bench_serving-style JSON")
    record = ImportedRecord(tool=tool, line=line)
    for key, value in data.items():
        target = _DIRECT.get(key)
        if target is None and (match := _LATENCY.match(key)):
            stat = match.group(1)
            stat = {"median": "p50"}.get(stat, stat).replace(".", "_")
            target = f"{_METRIC[match.group(2)]}_ms.{stat}"
        number = _number(value)
        if target is None or number is None:
            continue
        record.metrics[target] = number
        record.raw[target] = repr(value)
    for key, target in (("max_concurrency", "concurrency"),):
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            record.config[target] = value
    for key in ("backend", "dataset_name", "request_rate"):
        value = data.get(key)
        if isinstance(value, float) and not math.isfinite(value):
            # bench_serving's default rate is float("inf"), which json.dumps writes as Infinity (not JSON)
            record.settings[key] = "inf" if value > 0 else None
        elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
            record.settings[key] = value if not isinstance(value, str) else value[:80]
    return record if record.metrics else None


def parse(lines: list[str], complete: int) -> list[tuple[int, int, list[ImportedRecord]]]:
    """Each JSON result line as ``(line, line, [record])`` (1-based). A line at index >= ``complete`` is read only
    when it parses whole (a cut JSON object does not)."""
    found: list[tuple[int, int, list[ImportedRecord]]] = []
    for index, text in enumerate(lines):
        stripped = text.strip()
        if not (stripped.startswith("{") and stripped.endswith("}") and '"output_throughput"' in stripped):
            continue
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict) and (record := _record(data, index + 1)) is not None:
            found.append((index + 1, index + 1, [record]))
    return found
