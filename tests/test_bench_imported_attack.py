"""Adversarial and real-looking benchmark pastes: what the user reads must be what the text supports."""

from __future__ import annotations

from specdash.bench.imported import find_results
from specdash.bench.imported.report import result_text


def only(text: str):
    results = find_results(text)
    assert len(results) == 1, [r.tool for r in results]
    return results[0]


def test_table_request_throughput_column_is_not_read_as_tokens_per_second():
    text = ("| Config | Throughput (req/s) | TPOT (ms) |\n|---|---|---|\n"
            "| baseline | 4.10 | 12.00 |\n| steps 3 | 5.20 | 9.00 |\n")
    result = only(text)
    shown = result_text(result)
    assert "4.10 tok/s" not in shown and "5.20 tok/s" not in shown
    assert "request throughput 5.20 req/s" in shown
    assert [r.metrics.get("output_tokens_per_s") for r in result.records] == [None, None]


def test_table_median_tpot_column_is_not_called_a_mean():
    text = ("| steps | topk | draft tokens | Median TPOT (ms) | Median TTFT (s) |\n|---|---|---|---|---|\n"
            "| 3 | 1 | 4 | 9.00 | 0.12 |\n")
    shown = result_text(only(text))
    assert "TPOT mean" not in shown and "TTFT mean" not in shown
    assert "TPOT median 9.00 ms" in shown
    assert "TTFT median 120" in shown


def _serving_block(concurrency: int, accept_length: str | None) -> str:
    rows = [("Backend:", "sglang"), ("Traffic request rate:", "inf"), ("Max request concurrency:", str(concurrency)),
            ("Successful requests:", "16"), ("Benchmark duration (s):", "40.00"), ("Total input tokens:", "0"),
            ("Total generated tokens:", "8192"), ("Total generated tokens (retokenized):", "0"),
            ("Request throughput (req/s):", "0.40"), ("Input token throughput (tok/s):", "0.00"),
            ("Output token throughput (tok/s):", "204.80"), ("Total token throughput (tok/s):", "204.80"),
            ("Concurrency:", "0.90")]
    if accept_length:
        rows.append(("Accept length:", accept_length))
    return ("\n{:=^50}\n".format(" Serving Benchmark Result ") + "".join(f"{a:<40} {b:<10}\n" for a, b in rows)
            + "=" * 50 + "\n")


def test_bench_speculative_capture_with_its_server_output_between_start_and_finish():
    """bench_speculative prints the server log and bench_serving's result blocks (warm-up and run, with its dummy
    tokenizer: retokenized 0) between each Start line and its Finish line."""
    text = ""
    for i, (steps, topk, ndt, al, step) in enumerate(((0, 0, 0, None, "10.00"), (3, 1, 4, "2.80", "12.50"))):
        text += f"Start i={i}: batch_size=1, steps={steps}, topk={topk}, num_draft_tokens={ndt}\n"
        text += "[2025-08-12 16:25:00] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16\n"
        text += _serving_block(1, al) + _serving_block(1, al)
        speed = f"{float(al or 1) / float(step) * 1000:.2f}"
        text += (f"Finish i={i}: batch_size=1, steps={steps}, topk={topk}, num_draft_tokens={ndt}, "
                 f"speed={speed} token/s, step_time={step} ms\n")
    results = find_results(text)
    shown = "\n".join(result_text(r) for r in results)
    assert "no Finish line" not in shown
    assert "retokenizes to 0" not in shown
    spec = [r for r in results if r.tool == "sglang bench_speculative"]
    assert sorted(rec.settings["config_index"] for r in spec for rec in r.records) == [0, 1]


def test_bench_speculative_start_without_any_finish_is_still_reported():
    text = ("Start i=0: batch_size=1, steps=3, topk=1, num_draft_tokens=4\n"
            "[2025-08-12 16:25:00] Load weight end. type=LlamaForCausalLM\n"
            "Traceback (most recent call last):\n")
    assert "configuration i=0 started (line 1) but has no Finish line" in result_text(only(text))


