"""Start-up progress, server state, live metrics and findings of a streamed log (LogAnalyzer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdash.logs.analyzer import LogAnalyzer
from specdash.logs.startup import StartupHistory, StartupTracker

DATA = Path(__file__).parent / "data" / "logs"


def group(n: int) -> list[str]:
    out, current = [], 0
    for line in (DATA.parent / "sglang-log-formats.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("# ==== Group "):
            current = int(line.split("Group ")[1].split(":")[0])
        elif not line.startswith("#") and current == n:
            out.append(line)
    return out


def test_startup_phases_of_a_two_rank_v044_start():
    states: list[tuple[str, str]] = []
    analyzer = LogAnalyzer(on_state=lambda s, d: states.append((s, d)))
    analyzer.feed_many(group(1))
    timeline = analyzer.startup.timeline()
    phases = {p["phase"]: p for p in timeline["phases"]}
    assert list(phases) == ["args", "weights", "kv_cache", "graph_target", "warmup", "ready"]
    assert phases["args"]["elapsed_s"] == 12  # 09:14:21 -> 09:14:33 (weights begin)
    assert phases["weights"]["elapsed_s"] == 7  # target + draft, begin 09:14:33, last end 09:14:40
    assert phases["weights"]["ranks"] == ["TP0", "TP1"]
    assert phases["graph_target"]["elapsed_s"] == 9.63 and phases["graph_target"]["ranks"] == ["TP0", "TP1"]
    assert timeline["time_to_ready_s"] == 34 and timeline["ready"] is True
    # the app sees: starting (per phase) ... then ready
    assert states[0][0] == "starting" and states[-1] == ("ready", "ready after 34 s")
    assert ("starting", "CUDA graph (target)") in states
    ready = [f for f in analyzer.findings if f.kind == "ready"]
    assert ready and ready[0].severity == "success" and "34 s" in ready[0].message


def test_2026_capture_stages_are_summed_per_rank_and_slowest_rank_wins():
    analyzer = LogAnalyzer()
    analyzer.feed_many(group(5))
    phases = {p["phase"]: p for p in analyzer.startup.timeline()["phases"]}
    # TP0: target verify 4.56 s; TP1: target decode 4.81 s -> the slowest rank's 4.81 s
    assert phases["graph_target"]["elapsed_s"] == 4.81
    assert phases["graph_draft"]["elapsed_s"] == pytest.approx(1.56 + 0.74)
    assert analyzer.startup.engine_timings["load_weight"] == 41.22
    assert analyzer.server_state == "ready"


def test_capture_progress_and_eta_from_tqdm_lines():
    tracker_lines = [
        "[2025-08-12 16:02:26] Capture cuda graph begin. This can take up to several minutes. avail mem=14.77 GB",
        "Capturing batches (bs=48 avail_mem=14.60 GB):  30%|███       | 3/10 [00:06<00:14,  0.50it/s]",
    ]
    analyzer = LogAnalyzer()
    analyzer.feed_many(tracker_lines)
    assert analyzer.startup.current == "graph_target"
    assert analyzer.startup.progress() == (0.3, "tqdm")
    assert analyzer.startup.eta_s() == 14
    assert analyzer.startup.eta_s(extra_s=4) == 10  # counts down between lines
    assert analyzer.state_detail == "CUDA graph (target)"


def test_capture_progress_from_the_bar_still_being_written():
    """tqdm rewrites its bar in place with \\r and writes the newline only at 100 %: before that, the unfinished line
    is all there is. Its last state drives the progress and ETA; the line is analysed once, when complete."""
    analyzer = LogAnalyzer()
    analyzer.feed_many([
        "[2025-08-12 16:02:26 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=14.77 GB"])
    states = [f"Capturing batches (bs={48 - 4 * i} avail_mem=14.{60 - i:02d} GB):  {i * 10}%|{'█' * i}{' ' * (10 - i)}| "
              f"{i}/10 [00:{2 * i:02d}<00:{2 * (10 - i):02d},  0.50it/s]" for i in range(11)]
    assert analyzer.observe_partial("\r".join(states[:4]))  # 30 %
    assert analyzer.startup.progress() == (0.3, "tqdm") and analyzer.startup.eta_s() == 14
    assert analyzer.startup.running_s("graph_target") == 6  # tqdm's elapsed: no log line came meanwhile
    assert not analyzer.observe_partial("\r".join(states[:4]))  # nothing new
    assert analyzer.observe_partial("\r".join(states[:8]))
    assert analyzer.startup.progress() == (0.7, "tqdm") and analyzer.startup.eta_s() == 6
    assert analyzer.parser.lines_seen == 1  # partial lines are not lines
    # other bars in place are not capture progress; nor is anything before a capture begins
    assert not analyzer.observe_partial("Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01]")
    fresh = LogAnalyzer()
    assert not fresh.observe_partial("\r".join(states[:4])) and fresh.startup.progress() is None
    # the complete line then arrives as usual and the capture ends
    analyzer.feed_many(["\r".join(states),
                        "[2025-08-12 16:02:48 TP0] Capture cuda graph end. Time elapsed: 21.50 s. mem usage=0.78 GB."])
    assert analyzer.startup.phases["graph_target"].state == "done"


def test_capture_eta_from_the_previous_start_of_the_same_config(tmp_path):
    history = StartupHistory(tmp_path / "state" / "startup_history.json")
    first = LogAnalyzer(history=history, host="gpu-box")
    first.feed_many(group(2))
    first.feed_many(["[2025-08-12 16:03:00] The server is fired up and ready to roll!"])
    assert (tmp_path / "state" / "startup_history.json").exists()

    # the same config starts again; no tqdm lines this time: the ETA comes from the previous capture (6.81 s)
    second = LogAnalyzer(history=history, host="gpu-box")
    restart = [line.replace("2025-08-12 16:02", "2025-08-13 09:00") for line in group(2)]
    upto = next(i for i, line in enumerate(restart) if "Capture cuda graph begin" in line)
    second.feed_many(restart[: upto + 1])
    startup = second.startup
    assert startup.current == "graph_target" and startup.previous_duration_s("graph_target") == 6.81
    fraction, source = startup.progress()
    assert source == "history" and fraction == 0.0
    assert startup.eta_s() == pytest.approx(6.81)
    assert startup.eta_s(extra_s=2.0) == pytest.approx(4.81)

    # another host (or config) has no history
    other = LogAnalyzer(history=history, host="other-box")
    other.feed_many(restart[: upto + 1])
    assert other.startup.eta_s() is None and other.startup.progress() is None


def test_history_file_that_is_corrupt_is_ignored(tmp_path):
    path = tmp_path / "startup_history.json"
    path.write_text("{not json", encoding="utf-8")
    assert StartupHistory(path).get("x") is None
    StartupHistory(path).put("x", {"weights": 1.0})
    assert StartupHistory(path).get("x") == {"weights": 1.0}


def test_crash_after_ready_and_restart_state_sequence():
    states: list[tuple[str, str]] = []
    analyzer = LogAnalyzer(on_state=lambda s, d: states.append((s, d)))
    analyzer.feed_many(group(1))
    analyzer.feed_many([
        "[2025-04-02 10:30:02 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2702, in event_loop',
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.13 GiB is free.",
        "[2025-04-02 10:30:02] Received sigquit from a child process. It usually means the child failed.",
    ])
    assert states[-1][0] == "crashed" and "CUDA out of memory on GPU 0" in states[-1][1]
    assert analyzer.ever_crashed
    # the server is started again
    analyzer.feed_many([line.replace("2025-04-02 09:", "2025-04-02 11:") for line in group(1)[:4]])
    assert analyzer.server_state == "starting" and analyzer.startup.starts == 2


def test_retractions_are_judged_by_rate_not_by_level():
    line = "[2025-03-01 10:00:{:02d} TP0] KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_token_ratio: 0.9998 -> 1.0000"
    sparse = LogAnalyzer()
    # three retractions, but 2 minutes apart: occasional, fine
    sparse.feed_many([line.format(0).replace("10:00:", "10:00:"), line.format(0).replace("10:00:", "10:02:"),
                      line.format(0).replace("10:00:", "10:04:")])
    assert not [f for f in sparse.findings if f.kind == "retractions"]
    busy = LogAnalyzer()
    busy.feed_many([line.format(s) for s in (1, 9, 20, 31)])
    (finding,) = [f for f in busy.findings if f.kind == "retractions"]
    assert finding.severity == "warning" and "4 retractions" in finding.message
    assert finding.flag == "--schedule-conservativeness"


def test_low_acceptance_against_the_draft_tokens_in_use():
    analyzer = LogAnalyzer()
    analyzer.feed_many([
        "[2025-05-01 10:00:00] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE', "
        "speculative_num_steps=15, speculative_eagle_topk=1, speculative_num_draft_tokens=16, decode_log_interval=40)",
        "[2025-05-01 10:01:00] The server is fired up and ready to roll!",
    ] + [
        f"[2025-05-01 10:02:{s:02d}] Decode batch. #running-req: 4, #token: 900, token usage: 0.01, accept len: 1.60, "
        f"accept rate: 0.10, cuda graph: True, gen throughput (token/s): 120.00, #queue-req: 0, " for s in range(0, 20, 2)
    ])
    (low,) = [f for f in analyzer.findings if f.kind == "low_acceptance"]
    assert "1.60 of a possible 16" in low.message
    assert "mismatched" in low.explanation and "depth far too deep" in low.explanation


def test_decode_lines_without_graphs_are_flagged():
    analyzer = LogAnalyzer()
    analyzer.feed_many(group(2))
    (finding,) = [f for f in analyzer.findings if f.kind == "no_cuda_graph"]
    assert "1 decode batch" in finding.message and finding.flag == "--cuda-graph-max-bs"


def test_overrides_are_deduplicated_and_linked_to_flags():
    seen = []
    analyzer = LogAnalyzer(on_finding=seen.append)
    analyzer.feed_many(group(2) + group(2)[:3])
    overrides = [f for f in analyzer.findings if f.kind == "override"]
    assert len(overrides) == 3 and all(f.count == 2 for f in overrides)
    assert {f.flag for f in overrides} == {"--disable-overlap-schedule", "--enable-mixed-chunk",
                                           "--speculative-num-draft-tokens"}
    assert len([f for f in seen if f.kind == "override"]) == 3  # on_finding fires once per distinct finding


def test_startup_tracker_alone_ignores_steady_state_lines():
    tracker = StartupTracker()
    assert tracker.current is None and tracker.timeline()["phases"] == []


def _server_args(steps: int, topk: int, draft_tokens: int) -> str:
    return ("[2025-05-01 10:00:00] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', "
            f"speculative_num_steps={steps}, speculative_eagle_topk={topk}, "
            f"speculative_num_draft_tokens={draft_tokens}, decode_log_interval=40)")


def _decodes(minute: int, accept_len: float, n: int = 9) -> list[str]:
    return [f"[2025-05-01 10:{minute:02d}:{s:02d}] Decode batch. #running-req: 4, #token: 900, token usage: 0.01, "
            f"accept len: {accept_len:.2f}, accept rate: {accept_len / 4:.2f}, cuda graph: True, "
            f"gen throughput (token/s): 300.00, #queue-req: 0, " for s in range(0, 2 * n, 2)]


def test_acceptance_is_judged_against_the_configuration_that_produced_the_samples():
    # one log, two servers: the first ran 3 steps (at most 4), the second 1 step (at most 2) and a good 1.8
    analyzer = LogAnalyzer()
    analyzer.feed_many([_server_args(3, 1, 4), "[2025-05-01 10:01:00] The server is fired up and ready to roll!",
                        *_decodes(2, 2.86)])
    analyzer.feed_many([_server_args(1, 1, 2), "[2025-05-01 10:04:00] The server is fired up and ready to roll!",
                        *_decodes(5, 1.80)])
    (acc,) = [f for f in analyzer.findings if f.key == "acceptance"]
    assert acc.kind == "acceptance" and "1.80 of a possible 2" in acc.message
    assert "2.86" not in acc.message and "(steady-state, 8 samples)" in acc.message
    # the counts in the findings are this run's, the samples the strip shows
    assert len(analyzer.metrics.values("accept_len")) == 9
    untrusted = [f for f in analyzer.findings if f.kind == "untrusted_samples"]
    assert untrusted and untrusted[0].message == "1 of 9 decode samples not trusted for trends"


def test_accept_length_above_the_possible_maximum_is_an_error_not_good():
    analyzer = LogAnalyzer()
    analyzer.feed_many([_server_args(1, 1, 2), "[2025-05-01 10:01:00] The server is fired up and ready to roll!",
                        *_decodes(2, 2.86)])
    acc = [f for f in analyzer.findings if f.key == "acceptance"]
    assert [f.kind for f in acc] == ["accept_above_max"]
    assert acc[0].severity == "error"
    assert acc[0].message.startswith("accept length 2.86 is above the possible 2 of the configuration in the log")
    assert "9 of 9 decode samples" in acc[0].message and "not running what you think" in acc[0].message
    assert not [f for f in analyzer.findings if "acceptance good" in f.message or "of a possible 2" in f.message]


READY = ["[2026-12-02 05:24:26] The server is fired up and ready to roll!"]
SERVING = ['[2026-12-02 05:24:31] INFO:     127.0.0.1:41750 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
           "[2026-12-02 05:24:32] Decode batch. #running-req: 1, #token: 100, token usage: 0.00, accept len: 2.50, "
           "gen throughput (token/s): 100.00, #queue-req: 0, "]
#: uvicorn's form (uvicorn/protocols/http/httptools_impl.py run_asgi logs "Exception in ASGI application")
ASGI = ["[2026-12-02 05:24:30] ERROR:    Exception in ASGI application",
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.10/dist-packages/uvicorn/protocols/http/httptools_impl.py", line 409, in '
        "run_asgi",
        "    result = await app(  # type: ignore[func-returns-value]",
        '  File "/usr/local/lib/python3.10/dist-packages/starlette/responses.py", line 250, in stream_response',
        '    await send({"type": "http.response.body", "body": chunk, "more_body": True})',
        "RuntimeError: Unexpected ASGI message 'http.response.body' sent, after response already completed."]
#: Python's socketserver form (BaseServer.handle_error), a client gone in the middle of a stream
SOCKETSERVER = ["----------------------------------------",
                "Exception occurred during processing of request from ('127.0.0.1', 45612)",
                "Traceback (most recent call last):",
                '  File "/usr/lib/python3.11/socketserver.py", line 691, in process_request_thread',
                "    self.finish_request(request, client_address)",
                '  File "/usr/lib/python3.11/http/server.py", line 424, in handle_one_request',
                "    method()",
                "BrokenPipeError: [Errno 32] Broken pipe",
                "----------------------------------------"]


@pytest.mark.parametrize("error", [ASGI, SOCKETSERVER], ids=["uvicorn", "socketserver"])
def test_a_request_handlers_traceback_is_a_request_error_not_a_crash(error):
    analyzer = LogAnalyzer()
    analyzer.feed_many(READY + error * 3 + SERVING)
    analyzer.end_of_input()
    # before: "crash: ... — crash loop: 3 times" and server state crashed, on a server that went on serving
    assert analyzer.server_state == "ready" and not analyzer.ever_crashed
    assert not [f for f in analyzer.findings if f.kind == "crash"]
    (found,) = [f for f in analyzer.findings if f.kind == "request_error"]
    assert found.severity == "warning" and found.count == 3
    assert found.message == "request error: " + error[-1 if error is ASGI else -2]
    assert "crash loop" not in found.message and "not a crash" in found.explanation


def test_a_scheduler_crash_is_still_a_crash_after_request_errors():
    analyzer = LogAnalyzer()
    analyzer.feed_many(READY + ASGI + [
        "[2026-12-02 05:25:02 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2702, in event_loop',
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "[2026-12-02 05:25:02] Received sigquit from a child process. It usually means the child failed."])
    assert analyzer.server_state == "crashed"
    assert [f.kind for f in analyzer.findings if f.severity == "error"][:1] == ["crash"]
    assert [f.kind for f in analyzer.findings if f.kind == "request_error"] == ["request_error"]
