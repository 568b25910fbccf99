"""``specdash scan`` of a mixed text (an issue body): parts in order, each with its line range and analyzer."""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdash.commands import scan_parts
from specdash.text import segments
from specdash.text.segments import segment

LAUNCH = """\
python3 -m sglang.launch_server --model-path $MODEL --tp $TP \\
  --speculative-algorithm EAGLE3 --speculative-draft-model-path jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B \\
  --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"""
LOG = """\
[2025-08-12 16:02:11] server_args=ServerArgs(model_path='/data/Llama-3.1-8B-Instruct', tp_size=1)
[2025-08-12 16:02:20 TP0] Load weight begin. avail mem=78.12 GB
[2025-08-12 16:03:30 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=62.90 GB, \
mem usage=15.22 GB.
[2025-08-12 16:03:35 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=20.10 GB
[2025-08-12 16:25:00] INFO:     127.0.0.1:50000 - "GET /health HTTP/1.1" 503 Service Unavailable"""
SMI = """\
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
|   0  NVIDIA H100 80GB HBM3          On  | 00000000:18:00.0 Off |                    0 |
| N/A   34C    P0             117W / 700W |  66543MiB / 81559MiB |    100%      Default |
+-----------------------------------------+----------------------+----------------------+

+---------------------------------------------------------------------------------------+
| Processes:                                                                            |
|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |
|=======================================================================================|
|    0   N/A  N/A   1234567      C   sglang::scheduler_TP0                     66530MiB |
+---------------------------------------------------------------------------------------+"""
CRASH = """\
[2026-02-10 14:04:10 TP0] Load weight end. type=LlamaForCausalLM, avail mem=60.00 GB, mem usage=15.00 GB.
[2026-02-10 14:04:12 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2900, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/sgl/python/sglang/srt/speculative/eagle_worker.py", line 95, in __init__
    super().__init__("""


def issue_body() -> str:
    quoted = "\n".join("> " + line if line else ">" for line in SMI.splitlines())
    return ("**Describe the bug**\nThe server hangs while capturing CUDA graphs.\n\n**Reproduction**\n\n"
            "```bash\nexport MODEL=/data/Llama-3.1-8B-Instruct\nTP=1\n" + LAUNCH + "\n```\n\n"
            "<details>\n<summary>server log</summary>\n\n```\n" + LOG + "\n```\n</details>\n\n"
            "> nvidia-smi while it hangs:\n> ```\n" + quoted + "\n> ```\n\nAny idea?\n")


def scan(text: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "specdash", "scan", *extra, "-"], input=text.encode(),
                          capture_output=True, timeout=180)


def test_issue_body_parts_in_order_with_their_analyzers():
    out = scan(issue_body())
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode().splitlines()
    assert lines[0] == "43 lines in 6 parts (3 other text, 1 launch command, 1 log excerpt, 1 nvidia-smi output)"
    heads = [line for line in lines if not line.startswith("    ")]
    assert [h.split(" →")[0] for h in heads[1:]] == [
        "lines 1-4: other text", "lines 7-11: launch command", "lines 18-22: log excerpt", "line 26: other text",
        "lines 28-40: nvidia-smi output", "line 43: other text"]
    assert heads[2].startswith("lines 7-11: launch command → validate (SGLang ")
    assert heads[3] == "lines 18-22: log excerpt → scan: 5 lines, server state starting"
    assert any("stall: CUDA graph capture (target) began and had not ended 1285 s later" in line for line in lines)
    assert heads[5].startswith("lines 28-40: nvidia-smi output → ps --from: 1 GPU; 1 process (1 SGLang worker) "
                               "holds 65.0 GiB")
    assert "    line 39: PID 1234567 GPU 0 C 66530 MiB sglang::scheduler_TP0: unknown" in "\n".join(lines)
    # $MODEL and $TP come from the lines before the command: no unresolved-value note
    assert "unresolved" not in out.stdout.decode()
    doc = json.loads(scan(issue_body(), "--json").stdout)
    assert [(p["kind"], p["first_line"], p["last_line"]) for p in doc["parts"]] == [
        ("prose", 1, 4), ("command", 7, 11), ("log", 18, 22), ("prose", 26, 26), ("gpu", 28, 40), ("prose", 43, 43)]
    assert scan_parts.render(doc).splitlines() == lines
    assert doc["parts"][1]["result"]["effective"]["model_path"] == "/data/Llama-3.1-8B-Instruct"


