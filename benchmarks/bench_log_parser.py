"""Log parser throughput and memory on a generated, realistic 1M-line SGLang log, side by side with grep.

Prints, for the same file:
  * ``grep -c`` (C, the floor),
  * one precompiled regex ``match`` per line in Python (the ceiling for any Python classifier),
  * LogParser.feed_many (classification; decode/prefill figures parsed lazily),
  * LogParser + every decode/prefill record materialised,
  * LogAnalyzer (parser + findings + metrics + start-up), i.e. what the pane and ``specdash scan`` run,
  * ``specdash scan`` as a subprocess: wall time and peak RSS (it streams the file in 4 096-line batches).

Usage: ``python benchmarks/bench_log_parser.py [N_LINES]`` (default 1 000 000). The machine's load average is
printed too: on a shared machine the Python figures scale with the free CPU, so read them against the regex line.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_log_generate import generate  # noqa: E402

BATCH = 1000


def read_batches(path: Path):
    with open(path, "rb") as fh:
        batch = []
        for raw in fh:
            batch.append(raw.decode("utf-8", "replace").rstrip("\n"))
            if len(batch) >= BATCH:
                yield batch
                batch = []
        if batch:
            yield batch


def measure_scan(path: Path) -> tuple[float, float, int]:
    """Run ``specdash scan --json PATH``; return (seconds, peak RSS in MB from /proc/PID/status VmHWM, exit code)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "specdash", "scan", "--json", str(path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    hwm_kb = 0
    while proc.poll() is None:
        try:
            for row in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if row.startswith("VmHWM:"):
                    hwm_kb = max(hwm_kb, int(row.split()[1]))
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    return time.perf_counter() - t0, hwm_kb / 1024, proc.returncode


def timed(label: str, n: int, fn) -> float:
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    print(f"  {label:<52} {dt:8.2f} s  {n / dt:>12,.0f} lines/s")
    return n / dt


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    from specdash.logs.analyzer import LogAnalyzer
    from specdash.logs.parser import LineKind, LogParser

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "server.log"
        with open(path, "w", encoding="utf-8") as fh:
            for line in generate(n):
                fh.write(line + "\n")
        size_mb = path.stat().st_size / 1e6
        # the streaming scan first, while this process is still small
        scan_s, scan_hwm_mb, scan_rc = measure_scan(path)
        lines = path.read_bytes().decode("utf-8", "replace").split("\n")[:-1]
        total = len(lines)
        print(f"log: {total:,} lines, {size_mb:.0f} MB; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")

        def grep():
            subprocess.run(["grep", "-c", "Decode batch", str(path)], check=True, capture_output=True)

        rx = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)((?: [A-Z]{2}\d+)*)\] ")

        def one_regex():
            match = rx.match
            for line in lines:
                match(line)

        def classify():
            parser = LogParser()
            for i in range(0, total, BATCH):
                parser.feed_many(lines[i:i + BATCH])

        def with_records():
            parser = LogParser()
            decode, prefill = LineKind.decode, LineKind.prefill
            for i in range(0, total, BATCH):
                for p in parser.feed_many(lines[i:i + BATCH]):
                    if p.kind is decode or p.kind is prefill:
                        p.record  # noqa: B018 (materialise the figures)

        analyzer_holder = {}

        def analyze():
            analyzer = LogAnalyzer()
            for i in range(0, total, BATCH):
                analyzer.feed_many(lines[i:i + BATCH])
            analyzer_holder["a"] = analyzer

        print("throughput (same file, same machine):")
        g = timed("grep -c 'Decode batch'", total, grep)
        r = timed("one precompiled regex match per line (Python)", total, one_regex)
        c = timed("LogParser.feed_many (classify, figures lazy)", total, classify)
        timed("LogParser + decode/prefill records", total, with_records)
        a = timed("LogAnalyzer (parser+findings+metrics+startup)", total, analyze)
        lines.clear()  # free the held file before the summary (the closures above still see the name)
        print(f"  ratios: grep/parser {g / c:.1f}x, regex/parser {r / c:.1f}x, parser/analyzer {c / a:.1f}x")
        an = analyzer_holder.pop("a")
        print(f"  analyzer saw {an.metrics.total_samples:,} decode samples, {len(an.findings)} findings, "
              f"state {an.server_state}")

        print(f"specdash scan (subprocess, streaming): {scan_s:.1f} s = {total / scan_s:,.0f} lines/s, "
              f"peak RSS {scan_hwm_mb:.0f} MB (VmHWM of the scan process), exit {scan_rc}")
        print(f"this process peak RSS (whole file held in memory for the loops above): "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
