"""A start-up phase that goes silent becomes a stall, judged by the caller's clock (never a wall-clock wait)."""

from __future__ import annotations

from pathlib import Path

from support.pilot import wait_until
from textual.app import App, ComposeResult
from textual.widgets import Static

from specdash.app.log import LogPane
from specdash.logs.analyzer import LogAnalyzer
from specdash.logs.startup import StartupHistory

CAPTURE = [
    "[2025-08-12 16:02:11] server_args=ServerArgs(model_path='/data/Llama-3.1-8B-Instruct', tp_size=1)",
    "[2025-08-12 16:02:20 TP0] Load weight begin. avail mem=78.12 GB",
    "[2025-08-12 16:03:30 TP0] Load weight end. type=LlamaForCausalLM, avail mem=62.90 GB, mem usage=15.22 GB.",
    "[2025-08-12 16:03:35 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=20.10 GB",
]


def analyzer_after(lines: list[str]) -> LogAnalyzer:
    analyzer = LogAnalyzer()
    analyzer.feed_many(lines)
    return analyzer


def test_capture_silent_past_sglangs_notice_is_a_stall_and_not_before():
    analyzer = analyzer_after(CAPTURE)
    assert analyzer.live_stall(0.0) is None and analyzer.live_stall(600.0) is None
    stall = analyzer.live_stall(700.0)
    assert stall is not None and stall["phase"] == "graph_target" and stall["expected_s"] == 600.0
    assert stall["text"] == ("CUDA graph capture (target) has run 700 s, 700 s without a new line (expected at most "
                             "600 s, SGLang's notice: 'This can take up to several minutes'): stalled?")


def test_nccl_init_and_log_time_before_the_silence_count():
    analyzer = analyzer_after([CAPTURE[0], "[2025-08-12 16:02:12 TP0] Init torch distributed begin.",
                               "[2025-08-12 16:04:12] [Gloo] Rank 0 is connected to 1 peer ranks."])
    stall = analyzer.live_stall(181.0)  # 120 s of log time + 181 s of silence > 300 s
    assert stall is not None and stall["running_s"] == 301.0 and stall["label"] == "NCCL init (torch distributed)"
    assert analyzer.live_stall(179.0) is None


def test_no_stall_for_weight_loading_without_an_expectation_nor_after_a_crash_or_ready():
    assert analyzer_after(CAPTURE[:2]).live_stall(10_000.0) is None  # nothing says how long weights take here
    crashed = analyzer_after(CAPTURE + ["[2025-08-12 16:04:00 TP0] Scheduler hit an exception: Traceback (most "
                                        "recent call last):", "RuntimeError: CUDA error: an illegal memory access"])
    assert crashed.live_stall(10_000.0) is None
    ready = analyzer_after(CAPTURE + ["[2025-08-12 16:04:00 TP0] Capture cuda graph end. Time elapsed: 25.00 s",
                                      "[2025-08-12 16:04:05] The server is fired up and ready to roll!"])
    assert ready.live_stall(10_000.0) is None


class _PaneApp(App):
    def __init__(self, history_path: Path) -> None:
        super().__init__()
        self.history_path = history_path

    def compose(self) -> ComposeResult:
        yield LogPane("server.log", history=StartupHistory(self.history_path), host="test")


async def test_the_pane_turns_running_into_stalled_when_the_clock_moves_on(tmp_path, monkeypatch):
    from specdash.app.log.startup_bar import StartupBar

    now = [1000.0]
    monkeypatch.setattr(StartupBar, "clock", staticmethod(lambda: now[0]))
    app = _PaneApp(tmp_path / "history.json")
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(LogPane)
        pane.feed(CAPTURE)
        phases = app.query_one("#startup-phases", Static)
        await wait_until(pilot, lambda: "CUDA graph (target) ▶" in str(phases.render()), what="capture running")
        now[0] += 700.0  # no new line for 700 s of the bar's clock
        await wait_until(pilot, lambda: "stalled?" in str(phases.render()), what="the stall shown")
        assert "CUDA graph (target) ⚠ 700 s, no line for 700 s (expected ≤ 600 s): stalled?" in str(phases.render())
        pane.feed(["[2025-08-12 16:05:35 TP0] Capturing batches (bs=1 avail_mem=14.50 GB): 100%|##| 10/10"])
        await wait_until(pilot, lambda: "stalled?" not in str(phases.render()), what="a new line clears the stall")
