"""Start-up figures: wall time of `specdash --help`, and of `specdash connect local --log ...` until its first
frame is on screen (polled in a tmux pane at 160x48). Prints figures; run from the repo root (needs tmux)."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time


def time_help(runs: int = 5) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "specdash", "--help"], capture_output=True, check=True)
        out.append(time.perf_counter() - start)
    return out


def time_first_frame(runs: int = 3) -> list[float]:
    out = []
    for i in range(runs):
        name = f"specdash-bench-{i}"
        start = time.perf_counter()
        subprocess.run(["tmux", "new", "-d", "-s", name, "-x", "160", "-y", "48",
                        f"{sys.executable} -m specdash connect local --no-record --log sessions/demo-server.log"],
                       check=True)
        try:
            while time.perf_counter() - start < 30:
                screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True,
                                        text=True).stdout
                if "GPUs & processes" in screen and "specdash" in screen:
                    out.append(time.perf_counter() - start)
                    break
                time.sleep(0.02)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    return out


if __name__ == "__main__":
    helps = time_help()
    print(f"specdash --help: median {statistics.median(helps) * 1000:.0f} ms (min {min(helps) * 1000:.0f} ms, "
          f"{len(helps)} runs)")
    if shutil.which("tmux"):
        frames = time_first_frame()
        if frames:
            print(f"first frame of 'connect local': median {statistics.median(frames) * 1000:.0f} ms "
                  f"(min {min(frames) * 1000:.0f} ms, {len(frames)} runs)")
    else:
        print("tmux not found: first-frame time not measured")
