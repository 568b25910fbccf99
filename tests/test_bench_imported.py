"""Benchmark output pasted as text: each tool's exact format (written with its own print statements), tables,
one-line reports; recomputed figures, findings, ranking; cut-off and mutated outputs."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from support.bench_outputs import (
    bench_speculative_line,
    sglang_bench_serving,
    vllm_bench_serve,
)

from specdash.bench.imported import find_results
from specdash.bench.imported.report import result_text


def only(text: str):
    results = find_results(text)
    assert len(results) == 1, [r.tool for r in results]
    return results[0]


def test_sglang_bench_serving_2025_inside_a_terminal_capture():
    text = ("$ python3 -m sglang.bench_serving --backend sglang --num-prompts 200\n"
            "100%|####| 200/200 [01:30<00:00,  2.22it/s]\n" + sglang_bench_serving("2025") + "$ exit\n")
    result = only(text)
    assert result.tool == "sglang bench_serving"
    lines = text.split("\n")
    # tqdm's bar printed before the block is claimed with it
    assert lines[result.first_line - 1] == "100%|####| 200/200 [01:30<00:00,  2.22it/s]"
    assert "Serving Benchmark Result" in lines[result.records[0].line - 1]
    assert lines[result.last_line - 1] == "=" * 50
    rec = result.records[0]
    assert rec.metrics["completed"] == 200 and rec.metrics["duration_s"] == 90.0
    assert rec.metrics["output_tokens_per_s"] == 568.89
    assert rec.metrics["accept_length"] == 3.1
    assert rec.metrics["itl_ms.p95"] == 31.0 and rec.metrics["itl_ms.max"] == 98.76
    assert rec.config == {"concurrency": 8}
    assert rec.findings == []  # every derived line agrees with its raw ones
    shown = result_text(result)
    assert "steps unknown, topk unknown, draft tokens unknown, CUDA graph unknown" in shown
    assert "concurrency 8" in shown and "output throughput 568.89 tok/s" in shown


def test_sglang_bench_serving_2024_format():
    rec = only(sglang_bench_serving("2024", accept_length=None)).records[0]
    assert rec.tool == "sglang bench_serving"
    assert rec.metrics["total_tokens_per_s"] == round((41263 + 51200) / 90.0, 2)
    assert "accept_length" not in rec.metrics and "concurrency" not in rec.config
    assert rec.to_run_dict()["accept_length"] is None
    assert rec.to_run_dict()["effective_config"]["speculative_num_steps"] is None


def test_not_set_concurrency_is_unknown_not_zero():
    rec = only(sglang_bench_serving(max_concurrency=None)).records[0]
    assert "concurrency" not in rec.config and rec.settings["max_concurrency"] == "not set"


def test_retokenized_far_below_generated_is_a_finding():
    rec = only(sglang_bench_serving(retokenized=12034)).records[0]
    [finding] = rec.findings
    assert finding.code == "retokenized-mismatch"
    assert "generated 51200 tokens but the text retokenizes to 12034 (24%)" in finding.message
    assert "degenerate output" in finding.message


def test_edited_throughput_line_is_recomputed_and_flagged():
    text = sglang_bench_serving().replace("Output token throughput (tok/s):         568.89",
                                          "Output token throughput (tok/s):         768.89")
    rec = only(text).records[0]
    [finding] = [f for f in rec.findings if f.code == "derived-mismatch"]
    assert finding.message.startswith("pasted output throughput 768.89 tok/s; recomputed 568.89 tok/s from "
                                      "51200 / 90.00 s")


def test_vllm_bench_serve_with_speculative_section():
    result = only("Maximum request concurrency: 4\n" + vllm_bench_serve())
    assert result.tool == "vllm bench serve"
    rec = result.records[0]
    assert rec.metrics["tpot_ms.mean"] == 12.2 and rec.metrics["accept_length"] == 3.2
    assert rec.metrics["accept_rate_pct"] == 55.0 and rec.metrics["errors"] == 0
    assert rec.config["num_speculative_tokens"] == 4 and rec.config["concurrency"] == 4
    assert rec.findings == []
    assert (result.first_line, result.last_line) == (1, 37)  # the concurrency line vLLM prints first included


def test_vllm_acceptance_length_that_does_not_follow_from_its_counts():
    text = vllm_bench_serve().replace("Acceptance length:                       3.20", "Acceptance length:"
                                      "                       5.80")
    rec = only(text).records[0]
    codes = [f.code for f in rec.findings]
    assert "derived-mismatch" in codes and "accept-length-above-max" in codes
    message = next(f.message for f in rec.findings if f.code == "derived-mismatch")
    assert "recomputed 3.20 from 1 + 8800 accepted / 4000 drafts" in message
    assert any("above the most this configuration can accept (4 speculative tokens per draft + 1 bonus token = 5)"
               in f.message for f in rec.findings)


def test_old_vllm_benchmark_serving_and_failed_requests():
    assert only(vllm_bench_serve("old", spec=None)).tool == "vllm bench serve"
    rec = only(vllm_bench_serve(completed=90, failed=10)).records[0]
    assert any(f.message == "10 of 100 requests failed: the figures cover only the completed ones"
               for f in rec.findings)
    rec = only(vllm_bench_serve(completed=0, failed=5, spec=None).replace("0.00      \n", "0.00\n", 1)).records[0]
    assert any(f.code == "no-completed-requests" and f.message.startswith("0 requests completed (5 failed)")
               for f in rec.findings)


def _figures(text: str) -> dict:
    return {(r.line, k): v for res in find_results(text) for r in res.records for k, v in r.metrics.items()}


def test_cut_output_yields_fewer_fields_never_other_values():
    for full_text in (sglang_bench_serving() + vllm_bench_serve(), MARKDOWN, CSV, SPECULATIVE,
                      "#questions: 80, Throughput: 378.57 token/s, Acceptance length: 5.39\n"):
        full = _figures(full_text)
        assert full
        values_by_key: dict = {}
        for (_, key), value in full.items():
            values_by_key.setdefault(key, set()).add(value)
        for cut in range(len(full_text)):
            for (line, key), value in _figures(full_text[:cut]).items():
                # a block cut before its header is read from its first known line: same values, maybe other line
                assert full.get((line, key)) == value or value in values_by_key.get(key, ()), (cut, key, value)


def test_cut_integer_on_last_line_is_not_read():
    text = sglang_bench_serving()
    cut = text.index("Total generated tokens:") + 41 + 3  # "512" of 51200
    rec = only(text[:cut]).records[0]
    assert "total_output_tokens" not in rec.metrics and rec.metrics["total_input_tokens"] == 41263


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_mutated_outputs_never_raise(data):
    text = data.draw(st.sampled_from([sglang_bench_serving(), vllm_bench_serve(), MARKDOWN, CSV, SPECULATIVE]))
    for _ in range(data.draw(st.integers(0, 6))):
        pos = data.draw(st.integers(0, len(text)))
        op = data.draw(st.sampled_from(["del", "ins", "dup"]))
        if op == "del":
            text = text[:pos] + text[pos + 1:]
        elif op == "ins":
            char = data.draw(st.sampled_from(["|", ",", "\n", "9", ".", ":", "x", " ", "0", "\x00"]))
            text = text[:pos] + char + text[pos:]
        else:
            end = data.draw(st.integers(pos, len(text)))
            text = text[:end] + text[pos:end] + text[end:]
    for res in find_results(text):
        result_text(res)
        json.dumps(res.to_dict())
        assert 1 <= res.first_line <= res.last_line <= text.count("\n") + 1


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_any_text_never_raises(text):
    for res in find_results(text):
        result_text(res)
        json.dumps(res.to_dict())


MARKDOWN = """Llama-3.1-8B + EAGLE3 on one H100, batch size 1

