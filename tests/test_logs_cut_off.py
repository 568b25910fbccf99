"""Logs that stop in the middle: a traceback cut before its exception line is still a crash, crash markers count
on their own, a start-up phase begun and never ended is a stall past what is expected, and `scan` says when a log
is an excerpt. Assertions are on what `specdash scan` prints (text and --json) and its exit status."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdash.cli import main
from specdash.commands.scan import render_text
from specdash.logs.analyzer import LogAnalyzer

START = [
    "[2026-02-10 14:01:55] server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3-0324', tp_size=8, "
    "speculative_algorithm='EAGLE', speculative_num_steps=3, speculative_eagle_topk=1, "
    "speculative_num_draft_tokens=4, disable_overlap_schedule=True)",
    "[2026-02-10 14:02:10 TP0] Load weight begin. avail mem=78.49 GB",
    "[2026-02-10 14:04:10 TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=20.86 GB, "
    "mem usage=57.63 GB.",
]
_SRT = "/sgl-workspace/sglang/python/sglang/srt"
DRAFT_INIT = [
    f'  File "{_SRT}/managers/scheduler.py", line 2702, in run_scheduler_process',
    "    scheduler = Scheduler(",
    "                ^^^^^^^^^^",
    f'  File "{_SRT}/managers/scheduler.py", line 320, in __init__',
    "    self.draft_worker = EAGLEWorker(",
    f'  File "{_SRT}/speculative/eagle_worker.py", line 95, in __init__',
    "    super().__init__(",
    f'  File "{_SRT}/managers/tp_worker.py", line 81, in __init__',
    "    self.model_runner = ModelRunner(",
    f'  File "{_SRT}/model_executor/model_runner.py", line 230, in __init__',
    "    self.initialize(min_per_gpu_memory)",
]
CAPTURE = [
    f'  File "{_SRT}/managers/scheduler.py", line 2702, in run_scheduler_process',
    "    scheduler = Scheduler(",
    f'  File "{_SRT}/model_executor/model_runner.py", line 310, in initialize',
    "    self.init_device_graphs()",
    f'  File "{_SRT}/model_executor/cuda_graph_runner.py", line 388, in capture',
    "    ) = self.capture_one_batch_size(bs, forward)",
]
HEADS = [
    "[2026-02-10 14:04:12 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    "[2026-02-10 14:04:12] DetokenizerManager hit an exception: Traceback (most recent call last):",
    "Traceback (most recent call last):",
]
EXCEPTION = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
SIGQUIT = "[2026-02-10 14:04:12] Received sigquit from a child process. It usually means the child failed."


def _scan(tmp_path, lines, *extra):
    path = tmp_path / "server.log"
    path.write_text("\n".join(lines) + "\n")
    return main(["scan", *extra, str(path)])


def _analyse(lines):
    analyzer = LogAnalyzer()
    analyzer.feed_many(list(lines))
    analyzer.end_of_input()
    return analyzer.summary()


@settings(max_examples=120, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(head=st.sampled_from(HEADS), frames=st.sampled_from([DRAFT_INIT, CAPTURE]), data=st.data())
def test_cutting_a_log_inside_a_traceback_always_leaves_a_crash(tmp_path_factory, capsys, head, frames, data):
    complete = [*START, head, *frames, EXCEPTION, SIGQUIT]
    first = len(START)
    cut = data.draw(st.integers(min_value=first + 1, max_value=first + 1 + len(frames)), label="lines kept")
    lines = complete[:cut]
    tmp_path = tmp_path_factory.mktemp("cut")
    assert _scan(tmp_path, lines) == 1
    text = capsys.readouterr().out
    assert "Findings\n  (none)" not in text
    assert "CRASHED" in text
    summary = _analyse(lines)
    crashes = [f for f in summary["findings"] if f["kind"] == "crash"]
    assert len(crashes) == 1 and crashes[0]["line"] == first + 1
    assert "the log is cut here" in crashes[0]["message"]
    kept_frames = [f for f in lines[first + 1:] if f.lstrip().startswith("File ")]
    if kept_frames:
        assert crashes[0]["data"]["last_frame"] == kept_frames[-1].strip()


def test_the_component_and_last_frame_are_named(tmp_path, capsys):
    lines = [*START, HEADS[0], *DRAFT_INIT]
    assert _scan(tmp_path, lines) == 1
    text = capsys.readouterr().out
    assert ("crash in the draft worker init (model runner): traceback without its exception line (the log is cut "
            "here)") in text
    assert f'Last frame: File "{_SRT}/model_executor/model_runner.py", line 230, in __init__.' in text
    capture = _analyse([*START, HEADS[0], *CAPTURE])
    assert capture["findings"][0]["data"]["component"] == "CUDA graph capture"


def test_a_complete_traceback_is_reported_once_by_its_exception():
    summary = _analyse([*START, HEADS[0], *DRAFT_INIT, EXCEPTION])
    crashes = [f for f in summary["findings"] if f["kind"] in ("crash", "oom")]
    assert len(crashes) == 1 and not crashes[0].get("data", {}).get("cut")


def test_a_traceback_cut_mid_log_is_a_crash_at_the_next_line():
    summary = _analyse([*START, HEADS[0], *DRAFT_INIT, SIGQUIT])
    kinds = [(f["kind"], f["data"].get("cut") if "data" in f else None) for f in summary["findings"]]
    assert ("crash", True) in kinds
    cut = next(f for f in summary["findings"] if f.get("data", {}).get("cut"))
    assert "the lines after it belong to something else" in cut["message"]


def test_crash_markers_on_their_own(tmp_path, capsys):
    for marker in ("[2026-02-10 14:04:12 TP0] Scheduler hit an exception: Traceback (most recent call last):",
                   SIGQUIT,
                   "[2026-02-10 14:04:12] DetokenizerManager hit an exception: Traceback (most recent call last):"):
        assert _scan(tmp_path, [marker]) == 1, marker
        assert "CRASHED" in capsys.readouterr().out


_CAPTURE_BEGIN = ("[2025-08-12 16:02:26] Capture cuda graph begin. This can take up to several minutes. "
                  "avail mem=14.77 GB")
_START_TO_CAPTURE = [
    "[2025-08-12 16:02:10] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3')",
    "[2025-08-12 16:02:19] Load weight begin. avail mem=78.68 GB",
    "[2025-08-12 16:02:24] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.58 GB, "
    "mem usage=15.10 GB.",
    _CAPTURE_BEGIN,
]


def test_a_capture_begun_and_never_ended_is_a_stall_past_sglangs_own_expectation(tmp_path, capsys):
    later = '[2025-08-12 16:25:00] INFO:     127.0.0.1:40312 - "GET /health HTTP/1.1" 503 Service Unavailable'
    assert _scan(tmp_path, [*_START_TO_CAPTURE, later]) == 0
    text = capsys.readouterr().out
    assert ("stall: CUDA graph capture (target) began and had not ended 1354 s later (expected at most 600 s, "
            "SGLang's notice: 'This can take up to several minutes')") in text


def test_a_capture_with_tqdm_progress_uses_its_estimate():
    tqdm = "Capturing batches (bs=1 avail_mem=14.41 GB):  40%|████      | 4/10 [00:20<00:30,  0.2it/s]"
    later = "[2025-08-12 16:05:00] Some other line from rank 1"
    summary = _analyse([*_START_TO_CAPTURE, tqdm, later])
    stall = next(f for f in summary["findings"] if f["kind"] == "stall")
    assert stall["data"]["expected_s"] == 110.0 and "tqdm" in stall["data"]["basis"]


def test_a_log_ending_right_after_a_begin_line_cannot_tell():
    summary = _analyse(_START_TO_CAPTURE)
    note = next(f for f in summary["findings"] if f["kind"] == "startup_unfinished")
    assert note["severity"] == "info"
    assert note["message"].startswith("the log ends during CUDA graph capture (target), 0 s after it began")
    assert "cannot tell" in note["message"]
    weights = _analyse([*_START_TO_CAPTURE[:2], "[2025-08-12 16:40:19] Some line of another process"])
    note = next(f for f in weights["findings"] if f["kind"] == "startup_unfinished")
    assert note["message"] == ("the log ends during weight loading, 2280 s after it began; no expected duration is "
                               "known, so whether it is still running, stalled or was cut off this log cannot tell")


def test_scan_says_when_a_log_is_an_excerpt(tmp_path, capsys):
    decode = ("[2025-08-12 16:03:40] Decode batch. #running-req: 8, #token: 5214, token usage: 0.01, accept len: "
              "2.86, cuda graph: True, gen throughput (token/s): 1122.58, #queue-req: 0, ")
    assert _scan(tmp_path, [decode, decode.replace("16:03:40", "16:03:52")]) == 0
    text = capsys.readouterr().out
    assert ("excerpt: no start-up lines and no end (a piece of a longer log); it cannot tell the launch flags and "
            "the overrides SGLang applied at start-up; time to ready; whether the server stopped or crashed after "
            "the last line") in text
    assert _scan(tmp_path, [*START, decode]) == 0
    assert "excerpt" not in capsys.readouterr().out


def test_every_count_in_the_text_agrees_with_the_json(tmp_path, capsys):
    decode = ("[2025-08-12 16:{:02d}:{:02d}] Decode batch. #running-req: {}, #token: 5214, token usage: 0.01, "
              "accept len: {:.2f}, cuda graph: True, gen throughput (token/s): 1122.58, #queue-req: 0, ")
    lines = [*START, *(decode.format(4 + i // 60, i % 60, 1 + i % 7, 1.5 + (i % 5) / 4) for i in range(0, 90, 3)),
             HEADS[0], *CAPTURE]
    assert _scan(tmp_path, lines) == 1
    text = capsys.readouterr().out
    assert _scan(tmp_path, lines, "--json") == 1
    summary = json.loads(capsys.readouterr().out)
    assert text == render_text(summary)
    for finding in summary["findings"]:
        assert finding["message"] in text
    for name, metric in summary["metrics"].items():
        assert re.search(rf"{name}\s.*samples {metric['samples']} \(trusted {metric['trusted_samples']}\)", text)
    samples = summary["metrics"]["accept_len"]
    untrusted = next(f for f in summary["findings"] if f["kind"] == "untrusted_samples")
    excluded, total = (int(n) for n in re.search(r"(\d+) of (\d+) decode samples", text).groups())
    assert untrusted["message"].startswith(f"{excluded} of {total} decode samples")
    assert total == samples["samples"] and excluded == samples["samples"] - samples["trusted_samples"]
    acceptance = next(f for f in summary["findings"] if f["kind"] in ("acceptance", "low_acceptance"))
    if acceptance["data"]["basis"] == "steady-state":
        assert acceptance["data"]["samples"] == samples["trusted_samples"]
        assert f"{samples['trusted_samples']} samples)" in text


def test_the_excluded_count_follows_later_trusted_samples():
    decode = ("[2025-08-12 16:03:{:02d}] Decode batch. #running-req: 8, #token: 5214, token usage: 0.01, accept len: "
              "2.86, cuda graph: True, gen throughput (token/s): 1122.58, #queue-req: 0, ")
    summary = _analyse([decode.format(s) for s in (0, 1, 2, 3)])  # the first window includes idle time
    untrusted = next(f for f in summary["findings"] if f["kind"] == "untrusted_samples")
    metric = summary["metrics"]["accept_len"]
    assert untrusted["message"] == (f"{metric['samples'] - metric['trusted_samples']} of {metric['samples']} decode "
                                    "samples not trusted for trends")
