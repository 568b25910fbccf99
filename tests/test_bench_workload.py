"""Workloads: shipped presets, user files (ShareGPT JSON/JSONL, plain prompts), stream parsing, result storage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specdash.bench.protocol import SSESplitter, parse_event, request_body
from specdash.bench.workload import WorkloadError, load_file, load_preset, preset_names, resolve_workload

DATA = Path(__file__).parent / "data" / "bench"


def test_presets_ship_with_the_package():
    assert {"short-chat", "long-generation", "batch1-latency"} <= set(preset_names())
    b1 = load_preset("batch1-latency")
    assert b1.concurrency == 1 and b1.prompts and b1.ignore_eos
    long = load_preset("long-generation")
    assert long.output_len >= 1024
    with pytest.raises(WorkloadError, match="presets: "):
        load_preset("nope")


def test_sharegpt_json_jsonl_and_plain_prompt_files():
    sharegpt = load_file(DATA / "sharegpt_sample.json")
    assert sharegpt.prompts[0].startswith("What is speculative decoding")
    assert len(sharegpt.prompts) == 3  # the entry without a human turn is skipped
    jsonl = load_file(DATA / "prompts.jsonl")
    assert jsonl.prompts == ("Write a haiku about GPUs.", "Explain KV cache.", "List three prime numbers.")
    plain = load_file(DATA / "prompts.txt", output_len=64)
    assert plain.prompts == ("first prompt", "second prompt") and plain.output_len == 64
    assert resolve_workload(str(DATA / "prompts.txt")).name == "prompts.txt"


def test_bad_workload_files_give_one_line_errors(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    with pytest.raises(WorkloadError, match="no prompts found"):
        load_file(empty)
    with pytest.raises(WorkloadError, match="cannot read"):
        load_file(tmp_path / "missing.txt")
    with pytest.raises(WorkloadError, match="no preset or file"):
        resolve_workload("no-such-thing")


def test_prompt_order_is_seeded():
    w = load_preset("short-chat")
    assert w.prompt_order(20, 1) == w.prompt_order(20, 1)
    assert w.prompt_order(20, 1) != w.prompt_order(20, 2)
    assert set(w.prompt_order(len(w.prompts), 3)) == set(w.prompts)


def test_request_bodies_ask_for_per_chunk_usage():
    chat = request_body("chat", "hi", model="m", max_tokens=8, temperature=0.0, ignore_eos=True)
    assert chat["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert chat["messages"] == [{"role": "user", "content": "hi"}]
    gen = request_body("generate", "hi", model="m", max_tokens=8, temperature=0.0, ignore_eos=True)
    assert gen == {"text": "hi", "sampling_params": {"max_new_tokens": 8, "temperature": 0.0, "ignore_eos": True}, "stream": True}


def test_sse_split_across_reads_and_event_parsing():
    splitter = SSESplitter()
    chunk = json.dumps({"choices": [{"index": 0, "delta": {"content": "ab"}}], "usage": {"completion_tokens": 3}})
    stream = f"data: {chunk}\r\n\r\ndata: [DONE]\n\n".encode()
    got = splitter.feed(stream[:10]) + splitter.feed(stream[10:])
    assert got == [chunk, "[DONE]"]
    event = parse_event("chat", got[0])
    assert event.has_text and event.completion_tokens == 3
    assert parse_event("chat", "[DONE]").done
    gen = parse_event("generate", json.dumps({"text": "x", "meta_info": {"completion_tokens": 5, "spec_verify_ct": 2}}))
    assert (gen.completion_tokens, gen.spec_verify_ct) == (5, 2)
    assert parse_event("completions", json.dumps({"error": {"message": "boom"}})).error == "boom"
    assert parse_event("completions", "{not json").error.startswith("malformed")
