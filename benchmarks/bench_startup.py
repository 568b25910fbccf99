"""Start-up figures: wall time of `specdash --help`, and of `specdash connect local --log ...` until its first
frame is on screen and until the followed log's last line is on screen (polled in a tmux pane at 160x48).
Prints figures; run from the repo root (needs tmux). ``--runs N`` sets the number of app start-ups (default 3)."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

DEMO_LOG = "sessions/demo-server.log"


def time_help(runs: int = 5) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "specdash", "--help"], capture_output=True, check=True)
        out.append(time.perf_counter() - start)
    return out


def _last_log_line_prefix() -> str:
    """The start of the demo log's last line as the log pane shows it (its first 60 characters fit any width)."""
    lines = [line for line in Path(DEMO_LOG).read_text().splitlines() if line.strip()]
    return lines[-1][:60]


def time_first_frame(runs: int = 3) -> tuple[list[float], list[float]]:
    """Seconds from starting the app to (first frame, the followed log's last line on screen), per run."""
    frames, logs = [], []
    last_line = _last_log_line_prefix()
    for i in range(runs):
        name = f"specdash-bench-{os.getpid()}-{i}"
        for attempt in range(3):  # a tmux server that is exiting (its last session just killed) refuses once
            start = time.perf_counter()
            started = subprocess.run(["tmux", "new", "-d", "-s", name, "-x", "160", "-y", "48",
                                      f"{sys.executable} -m specdash connect local --no-record --log {DEMO_LOG}"],
                                     capture_output=True)
            if started.returncode == 0:
                break
            time.sleep(0.5)
        else:
            raise SystemExit(f"tmux cannot start a session: {started.stderr.decode().strip()}")
        try:
            first = None
            while time.perf_counter() - start < 30:
                screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True,
                                        text=True).stdout
                now = time.perf_counter() - start
                if first is None and "GPUs & processes" in screen and "specdash" in screen:
                    first = now
                    frames.append(first)
                if first is not None and last_line in screen:
                    logs.append(now)
                    break
                time.sleep(0.02)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    return frames, logs


def _figure(what: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return (f"{what}: median {statistics.median(ms):.0f} ms (min {min(ms):.0f} ms, {len(ms)} runs: "
            f"{', '.join(f'{v:.0f}' for v in ms)})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3, help="app start-ups to time (default 3)")
    args = parser.parse_args()
    print(_figure("specdash --help", time_help()))
    if shutil.which("tmux"):
        frames, logs = time_first_frame(args.runs)
        if frames:
            print(_figure("first frame of 'connect local'", frames))
        if logs:
            print(_figure("log's last line on screen", logs))
    else:
        print("tmux not found: first-frame time not measured")
