"""NCCL init (``Init torch distributed begin.`` / ``... ends.``) is a start-up phase of its own, with its stall."""

from __future__ import annotations

from specdash.commands.scan import render_text
from specdash.logs.analyzer import LogAnalyzer

ARGS = "[2026-02-26 05:20:00] server_args=ServerArgs(model_path='/m/DeepSeek-V3', tp_size=8)"


def scan(lines: list[str]) -> dict:
    analyzer = LogAnalyzer()
    analyzer.feed_many(lines)
    analyzer.end_of_input()
    return analyzer.summary()


def phases(summary: dict) -> dict[str, tuple[str, float | None]]:
    return {p["phase"]: (p["state"], p["elapsed_s"]) for p in summary["startup"]["phases"]}


def test_init_that_never_ends_is_a_stall_with_its_hint():
    summary = scan([ARGS, "[2026-02-26 05:20:06 TP0] Init torch distributed begin.",
                    "[2026-02-26 05:20:06 TP1] Init torch distributed begin.",
                    "[Gloo] Rank 0 is connected to 1 peer ranks. Expected number of connected peer ranks is : 1",
                    '[2026-02-26 05:31:00] INFO:     127.0.0.1:5 - "GET /health HTTP/1.1" 503 Service Unavailable'])
    assert phases(summary)["dist"] == ("running", None)
    text = render_text(summary)
    assert ("stall: NCCL init (torch distributed) began and had not ended 654 s later (expected at most 300 s, "
            "specdash's bound: it takes seconds once every rank has joined)") in text
    assert "NCCL init waits for every rank to join" in text
    assert "  NCCL init                 running" in text


def test_short_wait_is_only_a_note():
    summary = scan([ARGS, "[2026-02-26 05:20:06 TP0] Init torch distributed begin.",
                    "[2026-02-26 05:20:16 TP0] some other line"])
    (note,) = [f for f in summary["findings"] if f["kind"] == "startup_unfinished"]
    assert note["message"].startswith("the log ends during NCCL init (torch distributed), 10 s after it began")


def test_end_line_with_elapsed_and_the_old_form_ended_by_weight_loading():
    new = scan([ARGS, "[2026-02-26 05:20:06 TP0] Init torch distributed begin.",
                "[2026-02-26 05:20:19 TP0] Init torch distributed ends. elapsed=13.00 s, mem usage=3.81 GB",
                "[2026-02-26 05:20:20 TP0] Load weight begin. avail mem=78.12 GB"])
    assert phases(new)["dist"] == ("done", 13.0) and phases(new)["args"] == ("done", 6.0)
    old = scan([ARGS, "[2025-01-23 19:35:14 TP0] Init torch distributed begin.",
                "[2025-01-23 19:35:15 TP0] Load weight begin. avail mem=78.81 GB"])
    assert phases(old)["dist"][0] == "done"
    mid = scan([ARGS, "[2026-02-27 03:34:50] Init torch distributed begin.",
                "[2026-02-27 03:34:57] Init torch distributed ends. mem usage=0.00 GB"])
    assert phases(mid)["dist"] == ("done", 7.0)


def test_the_draft_workers_init_after_the_target_weights_does_not_stretch_the_phase():
    summary = scan([ARGS, "[2026-02-26 05:20:06 TP0] Init torch distributed begin.",
                    "[2026-02-26 05:20:08 TP0] Init torch distributed ends. mem usage=0.00 GB",
                    "[2026-02-26 05:20:09 TP0] Load weight begin. avail mem=78.12 GB",
                    "[2026-02-26 05:21:09 TP0] Load weight end. type=DeepseekV3ForCausalLM, avail mem=40.00 GB, "
                    "mem usage=38.00 GB.",
                    "[2026-02-26 05:22:00 TP0] Init torch distributed begin.",
                    "[2026-02-26 05:22:01 TP0] Init torch distributed ends. mem usage=0.00 GB"])
    assert phases(summary)["dist"] == ("done", 2.0)
    assert summary["server_state"] == "starting"
