"""Log pane in a headless app (160x48). First memory: TOTAL lines received as fast as the pane takes them, then the
RSS (the view keeps a bounded window). Then UI throughput: stream RATE lines/s in 1 000-line batches for SECONDS,
press a key every 0.5 s and measure how long until its action runs, count lost lines and the CPU used.

Usage: ``python benchmarks/bench_log_pane.py [RATE] [SECONDS] [TOTAL]`` (defaults 20000 30 1000000).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import psutil  # noqa: E402
from bench_log_generate import generate  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402
from textual.binding import Binding  # noqa: E402

from specdash.app.gc_policy import apply_streaming_gc_policy  # noqa: E402
from specdash.app.log import LogPane  # noqa: E402
from specdash.logs.startup import StartupHistory  # noqa: E402

BATCH = 1000


class BenchApp(App):
    BINDINGS = [Binding("z", "probe", "probe")]

    def __init__(self, history: Path) -> None:
        super().__init__()
        self.history = history
        self.handled: list[float] = []

    def compose(self) -> ComposeResult:
        yield LogPane("bench", history=StartupHistory(self.history))

    def on_mount(self) -> None:
        apply_streaming_gc_policy()  # as SpecdashApp does

    def action_probe(self) -> None:
        self.handled.append(time.perf_counter())


async def run(rate: int, seconds: float, total: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        app = BenchApp(Path(tmp) / "h.json")
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.query_one(LogPane)
            print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")

            # 1. memory: TOTAL lines received as fast as the pane takes them (generated on the fly, so the figure is
            #    the pane's own), then the RSS. The view keeps a bounded window.
            source = generate(total + int(rate * seconds) + 2 * BATCH)
            t0 = time.perf_counter()
            fed = 0
            while fed < total:
                pane.feed([next(source) for _ in range(BATCH)])
                fed += BATCH
                if fed % 20_000 == 0:
                    await asyncio.sleep(0)
            await pilot.pause()
            dt = time.perf_counter() - t0
            rss = psutil.Process().memory_info().rss / 2**20
            print(f"memory: {fed:,} lines received in {dt:.1f} s; window holds {pane.view.line_count:,} lines "
                  f"({pane.view.dropped:,} dropped); RSS {rss:.0f} MiB")

            # 2. throughput: RATE lines/s in BATCH-line batches for SECONDS into the (full) window, a key press every
            #    0.5 s. Batches are made before the clock starts: the figure is the pane's (analyzer + view + frames),
            #    not the log generator's.
            batches = [[next(source) for _ in range(BATCH)] for _ in range(int(rate * seconds) // BATCH + 1)]
            received_before = pane.view.received
            sent = 0
            latencies: list[float] = []
            proc = psutil.Process()
            cpu0 = proc.cpu_times()
            start = time.perf_counter()
            next_batch = start
            next_probe = start + 0.5
            interval = BATCH / rate
            late_s = 0.0
            feed_s: list[float] = []
            it = iter(batches)
            while time.perf_counter() - start < seconds:
                now = time.perf_counter()
                if now >= next_probe:
                    before = len(app.handled)
                    t_sent = time.perf_counter()
                    app.simulate_key("z")
                    while len(app.handled) == before:
                        await asyncio.sleep(0.001)
                    latencies.append(app.handled[-1] - t_sent)
                    next_probe += 0.5
                if now >= next_batch:
                    t_feed = time.perf_counter()
                    pane.feed(next(it))
                    feed_s.append(time.perf_counter() - t_feed)
                    sent += BATCH
                    next_batch += interval
                    late_s = max(late_s, time.perf_counter() - next_batch)
                await asyncio.sleep(max(0.0, min(next_batch, next_probe) - time.perf_counter()))
            elapsed = time.perf_counter() - start
            cpu1 = proc.cpu_times()
            await pilot.pause()
            received = pane.view.received - received_before
            busy = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / elapsed
            print(f"throughput: streamed {sent:,} lines in {elapsed:.1f} s = {sent / elapsed:,.0f} lines/s "
                  f"(offered {rate:,}/s; max lag behind schedule {late_s:.2f} s)")
            print(f"  lines shown by the pane: {received:,} (lost: {sent - received})")
            print(f"  CPU: {busy:.0%} of one core; pane.feed per {BATCH}-line batch: median "
                  f"{statistics.median(feed_s) * 1000:.1f} ms = {BATCH / statistics.median(feed_s):,.0f} lines/s "
                  "(the rest is frames and the event loop)")
            if latencies:
                ms = sorted(x * 1000 for x in latencies)
                print(f"  key press -> action latency over {len(ms)} presses: median {statistics.median(ms):.0f} ms, "
                      f"p95 {ms[int(0.95 * (len(ms) - 1))]:.0f} ms, max {ms[-1]:.0f} ms")


def main() -> int:
    rate = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
    total = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
    asyncio.run(run(rate, seconds, total))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
