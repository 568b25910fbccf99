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


def time_help(runs: int = 5) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds (user + system of the child) of ``specdash --help``, per run."""
    out, cpu = [], []
    for _ in range(runs):
        before = os.times()
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "specdash", "--help"], capture_output=True, check=True)
        out.append(time.perf_counter() - start)
        after = os.times()
        cpu.append(after.children_user - before.children_user + after.children_system - before.children_system)
    return out, cpu


def _cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc), None when unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _last_log_line_prefix() -> str:
    """The start of the demo log's last line as the log pane shows it (its first 60 characters fit any width)."""
    lines = [line for line in Path(DEMO_LOG).read_text().splitlines() if line.strip()]
    return lines[-1][:60]


def time_first_frame(runs: int = 3) -> tuple[list[float], list[float], list[float], list[float]]:
    """Seconds from starting the app to (first frame, the followed log's last line on screen), per run; then the
    app's CPU seconds at those two moments (read from /proc: on a loaded machine wall time says little)."""
    frames, logs, frame_cpu, log_cpu = [], [], [], []
    last_line = _last_log_line_prefix()
    for i in range(runs):
        name = f"specdash-bench-{os.getpid()}-{i}"
        for _attempt in range(3):  # a tmux server that is exiting (its last session just killed) refuses once
            start = time.perf_counter()
            started = subprocess.run(["tmux", "new", "-d", "-s", name, "-x", "160", "-y", "48",
                                      f"exec {sys.executable} -m specdash connect local --no-record --log {DEMO_LOG}"],
                                     capture_output=True)
            if started.returncode == 0:
                break
            time.sleep(0.5)
        else:
            raise SystemExit(f"tmux cannot start a session: {started.stderr.decode().strip()}")
        pane_pid = subprocess.run(["tmux", "list-panes", "-t", name, "-F", "#{pane_pid}"], capture_output=True,
                                  text=True).stdout.strip()
        pid = int(pane_pid) if pane_pid.isdigit() else None
        try:
            first = None
            while time.perf_counter() - start < 30:
                screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True,
                                        text=True).stdout
                now = time.perf_counter() - start
                cpu = _cpu_s(pid) if pid else None
                if first is None and "GPUs & processes" in screen and "specdash" in screen:
                    first = now
                    frames.append(first)
                    if cpu is not None:
                        frame_cpu.append(cpu)
                if first is not None and last_line in screen:
                    logs.append(now)
                    if cpu is not None:
                        log_cpu.append(cpu)
                    break
                time.sleep(0.02)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    return frames, logs, frame_cpu, log_cpu


def _figure(what: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return (f"{what}: median {statistics.median(ms):.0f} ms (min {min(ms):.0f} ms, {len(ms)} runs: "
            f"{', '.join(f'{v:.0f}' for v in ms)})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3, help="app start-ups to time (default 3)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    wall, cpu = time_help()
    print(_figure("specdash --help (wall; anchor nvitop --help 89 ms, goal <= 45 ms)", wall))
    print(_figure("specdash --help (CPU)", cpu))
    if shutil.which("tmux"):
        frames, logs, frame_cpu, log_cpu = time_first_frame(args.runs)
        for what, values in (("first frame of 'connect local' (wall; toolong 433 ms, goal <= 400 ms)", frames),
                             ("first frame (CPU of the app)", frame_cpu),
                             ("log's last line on screen (wall; toolong 433 ms, goal <= 450 ms)", logs),
                             ("log's last line on screen (CPU of the app)", log_cpu)):
            if values:
                print(_figure(what, values))
    else:
        print("tmux not found: first-frame time not measured")
