"""Opening a big log: `connect local --log FILE` in a headless app (160x48) with recording on (the default), timed
from the app's start to (1) the file's last line in the log view, (2) the history above it fully analysed; with
the CPU time used until then and the process's peak RSS. The app is the real one (SpecdashApp on a LocalHost);
the log comes from benchmarks/bench_log_generate.py (kept in /tmp, deleted afterwards unless --keep).

Usage: ``python benchmarks/bench_tail_first.py [N_LINES ...]`` (default 1000000). Anchors (issue figures, same
machine class): lnav shows the last line of a 1 000 000-line log in 0.45 s; the goal is <= 1 s, full analysis
<= 2 s after that, RSS <= 250 MB for 10 000 000 lines.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from specdash.app.main import SpecdashApp  # noqa: E402
from specdash.hosts.local import LocalHost  # noqa: E402
from specdash.session.recorder import Recorder  # noqa: E402


def last_line(path: Path) -> str:
    with path.open("rb") as f:
        f.seek(max(0, path.stat().st_size - 65536))
        return f.read().decode("utf-8", "replace").rstrip("\n").rsplit("\n", 1)[-1].rstrip("\r")


async def measure(log: Path, tmp: Path) -> dict[str, float]:
    want = last_line(log)[:60]
    recorder = Recorder(tmp / "session.yaml.gz", {"host": "local"})
    app = SpecdashApp(LocalHost(), log_path=str(log), gpu_interval_s=3600)
    app.recorder = recorder
    t0, c0 = time.perf_counter(), time.process_time()
    out: dict[str, float] = {}
    async with app.run_test(size=(160, 48)) as pilot:
        # the pane is looked up once: ``app.log_pane`` is a DOM query, and one per poll (100 a second) is CPU of
        # this process that the app does not spend (about 0.1 s per second of wall time once every tab is built)
        pane = app.log_pane
        assert pane is not None
        view = pane.view
        while time.perf_counter() - t0 < 3600:
            if "shown" not in out and view.row_count and want in view.text_at_row(view.row_count - 1):
                await pilot.pause()  # painted
                out["shown"], out["shown_cpu"] = time.perf_counter() - t0, time.process_time() - c0
                rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                print(f"  {log.name}: last line on screen after {out['shown']:.2f} s (CPU {out['shown_cpu']:.2f} s), "
                      f"peak RSS so far {rss:.0f} MB", flush=True)
            history = pane.history
            if "shown" in out and (history is None or history.finished):
                out["analysed"], out["analysed_cpu"] = time.perf_counter() - t0, time.process_time() - c0
                out["lines"] = pane.analyzer.lines
                out["findings"] = len(pane.analyzer.findings)
                break
            await asyncio.sleep(0.01)
    recorder.finish()
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["session_kb"] = (tmp / "session.yaml.gz").stat().st_size / 1024 if (tmp / "session.yaml.gz").exists() else 0
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("lines", nargs="*", type=int, default=[1_000_000])
    parser.add_argument("--keep", action="store_true", help="keep the generated logs in /tmp")
    args = parser.parse_args()
    for n in args.lines:
        log = Path(f"/tmp/specdash-bench-tail-{n}.log")
        if not log.exists():
            subprocess.run([sys.executable, str(Path(__file__).with_name("bench_log_generate.py")), str(log), str(n)],
                           check=True)
        # each size in a fresh process: the RSS figure is that run's peak
        if os.fork() == 0:
            with tempfile.TemporaryDirectory() as tmp:
                r = asyncio.run(measure(log, Path(tmp)))
            print(f"{n:,} lines ({log.stat().st_size / 1e6:.0f} MB), recording on: last line on screen "
                  f"{r['shown']:.2f} s (CPU {r['shown_cpu']:.2f} s; lnav 0.45 s, goal <= 1 s); history analysed "
                  f"{r['analysed'] - r['shown']:.2f} s after that (CPU {r['analysed_cpu'] - r['shown_cpu']:.2f} s; "
                  f"goal <= 2 s), {int(r['lines']):,} lines, {int(r['findings'])} findings; peak RSS "
                  f"{r['rss_mb']:.0f} MB (goal <= 250 MB at 10M lines); session file {r['session_kb']:.0f} KB",
                  flush=True)
            os._exit(0)
        os.wait()
        if not args.keep:
            log.unlink()


if __name__ == "__main__":
    main()
