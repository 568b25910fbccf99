"""The log parser, line kind by line kind, era by era, on the real-format fixture lines
(tests/data/sglang-log-formats.txt: SGLang's log line shapes from 0.4.x to 2026 releases)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from specdash.logs.parser import LineKind, LogParser, severity_of
from specdash.logs.records import DecodeRecord, PrefillRecord

DATA = Path(__file__).parent / "data" / "logs"


def fixture_groups() -> dict[int, list[str]]:
    """Log lines of each '==== Group N' section of the format fixtures (annotation lines removed)."""
    groups: dict[int, list[str]] = {}
    current = 0
    for line in (DATA.parent / "sglang-log-formats.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("# ==== Group "):
            current = int(line.split("Group ")[1].split(":")[0])
            groups[current] = []
        elif line.startswith("#") or not current:
            continue
        else:
            groups[current].append(line)
    return groups


GROUPS = fixture_groups()


def parse(lines: list[str]):
    return LogParser(default_year=2025).feed_many(lines)


def find(parsed, needle: str):
    return next(p for p in parsed if needle in p.text)


def test_fixture_file_has_all_six_eras():
    assert sorted(GROUPS) == [1, 2, 3, 4, 5, 6]


def test_group1_v044_prefix_ranks_startup_and_spec_decode():
    parsed = parse(GROUPS[1])
    args = parsed[0]
    assert args.kind is LineKind.server_args
    assert args.timestamp == datetime(2025, 4, 2, 9, 14, 21)
    assert args.info["speculative_algorithm"] == "EAGLE3"
    assert args.info["speculative_num_steps"] == 5 and args.info["speculative_eagle_topk"] == 8
    assert args.info["speculative_num_draft_tokens"] == 32 and args.info["tp_size"] == 2

    begin = find(parsed, "TP1] Load weight begin")
    assert begin.kind is LineKind.weights_begin and begin.ranks == "TP1" and begin.info["avail_mem_gb"] == 78.49
    draft = find(parsed, "LlamaForCausalLMEagle3")
    assert draft.kind is LineKind.weights_end and draft.info["arch"] == "LlamaForCausalLMEagle3"
    assert draft.info["mem_usage_gb"] == 0.84
    kv = find(parsed, "KV Cache is allocated")
    assert kv.kind is LineKind.kv_cache and kv.info == {"tokens": 412883, "k_size_gb": 12.6, "v_size_gb": 12.6}
    assert find(parsed, "Capture cuda graph begin").kind is LineKind.graph_begin
    bare_bar = find(parsed, "23/23")
    assert bare_bar.kind is LineKind.graph_progress  # a bare tqdm bar during capture is capture progress
    assert (bare_bar.info["done"], bare_bar.info["total"]) == (23, 23)
    end = find(parsed, "Capture cuda graph end")
    assert end.kind is LineKind.graph_end and end.info["elapsed_s"] == 9.63 and end.info["which"] == "target"
    assert end.info["mem_usage_gb"] == 0.78 and end.info["avail_mem_gb"] == 22.62
    assert find(parsed, "max_total_num_tokens=").info["max_running_requests"] == 48
    assert find(parsed, "Uvicorn running").kind is LineKind.http
    assert find(parsed, "fired up").kind is LineKind.ready
    prefill = find(parsed, "Prefill batch")
    assert prefill.kind is LineKind.prefill
    assert prefill.record == PrefillRecord(1, 7, 0, 0.0, 0, 0, None, None)
    decode = find(parsed, "#running-req: 48")
    assert decode.kind is LineKind.decode and decode.ranks == "TP0"
    rec = decode.record
    assert isinstance(rec, DecodeRecord)
    assert (rec.running_reqs, rec.num_tokens, rec.token_usage, rec.accept_len, rec.gen_throughput_tok_s,
            rec.queued_reqs) == (48, 30552, 0.07, 3.21, 3120.77, 17)
    assert rec.accept_rate is None and rec.cuda_graph is None  # not printed in this era


def test_group2_v050_bare_override_warnings_no_rank_prefix_and_cuda_graph_field():
    parsed = parse(GROUPS[2])
    overrides = [p for p in parsed if p.kind is LineKind.override]
    assert [p.text for p in overrides] == GROUPS[2][:3]
    assert all(p.timestamp is None for p in overrides)
    adjusted = overrides[2]
    assert "speculative_num_draft_tokens is adjusted" in adjusted.text and severity_of(adjusted.kind) == "warning"
    weights = [p for p in parsed if p.kind is LineKind.weights_begin]
    assert len(weights) == 2 and all(p.ranks == "" for p in weights)  # single GPU: no rank prefix
    sizes = find(parsed, "Capture cuda graph bs")
    assert sizes.info["batch_sizes"] == 10
    progress = find(parsed, "Capturing batches")
    assert progress.kind is LineKind.graph_progress
    assert progress.info["bs"] == 1 and progress.info["total"] == 10 and progress.info["avail_mem_gb"] == 14.41
    end = find(parsed, "Capture cuda graph end")
    assert end.info["elapsed_s"] == 6.81 and end.info["mem_usage_gb"] == 0.39 and end.info["avail_mem_gb"] == 14.38
    eager = find(parsed, "cuda graph: False")
    assert eager.record.cuda_graph is False and eager.record.accept_len == 2.39
    zero = find(parsed, "accept len: 1.00")
    assert zero.record.accept_len == 1.0 and zero.record.cuda_graph is True


def test_group3_v053_verbatim_decode_lines_with_accept_rate():
    parsed = parse(GROUPS[3])
    decodes = [p.record for p in parsed if p.kind is LineKind.decode]
    assert [r.accept_len for r in decodes] == [2.17, 1.95, 1.80, 2.05]
    assert [r.accept_rate for r in decodes] == [0.54, 0.49, 0.45, 0.51]
    assert [r.gen_throughput_tok_s for r in decodes] == [0.39, 178.86, 165.41, 188.68]
    assert all(r.cuda_graph is True and r.running_reqs == 1 for r in decodes)


def test_group4_late_2025_comma_forms_iteration_counter_and_input_throughput():
    parsed = parse(GROUPS[4])
    assert [p.kind for p in parsed[:2]] == [LineKind.override, LineKind.override]
    prefill = find(parsed, "Prefill batch,")
    assert prefill.record == PrefillRecord(4, 2048, 512, 0.01, 12, 0, 9871.33, False)
    iter_line = find(parsed, "Decode batch [18240]")
    assert iter_line.kind is LineKind.decode
    rec = iter_line.record
    assert rec.iteration == 18240 and rec.accept_len == 1.41 and rec.accept_rate == 0.35 and rec.queued_reqs == 41
    first = find(parsed, "#running-req: 16")
    assert first.record.accept_rate == 0.78 and first.record.gen_throughput_tok_s == 1873.40


def test_group5_2026_capture_lines_target_and_draft_stages_timings():
    parsed = parse(GROUPS[5])
    assert find(parsed, "SGLANG_ENABLE_SPEC_V2 has been removed").kind is LineKind.warning
    assert find(parsed, "adjusted to speculative_num_steps + 1").kind is LineKind.override
    begin = find(parsed, "Capture target verify CUDA graph begin")
    assert begin.kind is LineKind.graph_begin and begin.info["which"] == "target" and begin.info["stage"] == "verify"
    assert begin.info["batch_sizes"] == 6
    draft_end = find(parsed, "Capture draft extend CUDA graph end")
    assert draft_end.kind is LineKind.graph_end and draft_end.info["which"] == "draft"
    assert draft_end.info["elapsed_s"] == 0.74
    assert find(parsed, "TP1] Capture target decode").info["elapsed_s"] == 4.81
    timings = find(parsed, "Engine startup timings")
    assert timings.kind is LineKind.timings and timings.info["load_weight"] == 41.22
    assert timings.info["draft_decode"] == 1.56
    assert find(parsed, "set to 12 by default").kind is LineKind.override
    assert find(parsed, "DeepSeek MTP does not require").kind is LineKind.override


def test_group6_launch_failures_argparse_traceback_grouping_and_oom():
    parsed = parse(GROUPS[6])
    assert find(parsed, "usage: launch_server.py").kind is LineKind.plain
    unrecognized = find(parsed, "unrecognized arguments")
    assert unrecognized.kind is LineKind.error and unrecognized.info["exception"] == "argparse"

    header = find(parsed, "Traceback (most recent call last)")
    assert header.kind is LineKind.traceback and header.group == header.number
    assertion = next(p for p in parsed if p.text == "AssertionError")
    assert assertion.kind is LineKind.error and assertion.group == header.number
    frames = [p for p in parsed if header.number < p.number < assertion.number]
    assert len(frames) == 13 and all(p.kind is LineKind.traceback and p.group == header.number for p in frames)

    # 6e starts mid-traceback (a "File" line without header): a new group, closed by the TypeError
    type_error = find(parsed, "TypeError: '>' not supported")
    assert type_error.kind is LineKind.error and type_error.group not in (0, header.number)
    assert parsed[type_error.number - 3].kind is LineKind.traceback

    for needle in ("Unknown speculative algorithm name", "Pipeline parallelism is not compatible",
                   "trtllm_mha backend only supports", "HybridAttentionBackend"):
        line = find(parsed, needle)
        assert line.kind is LineKind.error and severity_of(line.kind) == "error", needle
    assert find(parsed, "Not enough memory").kind is LineKind.oom

    scheduler = find(parsed, "Scheduler hit an exception")
    assert scheduler.kind is LineKind.error and scheduler.group == scheduler.number and scheduler.ranks == "TP0"
    oom = find(parsed, "torch.OutOfMemoryError")
    assert oom.kind is LineKind.oom and oom.group == scheduler.number
    assert find(parsed, "Received sigquit").kind is LineKind.error
    assert find(parsed, "Initialization failed. warmup error").kind is LineKind.error


def test_chained_exception_stays_in_one_group():
    lines = [
        "Traceback (most recent call last):",
        '  File "a.py", line 1, in f',
        "KeyError: 'x'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "b.py", line 2, in g',
        "ValueError: boom",
        "[2025-01-01 00:00:00] next line",
    ]
    parsed = parse(lines)
    assert {p.group for p in parsed[:9]} == {1}
    assert parsed[2].kind is LineKind.error and parsed[8].kind is LineKind.error
    assert parsed[9].kind is LineKind.plain and parsed[9].group == 0


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("[2025-03-01 10:00:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 2, #new_token_ratio: 0.9998 -> 1.0000", LineKind.retract),
        ("[2024-09-01 10:00:00 TP0] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.7000 -> 1.0000", LineKind.retract),
        ("[2026-03-21 03:31:56] INFO server_args.py:2233: Attention backend not specified. Use fa3 backend by default.", LineKind.override),
        ("[2026-03-21 03:31:56] WARNING engine.py:99: something odd happened", LineKind.warning),
        ("[2026-03-21 03:31:56] ERROR scheduler.py:12: something broke", LineKind.error),
        ("[gpu_id=0] Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail mem=60.9 GB.", LineKind.weights_end),
        ("[2025-09-05 20:50:29 TP6] Capture draft cuda graph end. Time elapsed: 62.67 s. mem usage=0.21 GB. avail mem=15.31 GB.", LineKind.graph_end),
        ("Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01,  1.20s/it]", LineKind.progress),
        ('[2025-04-02 09:14:55] INFO:     127.0.0.1:40312 - "POST /generate HTTP/1.1" 500 Internal Server Error', LineKind.warning),
        ("/usr/lib/python3/site-packages/torch/cuda/__init__.py:12: UserWarning: CUDA initialization failed", LineKind.warning),
        ("[2025-04-02 09:14:55] Cache flushed successfully!", LineKind.plain),
    ],
)
def test_other_line_kinds(line, kind):
    assert LogParser().feed(line).kind is kind


def test_dp_tp_ep_ranks_and_timestamps():
    p = LogParser().feed("[2026-07-22 15:49:08 DP1 TP1 EP1] Decode batch, #running-req: 3, #token: 10, token usage: 0.00, "
                         "cuda graph: True, gen throughput (token/s): 5.00, #queue-req: 0")
    assert p.ranks == "DP1 TP1 EP1" and p.timestamp == datetime(2026, 7, 22, 15, 49, 8)
    assert p.record.accept_len is None and p.record.running_reqs == 3
    assert p.message.startswith("Decode batch")


def test_vllm_spec_decoding_metrics_line_is_a_decode_sample():
    line = ("(APIServer pid=6485) INFO 08-05 20:20:43 [metrics.py:100] SpecDecoding metrics: Mean acceptance length: "
            "1.00, Accepted throughput: 0.00 tokens/s, Drafted throughput: 1.23 tokens/s, Accepted: 0 tokens, Drafted: "
            "495 tokens, Per-position acceptance rate: 0.000, 0.000, 0.000, 0.000, 0.000, Avg Draft acceptance rate: 0.0%")
    p = LogParser(default_year=2025).feed(line)
    assert p.kind is LineKind.decode and p.ranks == "APIServer pid=6485"
    assert p.timestamp == datetime(2025, 8, 5, 20, 20, 43)
    rec = p.record
    assert (rec.engine, rec.accept_len, rec.accepted_tokens, rec.drafted_tokens, rec.accept_rate) == ("vllm", 1.0, 0, 495, 0.0)
    assert rec.per_position_rate == (0.0, 0.0, 0.0, 0.0, 0.0)


def test_line_numbers_count_every_fed_line():
    parser = LogParser()
    parsed = parser.feed_many(["a", "b"]) + [parser.feed("c")]
    assert [p.number for p in parsed] == [1, 2, 3] and parser.lines_seen == 3


def test_severity_of_each_kind():
    assert severity_of(LineKind.override) == "warning"
    assert severity_of(LineKind.warning) == "warning"
    assert severity_of(LineKind.error) == "error"
    assert severity_of(LineKind.traceback) == "error"
    assert severity_of(LineKind.oom) == "error"
    assert severity_of(LineKind.ready) == "success"
    assert severity_of(LineKind.decode) is None and severity_of(LineKind.plain) is None


def test_batch_short_path_gives_the_same_result_as_line_by_line():
    lines = [line for n in sorted(GROUPS) for line in GROUPS[n]]
    one = LogParser(default_year=2025)
    singles = [one.feed(line) for line in lines]
    batch = LogParser(default_year=2025).feed_many(lines)
    fields = ("number", "raw", "text", "kind", "timestamp", "ranks", "message", "level", "group", "info",
              "truncated", "record")
    for a, b in zip(singles, batch, strict=False):
        assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields], a.text