| Config | Steps | TopK | Draft tokens | Accept length | TPOT (ms) | Throughput (tok/s) | Speedup |
|---|---:|---:|---:|---:|---:|---:|---|
| baseline | 0 | 0 | 0 | 1.00 | 11.1 | 90.0 | 1.00x |
| eagle3 | 3 | 1 | 4 | 2.90 | 7.0 | 142.1 | 1.9x |
| eagle3-deep | 7 | 1 | 8 | 3.60 | 8.9 | 120.0 | 1.33x |
"""


def test_markdown_table_speedup_recomputed_and_ranked_by_throughput():
    result = only(MARKDOWN)
    assert (result.tool, result.first_line, result.last_line) == ("markdown table", 3, 7)
    base, eagle, deep = result.records
    assert base.baseline and not eagle.baseline
    assert [f.message for f in eagle.findings] == [
        "pasted speedup 1.9x; recomputed 1.58x from 142.1/90.0 throughput against the baseline row (line 5)"]
    assert deep.findings == [] and deep.value("speedup") == 1.33  # agrees with 120.0/90.0: kept as pasted
    shown = result_text(result)
    assert "ranking by output throughput (tok/s, higher is better):\n    1. eagle3 (steps 3, topk 1, draft tokens 4)" \
        in shown
    assert "the highest accept length (3.60, eagle3-deep (steps 7, topk 1, draft tokens 8)) ranks 2 of 3" in shown


CSV = """num_steps,topk,num_draft_tokens,batch_size,accept_length,accept_rate,tpot (s),output_throughput
0,0,0,1,1.0,,0.0111,90.1
3,1,4,1,2.5,0.5,0.0070,142.0
5,1,6,1,9.5,0.9,0.0092,N/A
"""


def test_csv_table_units_any_order_and_unknown_cells():
    result = only(CSV)
    assert result.tool == "csv table"
    base, three, five = result.records
    assert three.metrics["tpot_ms.mean"] == 7.0  # seconds in the header, milliseconds in the record
    assert three.metrics["accept_rate_pct"] == 50.0 and three.findings == []
    assert "output_tokens_per_s" not in five.metrics  # N/A stays unknown
    messages = [f.message for f in five.findings]
    assert any(m.startswith("accept length 9.5 is above the most this configuration can accept (steps 5 + 1 "
                            "bonus token = 6)") for m in messages)
    assert any(m.startswith("pasted accept rate 90.00% does not match accept length 9.5 under any definition in use "
                            "((9.5 - 1) / 5 steps = 170.00%; chain-model alpha at 5 steps = 100.00%; 9.5 / 6 draft "
                            "tokens = 158.33%)") for m in messages)
    [group] = result.ranking()
    assert group["basis"] == "output_tokens_per_s" and [r.line for r in group["order"]] == [3, 2]
    assert group["unranked"] == [five]


def test_csv_last_row_without_newline_may_be_cut_and_is_dropped():
    rows = only(CSV.rstrip("\n")).records
    assert len(rows) == 2


SPECULATIVE = "\n".join([
    "Start i=0: batch_size=1, steps=0, topk=0, num_draft_tokens=0",
    bench_speculative_line(0, 1, 0, 0, 0, 95.4, 0.01048),
    "Start i=1: batch_size=1, steps=3, topk=1, num_draft_tokens=4",
    bench_speculative_line(1, 1, 3, 1, 4, 201.52, 0.01241),
    "Start i=2: batch_size=1, steps=5, topk=1, num_draft_tokens=6",
    bench_speculative_line(2, 1, 5, 1, 6, 180.1, 0.01799),
    "Start i=3: batch_size=1, steps=7, topk=4, num_draft_tokens=16",
]) + "\n"


def test_bench_speculative_finish_lines():
    result = only(SPECULATIVE)
    assert result.tool == "sglang bench_speculative" and (result.first_line, result.last_line) == (1, 7)
    base, three, five, unfinished = result.records
    assert base.baseline and three.config["speculative_num_draft_tokens"] == 4 and three.config["concurrency"] == 1
    assert abs(three.derived["accept_length"] - 201.52 * 12.41 / 1000) < 1e-9
    assert unfinished.findings[0].message.startswith("configuration i=3 started (line 7) but has no Finish line")
    shown = result_text(result)
    assert "ranking at concurrency 1 by decode speed per request" in shown
    assert "1. steps 3, topk 1, draft tokens 4: 201.52 token/s" in shown


def test_bench_speculative_json_lines_speed_checked():
    good = json.dumps({"batch_size": 1, "steps": 3, "topk": 1, "num_draft_tokens": 4, "acc_length": 2.5,
                       "step_time": 0.0124, "speed": 201.613, "completion_tokens": 512.0})
    bad = good.replace("201.613", "301.613")
    rec_good, rec_bad = only(good + "\n" + bad + "\n").records
    assert rec_good.findings == [] and rec_good.metrics["step_time_ms"] == 12.4
    assert rec_bad.findings[0].message.startswith("pasted speed 301.613 token/s; recomputed 201.61 token/s")


def test_one_line_reports_and_log_lines_are_not_results():
    result = only("ran ngram:\nspeed: 56.8 token/s\naccept length: 1.6\n")
    assert result.tool == "one-line report" and (result.first_line, result.last_line) == (2, 3)
    assert result.records[0].metrics == {"output_tokens_per_s": 56.8, "accept_length": 1.6}
    mt = only("#questions: 80, Throughput: 378.57 token/s, Acceptance length: 5.39\n").records[0]
    assert mt.tool == "sglang mtbench" and mt.metrics["completed"] == 80
    log = ("[2025-10-22 10:00:01] Decode batch. #running-req: 1, #token: 300, token usage: 0.01, accept len: 1.85, "
           "cuda graph: True, gen throughput (token/s): 48.85, #queue-req: 0\n")
    assert find_results(log * 3) == []
    assert find_results("accept length: 1.6") == []  # may be cut from 1.65


def _sglang_result_json(**changes) -> str:
    """The dict SGLang bench_serving appends to its --output-file, as json.dumps writes it."""
    duration = 90.01234
    result = {"backend": "sglang", "dataset_name": "random", "request_rate": "inf", "max_concurrency": 8,
              "duration": duration, "completed": 200, "total_input_tokens": 41263, "total_output_tokens": 51200,
              "total_output_tokens_retokenized": 50990, "request_throughput": 200 / duration,
              "input_throughput": 41263 / duration, "output_throughput": 51200 / duration,
              "mean_e2e_latency_ms": 3578.1, "median_e2e_latency_ms": 3561.4, "mean_ttft_ms": 95.3,
              "median_ttft_ms": 88.1, "p99_ttft_ms": 210.0, "mean_itl_ms": 27.2, "p95_itl_ms": 31.0,
              "concurrency": 7.95, "accept_length": 3.1}
    return json.dumps(result | changes)


def test_bench_serving_result_json_lines():
    result = only("cat sglang_1201_200_1024_1024.jsonl\n" + _sglang_result_json() + "\n")
    assert (result.tool, result.first_line, result.last_line) == ("sglang bench_serving (JSON)", 2, 2)
    rec = result.records[0]
    assert rec.config == {"concurrency": 8} and rec.metrics["accept_length"] == 3.1
    assert rec.metrics["ttft_ms.p50"] == 88.1 and rec.findings == []
    assert "output throughput 568.81 tok/s" in result_text(result)
    rec = only(_sglang_result_json(output_throughput=700.0) + "\n").records[0]
    assert [f.message for f in rec.findings] == [
        "pasted output throughput 700.0 tok/s; recomputed 568.81 tok/s from 51200 / 90.01234 s: the pasted figure "
        "is wrong or belongs to another run"]
    assert rec.value("output_tokens_per_s") == 51200 / 90.01234


def test_vllm_saved_result_with_long_per_request_lists():
    data = {"duration": 40.0, "completed": 100, "failed": 0, "total_input_tokens": 25600,
            "total_output_tokens": 12800, "request_throughput": 2.5, "output_throughput": 320.0,
            "total_token_throughput": 960.0, "max_output_tokens_per_s": 410.0, "mean_tpot_ms": 12.2,
            "spec_decode_acceptance_length": 3.2, "spec_decode_acceptance_rate": 55.0, "spec_decode_num_drafts": 4000,
            "spec_decode_draft_tokens": 16000, "spec_decode_accepted_tokens": 8800,
            "itls": [[0.01] * 50] * 100, "generated_texts": ["x" * 100] * 100}
    rec = only(json.dumps(data) + "\n").records[0]
    assert rec.tool == "vllm bench serve (JSON)" and rec.metrics["accept_length"] == 3.2
    assert rec.config["num_speculative_tokens"] == 4 and rec.findings == []


LAUNCH = ("python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \\\n"
          "  --speculative-algorithm EAGLE3 --speculative-draft-model-path /models/eagle3 \\\n"
          "  --speculative-num-steps 2 --speculative-eagle-topk 1 --speculative-num-draft-tokens 3 "
          "--disable-cuda-graph\n")


def test_depth_from_the_only_launch_command_in_the_same_text():
    rec = only(LAUNCH + "\nbenchmark:\n" + sglang_bench_serving(accept_length=3.6)).records[0]
    assert rec.config["speculative_num_steps"] == 2 and rec.config["cuda_graph"] is False
    assert rec.config["speculative_algorithm"] == "EAGLE3" and rec.config["concurrency"] == 8
    messages = [f.message for f in rec.findings]
    assert messages[0] == ("algorithm, num steps, eagle topk, num draft tokens, cuda graph taken from the launch "
                           "command on line 1, the only one in the text")
    assert messages[1].startswith("accept length 3.60 is above the most this configuration can accept (steps 2 + 1 "
                                  "bonus token = 3)")
    two = LAUNCH + LAUNCH.replace("num-steps 2", "num-steps 5") + sglang_bench_serving(accept_length=3.6)
    rec = only(two).records[0]
    assert "speculative_num_steps" not in rec.config and rec.findings == []
    unresolved = LAUNCH.replace("num-steps 2", "num-steps $STEPS") + sglang_bench_serving(accept_length=3.6)
    rec = only(unresolved).records[0]
    assert "speculative_num_steps" not in rec.config and rec.config["speculative_num_draft_tokens"] == 3


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.floats(1.0, 6.0), st.one_of(st.none(), st.floats(1.0, 1000.0))),
                min_size=2, max_size=8))
def test_ranking_follows_throughput_never_accept_length(rows):
    table = "| steps | topk | accept length | throughput (tok/s) |\n|---|---|---|---|\n" + "".join(
        f"| {s} | 1 | {al:.2f} | {'N/A' if tp is None else f'{tp:.1f}'} |\n" for s, al, tp in rows)
    [result] = find_results(table)
    groups = result.ranking()
    known = [r for r in result.records if r.value("output_tokens_per_s") is not None]
    if len(known) < 2:
        return
    [group] = groups
    values = [r.value("output_tokens_per_s") for r in group["order"]]
    assert values == sorted(values, reverse=True) and len(group["unranked"]) == len(rows) - len(known)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200), st.text(max_size=200))
def test_comparing_any_two_texts_as_commands_never_raises(a, b):
    from specdash.bench.compare import commands_text, compare_commands

    commands_text(compare_commands("python -m sglang.launch_server " + a, "sglang serve " + b))


def test_accept_rate_under_any_definition_in_use_and_loose_draft_token_bound():
    table = """| steps | topk | draft tokens | accept length | acceptance rate |