def test_variables_in_an_earlier_fence_resolve_and_a_broken_continuation_is_an_error_at_its_text_line():
    script = LAUNCH.replace("--tp $TP \\", "--tp $TP") + "\n"
    text = ("Env:\n\n```\nexport MODEL=/data/m\nexport TP=2\n```\n\nThen:\n\n```shell\n" + script + "```\n"
            "\nLog:\n\n```\n" + CRASH + "\n```\n")
    out = scan(text)
    assert out.returncode == 1
    shown = out.stdout.decode()
    assert "line 4-5" not in shown
    assert ("lines 4-5: shell commands → no SGLang launch command in these lines: not checked; its 2 variable "
            "assignments are read by the launch commands after it") in shown
    assert "lines 11-13: launch command → validate" in shown
    assert "ERROR broken-continuation [" in shown and "line 11 ends the command" in shown
    assert "lines 19-24: log excerpt → scan: 6 lines, server state crashed; CRASHED" in shown
    assert "[E] line 20 2026-02-10 14:04:12: crash in the draft worker init" in shown


def test_a_plain_log_is_still_scanned_as_a_log_and_stdin_is_read_whole():
    out = scan(LOG + "\n")
    assert out.returncode == 0
    assert out.stdout.decode().startswith("5 lines; server state: starting")


def test_file_argument_and_crash_exit_status(tmp_path):
    path = tmp_path / "issue.md"
    path.write_text("Command:\n```\n$ python3 -m sglang.launch_server --model-path /m --tp 1\n```\n" + CRASH + "\n")
    out = subprocess.run([sys.executable, "-m", "specdash", "scan", str(path)], capture_output=True, timeout=180)
    shown = out.stdout.decode()
    assert out.returncode == 1, shown
    assert "line 3: launch command → validate" in shown
    assert "lines 5-10: log excerpt → scan: 6 lines, server state crashed; CRASHED" in shown


def test_a_log_with_its_command_on_top_and_no_markdown_stays_a_log_scan(tmp_path):
    path = tmp_path / "server.log"
    path.write_text("python3 -m sglang.launch_server --model-path /m --tp 1\n" + CRASH + "\n")
    out = subprocess.run([sys.executable, "-m", "specdash", "scan", "--json", str(path)], capture_output=True,
                         timeout=180)
    doc = json.loads(out.stdout)
    assert out.returncode == 1 and "parts" not in doc and doc["crashed"] is True


def test_detectors_are_a_table_a_plugged_detector_claims_its_lines_first(monkeypatch):
    def fake_bench(content, region):
        first = next(i for i, line in enumerate(content) if line and line.startswith("=== Serving"))
        return [(first, first + 2, "RESULT")]

    monkeypatch.setattr(segments, "DETECTORS", [("bench", fake_bench)] + segments.DETECTORS[1:])
    text = "=== Serving Benchmark Result ===\nSuccessful requests: 10\n[2025-01-01 00:00:00] not log here\n" + LOG
    seg = segment(text)
    assert [(p.kind, p.first_line, p.last_line) for p in seg.parts] == [("bench", 1, 3), ("log", 4, 8)]
    assert seg.parts[0].data == "RESULT"


def test_prose_with_log_words_is_not_a_log():
    text = ("Speculative decoding is disabled by default here.\nThe flag has been removed in 0.5.\n"
            "I get a CUDA error sometimes, Warning: not always.\n\n" + LOG + "\n")
    seg = segment(text)
    assert [(p.kind, p.first_line, p.last_line) for p in seg.parts] == [("prose", 1, 3), ("log", 5, 9)]


def test_without_the_benchmark_reader_its_lines_are_not_lost():
    text = "```\n============ Serving Benchmark Result ============\nSuccessful requests:  100\n```\n"
    seg = segment(text)
    assert [p.first_line for p in seg.parts] == [2]  # other text, still in place


_PIECES = st.sampled_from([issue_body(), LAUNCH, LOG, SMI, CRASH, "```", "> quoted", "<details>", "</details>",
                           "", "   ", "plain words", "# Heading", "export X=1", "--flag value", "~~~"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=8), st.integers(0, 200))
def test_fuzz_any_cut_of_a_mixed_body_gives_ordered_parts_inside_the_text(pieces, cut):
    text = "\n".join("\n".join(pieces).splitlines()[:cut])
    seg = segment(text)
    previous = 0
    for part in seg.parts:
        assert previous < part.first_line <= part.last_line <= seg.lines
        assert len(part.lines) == part.last_line - part.first_line + 1
        assert part.lines[0].strip() and part.lines[-1].strip()
        previous = part.last_line
    doc = scan_parts.analyze(seg)
    json.dumps(doc, default=str)
    scan_parts.render(doc)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_fuzz_any_text_segments_without_error(text):
    seg = segment(text)
    assert all(1 <= p.first_line <= p.last_line <= seg.lines for p in seg.parts)
