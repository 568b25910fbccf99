"""What a user sees of the known-issues table: `specdash validate` (text and --json) and `specdash scan`."""

from __future__ import annotations

import json

from specdash.cli import main

COMMAND = ("SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path nvidia/DeepSeek-R1-0528-NVFP4-v2 "
           "--tp-size 4 --dp-size 4 --enable-dp-attention --speculative-algorithm EAGLE --speculative-num-steps 3 "
           "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4")
LINK = "https://github.com/sgl-project/sglang/issues/16274"


def test_validate_text_shows_the_known_issue_and_its_link(capsys):
    assert main(["validate", "--sglang-version", "0.5.7", "--", COMMAND]) == 0  # a known bug is not an error
    out = capsys.readouterr().out
    line = next(row for row in out.splitlines() if "known-issue:spec-v2-dp-attention-accept-length" in row)
    assert line.startswith("WARNING")
    assert f"see: {LINK}" in out


def test_validate_json_carries_the_link_and_says_fixed_in_for_a_newer_release(capsys):
    assert main(["validate", "--sglang-version", "0.5.9", "--json", "--", COMMAND]) == 0
    diags = json.loads(capsys.readouterr().out)["diagnostics"]
    diag = next(d for d in diags if d["code"] == "known-issue:spec-v2-dp-attention-accept-length")
    assert diag["severity"] == "info" and diag["link"] == LINK
    assert "fixed in 0.5.8 (this is 0.5.9)" in diag["message"]


def test_scan_reports_a_thread_log_line_with_its_link(tmp_path, capsys):
    log = tmp_path / "server.log"
    log.write_text("[2026-07-08 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
                   '  File ".../sglang/srt/model_executor/graph_shared_output.py", line 56, in get_logits_buffer\n'
                   "    assert rows <= self.max_rows, (\n"
                   "AssertionError: shared logits buffer holds 128 rows but caller needs 256 (vocab_size=154880)\n")
    assert main(["scan", "--sglang-version", "0.5.17", str(log)]) == 1  # the crash still makes it exit 1
    out = capsys.readouterr().out
    assert "known SGLang issue: --speculative-adaptive crashes at start-up" in out
    assert "https://github.com/sgl-project/sglang/issues/30549" in out
    assert main(["scan", "--json", str(log)]) == 1
    found = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["kind"] == "known_issue"]
    assert found[0]["data"] == {"id": "adaptive-shared-logits-buffer",
                                "link": "https://github.com/sgl-project/sglang/issues/30549"}
    assert found[0]["severity"] == "info"  # release not given: this issue is in some releases only


def test_scan_rejects_a_version_that_is_not_one(tmp_path, capsys):
    log = tmp_path / "server.log"
    log.write_text("hello\n")
    assert main(["scan", "--sglang-version", "nightly", str(log)]) == 2
    assert "not an SGLang version" in capsys.readouterr().err