SGLANG_BLOCK = """\
============ Serving Benchmark Result ============
Backend:                                 sglang-oai
Traffic request rate:                    inf
Max request concurrency:                 32
Successful requests:                     1000
Benchmark duration (s):                  120.50
Total input tokens:                      1024000
Total generated tokens:                  512000
Total generated tokens (retokenized):    511876
Request throughput (req/s):              8.30
Input token throughput (tok/s):          8497.93
Output token throughput (tok/s):         4248.96
Total token throughput (tok/s):          12746.89
Concurrency:                             31.85
Accept length:                           3.21
----------------End-to-End Latency----------------
Mean E2E Latency (ms):                   3837.12
Median E2E Latency (ms):                 3801.44
---------------Time to First Token----------------
Mean TTFT (ms):                          120.33
Median TTFT (ms):                        98.10
P99 TTFT (ms):                           541.27
==================================================
"""
LOG_LINE = ("[2025-08-12 16:25:11 TP0] Decode batch. #running-req: 16, #token: 9100, token usage: 0.05, accept len: "
            "3.49, cuda graph: True, gen throughput (token/s): 1001.02, #queue-req: 0,")


def test_server_log_line_printed_inside_the_result_block_does_not_split_it():
    lines = SGLANG_BLOCK.splitlines()
    lines.insert(13, LOG_LINE)  # before "Concurrency:"
    result = only("\n".join(lines) + "\n")
    (record,) = result.records
    assert (result.first_line, result.last_line) == (1, 24)
    assert record.metrics["accept_length"] == 3.21 and record.metrics["ttft_ms.p99"] == 541.27
    assert "line 14 inside the result block belongs to another program" in result_text(result)


def test_a_second_run_after_a_cut_block_is_not_merged_into_it():
    first = SGLANG_BLOCK.splitlines()[:12]  # cut after the output throughput line
    second = SGLANG_BLOCK.splitlines()[4:].copy()  # headerless: starts at "Successful requests:"
    second[1] = "Benchmark duration (s):                  60.25"
    text = "\n".join(first + ["then with --speculative-num-steps 5:"] + second) + "\n"
    results = find_results(text)
    assert [len(r.records) for r in results] == [1, 1]
    assert [r.records[0].metrics["duration_s"] for r in results] == [120.50, 60.25]


ONE_BATCH_CASE = """\
batch size: 16
input_len: 1024
output_len: 512
latency: 5.12 s
input throughput: 20000.00 tok/s
output throughput: 1650.23 tok/s
last_ttft: 0.82 s
last generation throughput: 1710.23 tok/s
acc_length: 2.85 
"""


def test_bench_one_batch_server_case_is_one_record_with_its_output_throughput():
    """SGLang bench_one_batch_server's print statements: input throughput (prefill) and last generation
    throughput (the server's last interval) are not the output throughput."""
    result = only("$ python3 -m sglang.bench_one_batch_server --batch-size 16\n" + ONE_BATCH_CASE)
    (record,) = result.records
    assert result.tool == "sglang bench_one_batch_server" and (result.first_line, result.last_line) == (2, 10)
    assert record.metrics == {"output_tokens_per_s": 1650.23, "accept_length": 2.85}
    assert record.config["concurrency"] == 16
    shown = result_text(result)
    assert "20000.00" not in shown and "1710.23" not in shown


def test_two_bench_one_batch_server_cases_are_two_records():
    results = find_results(ONE_BATCH_CASE + ONE_BATCH_CASE.replace("batch size: 16", "batch size: 32"))
    assert [[r.config["concurrency"] for r in result.records] for result in results] == [[16], [32]]


def test_server_log_lines_are_not_one_line_reports():
    text = ("INFO 08-12 16:25:00 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation "
            "throughput: 52.3 tokens/s, Running: 1 reqs\n"
            "INFO 08-12 16:25:00 [metrics.py:96] SpecDecoding metrics: Mean acceptance length: 2.86, Accepted "
            "throughput: 37.60 tokens/s, Drafted throughput: 67.80 tokens/s\n"
            "(APIServer pid=8998) INFO 08-06 09:48:40 [metrics.py:100] SpecDecoding metrics: Mean acceptance length: "
            "2.67, Accepted throughput: 2.94 tokens/s, Drafted throughput: 8.80 tokens/s\n")
    assert find_results(text) == []


