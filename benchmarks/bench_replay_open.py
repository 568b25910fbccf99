"""Session size per hour and replay open time, for a generated busy hour.

The busy hour, recorded through the real :class:`specdash.session.recorder.Recorder` with synthetic times:
20 SGLang decode lines per second (real v0.5.x format, in batches as the tail delivers them, 4 per 0.2 s),
a GPU sample every 2 s (8 GPUs, 10 processes), a metric sample every second, a finding every 10 minutes.
Writes it as plain YAML and as ``.yaml.gz`` into a temp folder, then prints, for both: size (MB per hour),
record time, and the time ``read_session`` takes to open it (best of 3). Target: open in < 2 s.

Wall time depends on what else runs; the CPU time (``time.process_time``) is printed too, as the figure that
does not depend on the machine's load. Run: ``python benchmarks/bench_replay_open.py [--minutes 60] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from specdash.session.reader import read_session
from specdash.session.recorder import Recorder

DECODE = ("[2026-11-30 09:{m:02d}:{s:02d} TP0] Decode batch, #running-req: {run}, #token: {tok}, token usage: "
          "{use:.2f}, accept len: {acc:.2f}, accept rate: {rate:.2f}, cuda graph: True, gen throughput (token/s): "
          "{thr:.2f}, #queue-req: {q}")


def generate(path: Path, minutes: int, seed: int = 1) -> tuple[float, int]:
    """Record a busy session of ``minutes`` to ``path``; return (seconds taken, number of log lines)."""
    rng = random.Random(seed)
    started = time.perf_counter()
    offset = 0
    n_lines = 0
    header = {"host": "gpu-box", "sglang_version": "0.5.6", "note": "generated busy hour (benchmark)"}
    with Recorder(path, header, timer=False, flush_interval_s=1e9) as rec:
        rec.record("command", t=0.0, action="launched",
                   command="python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
                           "--speculative-algorithm EAGLE3 --speculative-num-steps 3 --speculative-eagle-topk 1 "
                           "--speculative-num-draft-tokens 4 --api-key sk-secret-123456789012345678")
        for step in range(minutes * 60 * 5):  # 0.2 s steps
            t = step * 0.2
            lines = []
            for _ in range(4):
                m, s = divmod(int(t), 60)
                text = DECODE.format(m=m % 60, s=s, run=rng.randint(1, 64), tok=rng.randint(1000, 90000),
                                     use=rng.random(), acc=rng.uniform(1.5, 3.9), rate=rng.random(),
                                     thr=rng.uniform(500, 4000), q=rng.randint(0, 9))
                lines.append([offset, text])
                offset += len(text) + 1
            n_lines += len(lines)
            rec.record("log", t=t, lines=lines, source="/var/log/sglang/server.log")
            if step % 5 == 0:
                rec.record("metric", t=t, values={"accept_len": round(rng.uniform(1.5, 3.9), 2),
                                                  "accept_rate": round(rng.random(), 2),
                                                  "gen_throughput": round(rng.uniform(500, 4000), 1),
                                                  "running_req": rng.randint(1, 64), "queue_req": rng.randint(0, 9),
                                                  "token_usage": round(rng.random(), 2)})
            if step % 10 == 0:
                gpus = [[i, "NVIDIA H100 80GB HBM3", f"GPU-{i:08x}-aaaa-bbbb-cccc-0123456789ab",
                         rng.randint(60000, 80000), 81559, rng.randint(0, 100)] for i in range(8)]
                procs = [[1000 + i, i % 8, rng.randint(1000, 70000), f"sglang::scheduler_TP{i % 8}", "server",
                          "alice"] for i in range(10)]
                rec.record("gpu", t=t, gpus=gpus, processes=procs, source="nvidia-smi")
            if step % 3000 == 0:
                rec.record("finding", t=t, code="low_accept_length", severity="warning",
                           message="accept length 1.6 of 4 draft tokens", line=n_lines)
            if step % 5 == 4:
                rec.flush()
    return time.perf_counter() - started, n_lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=60)
    parser.add_argument("--keep", type=Path, help="write the files here instead of a temp folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        print(f"busy session: {args.minutes} min, 20 decode lines/s, GPU sample every 2 s (8 GPUs, 10 processes), "
              "metric sample every 1 s")
        for name in ("busy.yaml", "busy.yaml.gz"):
            path = folder / name
            path.unlink(missing_ok=True)
            record_s, n_lines = generate(path, args.minutes)
            size_mb = path.stat().st_size / 1e6
            per_hour = size_mb * 60 / args.minutes
            timings = []
            cpu = []
            for _ in range(3):
                started, started_cpu = time.perf_counter(), time.process_time()
                log = read_session(path)
                timings.append(time.perf_counter() - started)
                cpu.append(time.process_time() - started_cpu)
            print(f"{name:14s} size {size_mb:7.2f} MB = {per_hour:6.2f} MB/hour  "
                  f"({n_lines} log lines, {len(log.events)} events, recorded in {record_s:5.2f} s)  "
                  f"open (read_session, best of 3) {min(timings):5.2f} s wall, {min(cpu):5.2f} s CPU  "
                  f"[target < 2 s: {'met' if min(timings) < 2 else 'wall over; CPU ' + ('met' if min(cpu) < 2 else 'over')}]  "
                  f"problems: {len(log.problems)}")
        load = os.getloadavg()[0]
        print(f"load average {load:.1f} on {os.cpu_count()} CPUs while measuring (wall time grows with it; "
              "CPU time does not)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
