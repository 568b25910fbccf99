"""``specdash bench import|list|compare`` and ``specdash scan`` on benchmark output, as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.bench_outputs import sglang_bench_serving, vllm_bench_serve
from test_bench_imported import MARKDOWN


def specdash(*args: str, state: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SPECDASH_STATE_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "specdash", *args], capture_output=True, text=True, timeout=60,
                          env=env, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)


def test_scan_of_benchmark_output_only_reports_the_results(tmp_path):
    path = tmp_path / "bench.txt"
    path.write_text(sglang_bench_serving(retokenized=12034))
    out = specdash("scan", str(path), state=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "lines 2-30: sglang bench_serving output, 1 result"
    assert "server state" not in out.stdout and "Findings" not in out.stdout
    assert "[W] generated 51200 tokens but the text retokenizes to 12034 (24%)" in out.stdout
    data = json.loads(specdash("scan", "--json", str(path), state=tmp_path).stdout)
    [result] = data["benchmark_results"]
    assert data["benchmark_only"] is True
    assert result["tool"] == "sglang bench_serving" and (result["first_line"], result["last_line"]) == (2, 30)
    record = result["records"][0]
    assert record["output_tokens_per_s"] == 568.89 and record["completed"] == 200
    assert record["effective_config"]["speculative_num_steps"] is None
    assert record["imported"]["findings"][0]["code"] == "retokenized-mismatch"


def test_scan_of_a_log_keeps_its_report_and_adds_benchmark_results(tmp_path):
    log = ("[2025-10-22 10:00:01] Decode batch. #running-req: 1, #token: 300, token usage: 0.01, accept len: 1.85, "
           "cuda graph: True, gen throughput (token/s): 48.85, #queue-req: 0\n") * 3
    out = specdash("scan", "-", state=tmp_path, stdin=log)
    assert "Benchmark results" not in out.stdout and "server state" in out.stdout
    out = specdash("scan", "-", state=tmp_path, stdin=log + "\n" + MARKDOWN)
    assert "server state" in out.stdout
    assert "Benchmark results\nlines 7-11: markdown table output, 3 results" in out.stdout


def test_import_list_rank_and_compare(tmp_path):
    table = tmp_path / "table.md"
    table.write_text(MARKDOWN)
    out = specdash("bench", "import", str(table), state=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "speedup 1.9x (recomputed 1.58x)" in out.stdout
    assert out.stdout.rstrip().endswith("stored 3 records (see 'specdash bench list')")
    serving = tmp_path / "serving.txt"
    serving.write_text(vllm_bench_serve())
    assert specdash("bench", "import", str(serving), state=tmp_path).returncode == 0
    listing = specdash("bench", "list", state=tmp_path)
    text = listing.stdout
    assert "2 groups of comparable results" in text and "results of different groups" in text
    table_group = text[text.index("group: measured by markdown table"):].split("\n\n")[0].splitlines()
    assert "not stated: model, workload, api, concurrency" in table_group[0]
    assert table_group[1] == "  (ranked as if what is not stated were the same for all of them)"
    assert table_group[3].split()[:2] == ["1", "142.10"] and "3/1/4" in table_group[3]
    assert table_group[4].split()[:2] == ["2", "120.00"]
    assert table_group[5].split()[:2] == ["3", "90.00"] and " none " in table_group[5]
    vllm_group = text[text.index("group: concurrency 4, measured by vllm bench serve"):].splitlines()
    assert vllm_group[3].split()[:2] == ["1", "320.00"]  # first of its own group, not above the table's rows
    # TPOT is one definition everywhere: the median, labelled as the console's column (mean 12.20, median 11.59)
    assert "TPOT p50 ms" in vllm_group[2] and vllm_group[3].split()[2] == "11.59"
    assert vllm_group[4] == "  (only result of its kind: nothing to rank it against)"
    data = json.loads(specdash("bench", "list", "--json", state=tmp_path).stdout)
    ids = [r["id"] for r in data["results"]]
    assert data["ranked_by"] == "output_tokens_per_s" and len(ids) == 4
    assert [(r["group"], r["rank"]) for r in data["results"]] == [(0, "1"), (0, "2"), (0, "3"), (1, "1")]
    assert data["results"][3]["tpot_p50_ms"] == 11.59
    cmp_out = specdash("bench", "compare", ids[0], f"{table}:7", state=tmp_path)
    assert cmp_out.returncode == 0, cmp_out.stderr
    text = cmp_out.stdout
    assert "output_tokens_per_s          142.10          120       -22.10   -15.6%  A" in text
    assert "speculative_num_steps: A 3, B 7" in text
    cmp_json = json.loads(specdash("bench", "compare", ids[0], f"{table}:7", "--json", state=tmp_path).stdout)
    speedup = next(r for r in cmp_json["figures"] if r["key"] == "speedup")
    assert abs(speedup["a"] - 142.1 / 90.0) < 1e-9 and speedup["recomputed"] == ["A"]


def test_compare_two_commands_lists_every_differing_flag(tmp_path):
    a = tmp_path / "a.sh"
    a.write_text("export SGLANG_ENABLE_SPEC_V2=1\npython3 -m sglang.launch_server --model-path m --tp 2 \\\n"
                 "  --speculative-algorithm EAGLE --speculative-num-steps 3 --mem-fraction-static 0.8\n")
    b = "python3 -m sglang.launch_server --model-path m --tp-size 2 --speculative-algorithm EAGLE " \
        "--speculative-num-steps 5 --mem-fraction-static 0.7 --disable-cuda-graph"
    out = specdash("bench", "compare", str(a), b, state=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "3 flags differ:",
        "  --disable-cuda-graph: A not set, B on",
        "  --mem-fraction-static: A 0.8, B 0.7",
        "  --speculative-num-steps: A 3, B 5",
        "  env SGLANG_ENABLE_SPEC_V2: A 1, B not set",
        "effective (what SGLang runs after its rewrites, by the newest release's rules):",
        "  speculative_num_steps: A 3, B 5",
        "3 flags are the same on both",
    ]
    data = json.loads(specdash("bench", "compare", str(a), b, "--json", state=tmp_path).stdout)
    assert data["kind"] == "commands" and {r["flag"] for r in data["flags"]} == {
        "--disable-cuda-graph", "--mem-fraction-static", "--speculative-num-steps"}


def test_compare_two_commands_shows_what_each_runs_not_only_what_was_typed(tmp_path):
    """Draft tokens typed 4 and 16 with topk 1: SGLang runs steps + 1, so 2 and 6; the user sees both."""
    cmd = ("python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct --speculative-algorithm "
           "EAGLE3 --speculative-draft-model-path d --speculative-eagle-topk 1 ")
    a = cmd + "--speculative-num-steps 1 --speculative-num-draft-tokens 4"
    b = cmd + "--speculative-num-steps 5 --speculative-num-draft-tokens 16"
    out = specdash("bench", "compare", a, b, state=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "  --speculative-num-draft-tokens: A 4, B 16" in lines
    assert "  speculative_num_draft_tokens: A 2 (typed 4), B 6 (typed 16)" in lines
    data = json.loads(specdash("bench", "compare", a, b, "--json", state=tmp_path).stdout)
    assert {"field": "speculative_num_draft_tokens", "a": 2, "b": 6, "typed_a": 4, "typed_b": 16} in data["effective"]


def test_user_errors_are_one_line(tmp_path):
    table = tmp_path / "table.md"
    table.write_text(MARKDOWN)
    single = tmp_path / "one.txt"
    single.write_text("speed: 56.8 token/s\n")
    out = specdash("bench", "compare", str(table), str(single), state=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().endswith(f"{table} holds 3 results (lines 5, 6, 7): pick one as {table}:LINE, or "
                                       "compare it with another file of several results")
    out = specdash("bench", "compare", "no-such-id", f"{table}:5", state=tmp_path)
    assert out.returncode == 2 and "no such file and no stored result with this id" in out.stderr
    out = specdash("bench", "compare", f"{table}:5", "python3 -m sglang.launch_server --tp 2", state=tmp_path)
    assert out.returncode == 2 and "compare two results or two launch commands" in out.stderr
    out = specdash("bench", state=tmp_path)
    assert out.returncode == 2 and "--url is required to run a benchmark" in out.stderr
    out = specdash("bench", "import", "-", state=tmp_path, stdin="nothing here\n")
    assert out.returncode == 1 and out.stdout.startswith("no benchmark output found")
    assert len(out.stderr.splitlines()) == 0


def test_compare_two_depth_tables_pairs_their_configurations(tmp_path):
    from test_bench_imported import CSV

    table, csv_file = tmp_path / "table.md", tmp_path / "results.csv"
    table.write_text(MARKDOWN)
    csv_file.write_text(CSV)
    out = specdash("bench", "compare", str(table), str(csv_file), state=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "2 configurations in both files"
    assert "== eagle3 (steps 3, topk 1, draft tokens 4) ==" in lines
    assert "  concurrency: A unknown, B 1" in lines
    assert lines[-1] == f"only in {csv_file}: line 4 steps 5, topk 1, draft tokens 6"
    data = json.loads(specdash("bench", "compare", str(table), str(csv_file), "--json", state=tmp_path).stdout)
    assert data["kind"] == "result sets" and data["only_a"] == [7] and data["only_b"] == [4]
    assert [p["title"] for p in data["pairs"]] == ["baseline (no speculative decoding)",
                                                   "eagle3 (steps 3, topk 1, draft tokens 4)"]
