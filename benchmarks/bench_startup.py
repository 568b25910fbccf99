"""Start-up figures: CPU time (and wall time) of ``specdash --help``, and of ``specdash connect local --log ...``
until its first frame is on screen and until the followed log's last line is on screen (polled in a tmux pane at
160x48), each beside the bare interpreter's floor measured in the same rounds: ``python -c pass`` and
``python -c "import textual.app"``. What is above the floor is specdash's.

Rounds are interleaved (help, floors, app start-up, then again) and figures are medians; CPU time is the one to
compare on a loaded machine (wall time waits for other processes). CPU of ``--help`` and the floors: user + system
of the child (``os.wait4``); of the app: user + system of its process (all threads) from /proc at the poll that
saw the frame, so it can be late by one poll (10 ms) of the app's work.

Bytecode: by default the children write and read their compiled modules in a private cache folder
(``PYTHONPYCACHEPREFIX``, removed at the end) and one warm-up run of each is not counted, so the figures are those
of an installed package (pip compiles it on install). ``--compile`` keeps the environment as it is: with
``PYTHONDONTWRITEBYTECODE`` set, every run compiles specdash's modules from source (~80 ms more for the app).

The app records its session (as ``connect`` does by default; ``--no-record`` to compare) into a private state
folder (``SPECDASH_STATE_DIR``, removed at the end), which also holds its start-up history.

The tmux server is a private one (``tmux -L``, killed at the end): a tmux server started elsewhere would run the
app with its own environment (another checkout's ``PYTHONPATH``).

Run from the repo root (needs tmux): ``python benchmarks/bench_startup.py [--runs N] [--compile] [--no-record]
[--baseline CHECKOUT]`` (N default 5; CHECKOUT: another checkout measured in the same rounds, e.g. main's).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEMO_LOG = "sessions/demo-server.log"
SOCKET = f"specdash-bench-{os.getpid()}"
POLL_S = 0.01


def child_cpu_s(argv: list[str], env: dict[str, str], cwd: str = ".") -> tuple[float, float]:
    """(CPU seconds, wall seconds) of running ``argv`` to its end: user + system of that child (``os.wait4``)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited with {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, wall


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


def _tmux(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, env=env)


def app_start(env: dict[str, str], index: int, checkout: str = ".",
              record: bool = True) -> tuple[float, float, float | None, float | None, tuple, tuple] | None:
    """One start of the app of ``checkout`` in a tmux pane: (wall s to first frame, wall s to the log's last line,
    CPU s of the app when the poll that saw each one ended, then (CPU s when that poll began, when the poll before it
    began) for each: the frame was drawn in between); None when it did not get there within 30 s."""
    name, last_line = f"run{index}", _last_log_line_prefix()
    log = os.path.abspath(DEMO_LOG)
    start = time.perf_counter()
    started = _tmux("new", "-d", "-s", name, "-x", "160", "-y", "48", "-c", os.path.abspath(checkout),
                    f"exec env PYTHONPATH={os.path.abspath(checkout)} {sys.executable} -m specdash connect local "
                    f"{'' if record else '--no-record '}--log {log}", env=env)
    if started.returncode != 0:
        raise SystemExit(f"tmux cannot start a session: {started.stderr.strip()}")
    pane_pid = _tmux("list-panes", "-t", name, "-F", "#{pane_pid}").stdout.strip()
    pid = int(pane_pid) if pane_pid.isdigit() else None
    first = first_cpu = None
    first_early: tuple = ()
    previous = None
    try:
        while time.perf_counter() - start < 30:
            before = _cpu_s(pid) if pid else None
            screen = _tmux("capture-pane", "-p", "-t", name).stdout
            now = time.perf_counter() - start
            cpu = _cpu_s(pid) if pid else None
            if first is None and "GPUs & processes" in screen and "specdash" in screen:
                first, first_cpu, first_early = now, cpu, (before, previous)
            if first is not None and last_line in screen:
                return first, now, first_cpu, cpu, first_early, (before, previous)
            previous = before
            time.sleep(POLL_S)
        return None
    finally:
        _tmux("kill-session", "-t", name)


def _ms(values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"median {statistics.median(ms):4.0f} ms (min {min(ms):4.0f}; {', '.join(f'{v:.0f}' for v in ms)})"


def _report(label: str, cpu: dict[str, list[float]], wall: list[float], app: list, floor: float,
            textual: float) -> None:
    help_cpu = statistics.median(cpu["help"]) * 1000
    print(f"[{label}] CPU  specdash --help                  {_ms(cpu['help'])}")
    print(f"  -> {help_cpu:.0f} ms = floor {floor:.0f} + specdash's {help_cpu - floor:.0f} ms "
          f"(goal <= 45 ms; anchor nvitop --help 89 ms)")
    print(f"[{label}] wall specdash --help                  {_ms(wall)}")
    if not app:
        print(f"[{label}] first frame / last line: not measured (no tmux, or the log never reached the screen)")
        return
    for what, values, early, goal in (
            ("first frame", [a[2] for a in app if a[2] is not None], [a[4] for a in app],
             "goal <= 400 ms; toolong 433 ms"),
            ("log's last line on screen", [a[3] for a in app if a[3] is not None], [a[5] for a in app],
             "goal <= 450 ms; toolong 433 ms")):
        if values:
            med = statistics.median(values) * 1000
            print(f"[{label}] CPU  {what:32s} {_ms(values)}")
            print(f"  -> {med:.0f} ms = floor {floor:.0f} + Textual's import {textual - floor:.0f} + specdash's "
                  f"{med - textual:.0f} ms ({goal})")
            bounds = [e for e in early if None not in e]  # (CPU as the poll that saw it began, as the one before)
            if bounds:
                print(f"     drawn between polls: median CPU {statistics.median(b[1] for b in bounds) * 1000:.0f} "
                      f".. {statistics.median(b[0] for b in bounds) * 1000:.0f} ms .. {med:.0f} ms (before the "
                      "poll before / before the poll that saw it / after it)")
    print(f"[{label}] wall first frame                      {_ms([a[0] for a in app])}")
    print(f"[{label}] wall log's last line on screen        {_ms([a[1] for a in app])}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--compile", action="store_true",
                        help="keep the environment's bytecode setting (no private cache, no warm-up)")
    parser.add_argument("--no-record", action="store_true",
                        help="start the app with --no-record (default: recording on, as 'connect' does by default)")
    parser.add_argument("--baseline", metavar="CHECKOUT",
                        help="another checkout of specdash (e.g. a worktree of main) measured in the same rounds")
    args = parser.parse_args()
    env = dict(os.environ)
    state = tempfile.mkdtemp(prefix="specdash-bench-state-")  # sessions recorded, start-up history
    env["SPECDASH_STATE_DIR"] = state
    cache = None
    if not args.compile:
        cache = tempfile.mkdtemp(prefix="specdash-bench-pyc-")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
    py = sys.executable
    floors = {"pass": [py, "-c", "pass"], "textual": [py, "-c", "import textual.app"]}
    checkouts = {"this checkout": "."} | ({"baseline": args.baseline} if args.baseline else {})
    have_tmux = shutil.which("tmux") is not None
    cpu: dict[str, list[float]] = {what: [] for what in floors}
    help_cpu: dict[str, list[float]] = {label: [] for label in checkouts}
    help_wall: dict[str, list[float]] = {label: [] for label in checkouts}
    app: dict[str, list] = {label: [] for label in checkouts}

    def help_run(checkout: str) -> tuple[float, float]:
        return child_cpu_s([py, "-m", "specdash", "--help"], env | {"PYTHONPATH": os.path.abspath(checkout)},
                           cwd=checkout)

    try:
        if cache:  # warm-up: compile into the private cache
            for argv in floors.values():
                child_cpu_s(argv, env)
            for checkout in checkouts.values():
                help_run(checkout)
                if have_tmux:
                    app_start(env, -1, checkout, record=not args.no_record)
        for i in range(args.runs):
            for what, argv in floors.items():
                cpu[what].append(child_cpu_s(argv, env)[0])
            for label, checkout in checkouts.items():
                c, w = help_run(checkout)
                help_cpu[label].append(c)
                help_wall[label].append(w)
                if have_tmux:
                    got = app_start(env, i, checkout, record=not args.no_record)
                    if got is not None:
                        app[label].append(got)
    finally:
        if have_tmux:
            _tmux("kill-server")
        shutil.rmtree(state, ignore_errors=True)
        if cache:
            shutil.rmtree(cache, ignore_errors=True)

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {args.runs} interleaved rounds; "
          f"bytecode {'as the environment has it' if args.compile else 'cached (as installed)'}; "
          f"connect local {'--no-record ' if args.no_record else '(recording on) '}--log {DEMO_LOG}")
    print(f"CPU  python -c pass (the floor)         {_ms(cpu['pass'])}")
    print(f"CPU  python -c \"import textual.app\"    {_ms(cpu['textual'])}")
    floor, textual = statistics.median(cpu["pass"]) * 1000, statistics.median(cpu["textual"]) * 1000
    for label in checkouts:
        _report(label, {"help": help_cpu[label]}, help_wall[label], app[label], floor, textual)
    return 0 if all(app.values()) or not have_tmux else 1


if __name__ == "__main__":
    raise SystemExit(main())
