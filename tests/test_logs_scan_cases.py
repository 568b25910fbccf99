"""`specdash scan` against every case in tests/data/cases/ that contains a log excerpt: the findings and figures
the case's "expected" part asks for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from specdash.cli import main

CASES = Path(__file__).parent / "data" / "cases"


def excerpt(case: str) -> str:
    """The input part of a case file (everything before '--- expected ---')."""
    text = (CASES / f"{case}.txt").read_text(encoding="utf-8")
    return text.split("--- expected ---")[0]


def scan(tmp_path: Path, capsys, text: str, *extra: str) -> tuple[int, dict]:
    log = tmp_path / "server.log"
    log.write_text(text, encoding="utf-8")
    rc = main(["scan", "--json", *extra, str(log)])
    return rc, json.loads(capsys.readouterr().out)


def by_kind(doc: dict, kind: str) -> list[dict]:
    return [f for f in doc["findings"] if f["kind"] == kind]


def test_vllm_flags_rejected_by_argparse(tmp_path, capsys):
    rc, doc = scan(tmp_path, capsys, excerpt("vllm-flags-argparse-error"))
    assert rc == 1 and doc["crashed"]
    (crash,) = by_kind(doc, "crash")
    assert crash["severity"] == "error" and "5 unrecognized" in crash["message"]
    for flag, sglang in (("--speculative-model", "--speculative-algorithm NGRAM"), ("--tensor-parallel-size", "--tp-size"),
                         ("--num-speculative-tokens", "--speculative-num-draft-tokens"),
                         ("--ngram-prompt-lookup-max", "no 1:1 equivalent"), ("--use-v2-block-manager", "drop it")):
        assert flag in crash["explanation"] and sglang in crash["explanation"], flag


def test_eagle3_tensor_mismatch_grouped_under_the_error(tmp_path, capsys):
    rc, doc = scan(tmp_path, capsys, excerpt("spec-v2-llama-eagle3-topk-4"))
    assert rc == 1
    (crash,) = by_kind(doc, "crash")
    assert "tensor size mismatch in the EAGLE3 draft forward" in crash["message"]
    assert "8 = --speculative-num-draft-tokens" in crash["message"]
    assert "#14077" in crash["explanation"] and "#13352" in crash["explanation"]
    assert "topk" in crash["fix"]
    # the stack is grouped: one finding, pointing back at the first frame line
    assert crash["data"]["traceback_line"] is not None and crash["data"]["traceback_line"] < crash["line"]
    assert len([f for f in doc["findings"] if f["severity"] == "error"]) == 1


def test_single_decode_line_figures_and_request_cap(tmp_path, capsys):
    rc, doc = scan(tmp_path, capsys, excerpt("deepseek-r1-decode-line"))
    assert rc == 0
    m = doc["metrics"]
    assert m["accept_len"]["last"] == 2.54 and m["accept_len"]["samples"] == 1
    assert m["gen_throughput"]["last"] == 39.33
    assert m["running_reqs"]["last"] == 32 and m["queued_reqs"]["last"] == 68 and m["token_usage"]["last"] == 0.01
    (cap,) = by_kind(doc, "request_cap")
    assert "not by memory" in cap["message"] and cap["flag"] == "--max-running-requests"
    assert "48" in cap["explanation"]


def test_steady_state_acceptance_and_depth_check(tmp_path, capsys):
    rc, doc = scan(tmp_path, capsys, excerpt("qwen3-eagle3-accept-rate"))
    assert rc == 0
    m = doc["metrics"]
    assert m["accept_len"]["samples"] == 5 and m["accept_len"]["trusted_samples"] == 4  # first sample dropped
    assert m["accept_len"]["mean"] == pytest.approx(1.90, abs=0.005)
    assert m["accept_rate"]["mean"] == pytest.approx(0.475, abs=0.001)
    assert m["gen_throughput"]["mean"] == pytest.approx(175, abs=1)
    (untrusted,) = by_kind(doc, "untrusted_samples")
    assert untrusted["data"]["lines"] == [untrusted["line"]] and "idle" in untrusted["explanation"]
    (acc,) = by_kind(doc, "acceptance")
    assert "modest" in acc["message"] and "of a possible 4" in acc["message"]
    assert "~0.9 extra tokens per verify step" in acc["explanation"]
    assert doc["consistency"]["formula"] == "accept_len/N" and doc["consistency"]["n"] == 4
    (check,) = by_kind(doc, "depth_check")
    assert "4 draft tokens" in check["message"]


def test_vllm_draft_never_accepted_vs_usable_run(tmp_path, capsys):
    rc, doc = scan(tmp_path, capsys, excerpt("vllm-serve-command"))
    assert rc == 0
    (never,) = [f for f in by_kind(doc, "low_acceptance") if "pid=6485" in f["message"]]
    assert never["severity"] == "error" and never["count"] == 3
    assert "0 of 495" in never["message"] and "pure overhead" in never["explanation"]
    (usable,) = [f for f in by_kind(doc, "acceptance") if "pid=8998" in f["message"]]
    assert "2.67" in usable["message"] and "usable" in usable["message"]


def test_prefill_dominated_samples_are_not_trusted_and_no_trend_claimed(tmp_path, capsys):
    rc, doc = scan(tmp_path, capsys, (CASES.parent / "logs" / "prefill-dominated-samples-reconstructed.log").read_text(encoding="utf-8"))
    assert rc == 0
    m = doc["metrics"]["accept_len"]
    assert m["samples"] == 3 and m["trusted_samples"] == 0
    (untrusted,) = by_kind(doc, "untrusted_samples")
    assert "3 of 3" in untrusted["message"] and "prefill-dominated" in untrusted["explanation"]
    assert not any("rise" in f["message"] or "rise" in f["explanation"] for f in doc["findings"])
    # version note: this build's accept rate = (accept len - 1) / 4 draft steps
    assert doc["consistency"]["formula"] == "(accept_len-1)/N" and doc["consistency"]["n"] == 4
    (check,) = by_kind(doc, "depth_check")
    assert "do not compare it raw across versions" in check["message"]


def test_condensed_quote_as_given_is_read_as_three_samples(tmp_path, capsys):
    rc, doc = scan(tmp_path, capsys, excerpt("prefill-dominated-samples"))
    assert rc == 0
    assert doc["metrics"]["accept_len"]["samples"] == 3
    assert doc["consistency"]["formula"] == "(accept_len-1)/N" and doc["consistency"]["n"] == 4


def test_draft_capture_dominates_startup_across_ranks(tmp_path, capsys):
    rc, doc = scan(tmp_path, capsys, excerpt("draft-capture-dominates-start-up"))
    assert rc == 0
    phases = {p["phase"]: p for p in doc["startup"]["phases"]}
    assert phases["graph_target"]["elapsed_s"] == 12.11 and phases["graph_target"]["mem_usage_gb"] == 0.54
    assert phases["graph_draft"]["elapsed_s"] == 62.67 and phases["graph_draft"]["mem_usage_gb"] == 0.21
    assert phases["graph_draft"]["avail_mem_gb"] == 15.31
    assert phases["graph_target"]["ranks"] == ["TP0"] and phases["graph_draft"]["ranks"] == ["TP6"]
    (cap,) = by_kind(doc, "capture")
    assert cap["data"]["ratio"] == pytest.approx(5.18, abs=0.01)
    assert "dominates start-up" in cap["explanation"] and "not a hang" in cap["explanation"]
    assert "--cuda-graph-max-bs" in cap["explanation"]


def test_draft_cuda_graph_capture_failure_and_crash_loop(tmp_path, capsys):
    text = excerpt("draft-cuda-graph-capture-failure")
    rc, doc = scan(tmp_path, capsys, text)
    assert rc == 1
    (crash,) = by_kind(doc, "crash")
    assert "CUDA graph capture failed in the draft runner (eagle_draft_cuda_graph_runner)" in crash["message"]
    assert "#32105" in crash["explanation"]
    # the same failure on each restart is a crash loop with its count
    rc, doc = scan(tmp_path, capsys, text + text + text)
    (crash,) = by_kind(doc, "crash")
    assert crash["count"] == 3 and "crash loop: 3 times" in crash["message"]


def test_oom_per_gpu_picture_and_knobs(tmp_path, capsys):
    rc, doc = scan(tmp_path, capsys, excerpt("vllm-v0-underscore-flags"))
    assert rc == 1
    (oom,) = by_kind(doc, "oom")
    assert "GPU 0" in oom["message"]
    text = oom["explanation"]
    assert "39.56 GiB total" in text and "60.81 MiB free" in text and "this process holds 34.61 GiB" in text
    for pid in (3179875, 3179876, 3179877):
        assert f"PID {pid} 1.62 GiB" in text
    assert "--mem-fraction-static" in oom["fix"] and "--cuda-graph-max-bs" in oom["fix"]


def test_override_line_linked_to_the_flag(tmp_path, capsys):
    # the qwen2-72b-eagle-chain case asks the log pane to highlight SGLang's adjustment line as an override linked to the flag
    line = "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1\n"
    rc, doc = scan(tmp_path, capsys, line + line)
    (override,) = by_kind(doc, "override")
    assert rc == 0 and override["severity"] == "warning" and override["count"] == 2
    assert override["flag"] == "--speculative-num-draft-tokens"
    assert "num_steps + 1" in override["message"]


def test_text_output_and_exit_codes_through_the_real_command(tmp_path):
    ok = tmp_path / "ok.log"
    ok.write_text(excerpt("qwen3-eagle3-accept-rate"), encoding="utf-8")
    crash = tmp_path / "crash.log"
    crash.write_text(excerpt("draft-cuda-graph-capture-failure"), encoding="utf-8")
    def run(*a, **kw):
        return subprocess.run([sys.executable, "-m", "specdash", "scan", *a], capture_output=True,
                                              text=True, timeout=60, **kw)
    good = run(str(ok))
    assert good.returncode == 0 and "acceptance modest" in good.stdout and "accept_len" in good.stdout
    bad = run("-", input=crash.read_text())
    assert bad.returncode == 1 and "CRASHED" in bad.stdout
    missing = run(str(tmp_path / "nope.log"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "cannot read" in missing.stderr
    assert "Traceback" not in missing.stderr