def test_one_line_reports_still_read():
    text = ("speed: 56.80 token/s\naccept length: 1.65\n"
            "#questions: 80, Throughput: 378.57 token/s, Acceptance length: 5.39\n")
    results = find_results(text)
    assert [r.records[0].metrics for r in results] == [
        {"output_tokens_per_s": 56.8, "accept_length": 1.65},
        {"output_tokens_per_s": 378.57, "accept_length": 5.39, "completed": 80.0}]


LAUNCH_EAGLE = ("python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm "
                "EAGLE3 --speculative-draft-model-path x/y --speculative-num-steps 5 --speculative-eagle-topk 8 "
                "--speculative-num-draft-tokens 32\n")


def test_launch_command_depth_is_not_given_to_the_run_without_speculative_decoding():
    baseline = SGLANG_BLOCK.replace("Accept length:                           3.21\n", "")
    text = "Without speculative decoding:\n" + baseline + "\nWith EAGLE3:\n" + LAUNCH_EAGLE + SGLANG_BLOCK
    without, with_spec = (r.records[0] for r in find_results(text))
    assert without.config.get("speculative_num_steps") is None
    assert with_spec.config["speculative_num_steps"] == 5
    shown = result_text(find_results(text)[0])
    assert "steps 5" not in shown and "no speculative decoding" in shown


VLLM_SPEC = """\
============ Serving Benchmark Result ============
Output token throughput (tok/s):         {tps}
Mean TPOT (ms):                          8.56
Mean ITL (ms):                           32.06
---------------Speculative Decoding---------------
Acceptance rate (%):                     68.80
Acceptance length:                       3.75
Drafts:                                  {drafts}
Draft tokens:                            21856
Accepted tokens:                         15037
==================================================
"""


def test_compare_gives_no_verdict_on_token_counts(tmp_path, capsys):
    from specdash.cli import main

    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(VLLM_SPEC.format(tps="90.90", drafts=5464))
    b.write_text(VLLM_SPEC.format(tps="99.00", drafts=6000))  # +8.9 %: beyond the single-run noise floor
    assert main(["bench", "compare", f"{a}:1", f"{b}:1"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert rows["output_tokens_per_s"][-1] == "B"
    assert rows["drafts"][-1] == "+9.8%"  # shown, no A/B verdict after it
    assert rows["draft_tokens"][-1] == "+0.0%"


def test_sglang_result_file_with_infinite_rate_is_stored_and_printed_as_strict_json(tmp_path, monkeypatch, capsys):
    """bench_serving's --output-file line: its default request rate float('inf') is written as Infinity."""
    import json

    from specdash.cli import main

    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    line = ('{"backend": "sglang", "request_rate": Infinity, "max_concurrency": 16, "duration": 50.0, '
            '"completed": 200, "total_output_tokens": 50000, "output_throughput": 1000.0, "accept_length": 3.5}\n')
    path = tmp_path / "result.jsonl"
    path.write_text(line)
    assert main(["bench", "import", "--json", str(path)]) == 0
    captured = capsys.readouterr()
    assert "not saved" not in captured.err

    def strict(constant: str) -> None:
        raise ValueError(constant)

    data = json.loads(captured.out, parse_constant=strict)
    assert len(data["saved"]) == 1
    assert data["results"][0]["records"][0]["settings"]["request_rate"] == "inf"


def test_import_that_cannot_store_exits_1(tmp_path, monkeypatch, capsys):
    from specdash.cli import main

    blocker = tmp_path / "state"
    blocker.write_text("a file where the state directory should be")
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(blocker))
    path = tmp_path / "out.txt"
    path.write_text(SGLANG_BLOCK)
    assert main(["bench", "import", str(path)]) == 1
    assert "results not saved" in capsys.readouterr().err


def test_table_row_without_cuda_graph_is_not_the_run_without_speculative_decoding():
    text = ("| Config | Throughput (tok/s) | Accept length |\n|---|---|---|\n"
            "| EAGLE3 with CUDA graph | 200.0 | 3.1 |\n| w/o CUDA graph | 150.0 | 3.1 |\n"
            "| without overlap schedule | 170.0 | 3.1 |\n| w/o spec | 100.0 | - |\n")
    result = only(text)
    assert [r.baseline for r in result.records] == [False, False, False, True]
    shown = result_text(result)
    assert "accept-length-above-max" not in shown and "above the most this configuration can accept" not in shown
    assert "w/o CUDA graph (no speculative decoding)" not in shown