|---|---|---|---|---|
| 3 | 1 | 4 | 2.95 | 0.80 |
| 3 | 1 | 4 | 2.95 | 0.65 |
| 3 | 1 | 4 | 2.95 | 0.74 |
| 3 | 1 | 4 | 2.95 | 0.30 |
| | | 3 | 3.50 | |
| | | 3 | 4.20 | |
"""
    alpha, nemo, sglang, wrong, k_tokens, above = only(table).records
    assert alpha.findings == nemo.findings == sglang.findings == []  # chain alpha, (L-1)/steps, L/draft tokens
    assert wrong.findings[0].code == "accept-rate-mismatch"
    assert k_tokens.findings == []  # 3 draft tokens may be vLLM's k: 3.5 is possible
    assert above.findings[0].message.startswith("accept length 4.20 is above the most this configuration can "
                                                "accept (3 draft tokens + 1 = 4)")


def test_vllm_lines_printed_before_the_result_block_belong_to_it():
    text = ("$ vllm bench serve --max-concurrency 4\nStarting initial single prompt test run...\n"
            "Traffic request rate: inf\nBurstiness factor: 1.0 (Poisson process)\nMaximum request concurrency: 4\n"
            "100%|##########| 100/100 [00:40<00:00,  2.50it/s]\n" + vllm_bench_serve("old", spec=None))
    result = only(text)
    assert (result.tool, result.first_line, result.records[0].line) == ("vllm bench serve", 2, 7)
    assert result.records[0].config == {"concurrency": 4} and result.records[0].settings["request_rate"] == "inf"
    cut = only(text.replace("Maximum request concurrency: 4\n", "Maximum request concurrency: 4"))
    assert "concurrency" not in cut.records[0].config or cut.records[0].config["concurrency"] == 4


def test_a_servers_own_metrics_log_lines_are_not_benchmark_reports():
    """vLLM's SpecDecoding metrics and SGLang's timestamped lines are server log content (the log reader's), not a
    pasted benchmark: `scan` must not turn them into benchmark results."""
    text = (
        "(APIServer pid=8998) INFO 08-06 09:48:40 [metrics.py:100] SpecDecoding metrics: Mean acceptance length: "
        "2.67, Accepted throughput: 2.94 tokens/s, Drafted throughput: 8.80 tokens/s\n"
        "INFO 08-06 09:48:41 [metrics.py:100] Avg generation throughput: 55.0 tokens/s, accept length: 1.6\n"
        "[2026-07-09 03:12:44 TP0] speed: 56.8 token/s, accept length: 1.6\n"
    )
    assert find_results(text) == []
    # the same report pasted on its own is one
    (result,) = find_results("speed: 56.8 token/s\naccept length: 1.6\n")
    assert result.records[0].metrics["output_tokens_per_s"] == 56.8


def test_a_nul_byte_in_a_pasted_csv_row_ends_the_table_instead_of_raising():
    """Python 3.10's csv module raises on a NUL byte (3.11 accepts it): the row is not read, nothing raises."""
    (result,) = find_results("config,throughput (tok/s),accept length\nchain-2,100,1.5\nchain-4,1\x0020,2.5\n")
    records = {record.label: record for record in result.records}
    assert records["chain-2"].metrics["output_tokens_per_s"] == 100.0
    # 3.10 stops before the damaged row; 3.11 reads it, but never a number out of the damaged cell
    assert "output_tokens_per_s" not in getattr(records.get("chain-4"), "metrics", {})
