"""CPU cost of recording a busy log, read two ways, both measured:

1. **The recorder alone**: N generated SGLang lines (benchmarks/bench_log_generate.py) through
   :meth:`Recorder.record_log` (redaction, JSON, gzip) as the app delivers them at 20 000 lines/s: 1 000-line
   batches (the follower's 50 ms window), the recorder's clock 50 ms on per batch (so documents merge and flush as
   they would), into a ``.yaml.gz`` file. Prints µs of CPU per line and the share of one CPU at 20 000 lines/s.
2. **Against the live pane**: the real :class:`LogPane` in a headless app (160x48) streamed 20 000 lines/s in 1 000-line
   batches for SECONDS, once as ``--no-record`` (the pane only) and once recording (each batch also through
   ``Recorder.record_log``, as ``SpecdashApp._follow`` does), ROUNDS times interleaved. Prints the process CPU of
   each (share of one CPU, medians), the CPU spent inside the recorder's calls (thread CPU time), and the extra
   CPU of recording: the recorder's CPU over the --no-record process CPU, medians. The plain difference of the two
   process figures is printed too; on a loaded machine it is the noisier reading.
   Goal: at most 20 % extra.

Usage: ``python benchmarks/bench_recording_cost.py [N_LINES] [SECONDS] [ROUNDS] [--level L]``
(defaults 200 000, 10, 3; ``--level`` the gzip level for part 1 only, to compare sizes: default the recorder's).
CPU times (``time.process_time``): the machine's load changes wall times, much less these.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_log_generate import generate  # noqa: E402

from specdash.session import recorder as recorder_module  # noqa: E402
from specdash.session.recorder import Recorder  # noqa: E402

RATE = 20_000
BATCH = 1000  # lines per follower batch at RATE (its 50 ms window)


def _batches(lines: list[str]) -> list[tuple[list[str], list[int]]]:
    out = []
    offset = 0
    for i in range(0, len(lines), BATCH):
        texts = lines[i:i + BATCH]
        offsets = []
        for text in texts:
            offsets.append(offset)
            offset += len(text.encode()) + 1
        out.append((texts, offsets))
    return out


def _record(rec: Recorder, texts: list[str], offsets: list[int]) -> None:
    """One batch as the app records it (before ``record_log`` existed: a log event of ``[offset, text]`` pairs)."""
    if hasattr(rec, "record_log"):
        rec.record_log(texts, offsets, "/var/log/sglang/server.log")
    else:
        rec.record("log", lines=[[o, t] for o, t in zip(offsets, texts, strict=True)], source="/var/log/sglang/server.log")


def recorder_alone(n: int, level: int | None) -> None:
    lines = list(generate(n))
    batches = _batches(lines)
    if level is not None:
        recorder_module.GZIP_LEVEL = level
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.yaml.gz"
        now = [0.0]
        rec = Recorder(path, {"host": "h"}, timer=False, clock=lambda: now[0])
        start = time.process_time()
        for texts, offsets in batches:
            now[0] += BATCH / RATE
            _record(rec, texts, offsets)
        rec.close()
        cpu = time.process_time() - start
        size = path.stat().st_size
    us = cpu / len(lines) * 1e6
    print(f"recorder alone: {len(lines):,} lines in {cpu:.2f} s CPU = {us:.2f} us/line ({len(lines) / cpu:,.0f} "
          f"lines/s); gzip level {getattr(recorder_module, 'GZIP_LEVEL', 6)}: file {size / 1e6:.2f} MB "
          f"({size / len(lines):.1f} bytes/line); at {RATE:,} lines/s: {us * RATE / 1e4:.1f} % of one CPU")


async def pane_rounds(seconds: float, rounds: int) -> None:
    from textual.app import App, ComposeResult

    from specdash.app.gc_policy import apply_streaming_gc_policy
    from specdash.app.log import LogPane
    from specdash.logs.startup import StartupHistory

    class BenchApp(App):
        def __init__(self, history: Path) -> None:
            super().__init__()
            self.history = history

        def compose(self) -> ComposeResult:
            yield LogPane("bench", history=StartupHistory(self.history))

        def on_mount(self) -> None:
            apply_streaming_gc_policy()  # as SpecdashApp does

    source = generate(10**9)
    need = int(RATE * seconds) + BATCH
    total_cpu: dict[str, list[float]] = {"no-record": [], "recording": []}
    rec_cpu: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        app = BenchApp(Path(tmp) / "h.json")
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.query_one(LogPane)
            pane.feed([next(source) for _ in range(20 * BATCH)])  # a full window, the start-up lines behind
            await pilot.pause()
            for round_no in range(rounds):
                for mode in ("no-record", "recording") if round_no % 2 == 0 else ("recording", "no-record"):
                    batches = _batches([next(source) for _ in range(need)])  # made before the clock starts
                    # timer=False: the recorder flushes inside record_log when a flush is due (the app's timer
                    # thread does the same work), so its whole cost is the CPU time spent in the calls
                    rec = (Recorder(Path(tmp) / f"s{round_no}.yaml.gz", {"host": "h"}, timer=False)
                           if mode == "recording" else None)
                    await pilot.pause()
                    cpu0, start = time.process_time(), time.perf_counter()
                    in_recorder = 0.0
                    next_batch = start
                    it = iter(batches)
                    while time.perf_counter() - start < seconds:
                        if time.perf_counter() >= next_batch:
                            texts, offsets = next(it)
                            if rec is not None:
                                t0 = time.thread_time()
                                _record(rec, texts, offsets)
                                in_recorder += time.thread_time() - t0
                            pane.feed(texts)
                            next_batch += BATCH / RATE
                        await asyncio.sleep(max(0.0, next_batch - time.perf_counter()))
                    if rec is not None:
                        t0 = time.thread_time()
                        rec.close()
                        in_recorder += time.thread_time() - t0
                    elapsed = time.perf_counter() - start
                    busy = (time.process_time() - cpu0) / elapsed
                    total_cpu[mode].append(busy)
                    if rec is not None:
                        rec_cpu.append(in_recorder / elapsed)
                    print(f"  round {round_no + 1} {mode:9}: {busy:.1%} of one CPU over {elapsed:.1f} s"
                          + (f", of which the recorder {in_recorder / elapsed:.1%}" if rec is not None else ""))
    off, on = statistics.median(total_cpu["no-record"]), statistics.median(total_cpu["recording"])
    recorder = statistics.median(rec_cpu)
    print(f"live pane at {RATE:,} lines/s, {rounds} interleaved rounds each, medians:")
    print(f"  process CPU: --no-record {off:.1%} of one CPU, recording {on:.1%}: {on / off - 1:+.1%} (the difference "
          "of two noisy figures)")
    print(f"  CPU inside the recorder's calls: {recorder:.1%} of one CPU = {recorder / off:+.1%} extra over the "
          "--no-record pane (goal <= +20 %)")


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    level = None
    if "--level" in sys.argv:
        level = int(sys.argv[sys.argv.index("--level") + 1])
        args.remove(str(level))
    n = int(args[0]) if args else 200_000
    seconds = float(args[1]) if len(args) > 1 else 10.0
    rounds = int(args[2]) if len(args) > 2 else 3
    recorder_alone(n, level)
    if seconds > 0 and level is None:
        asyncio.run(pane_rounds(seconds, rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
