"""``specdash scan --json`` throughput, CPU and peak RSS on a generated SGLang log, beside its anchors.

Usage: ``python benchmarks/bench_scan.py [LOG] [--lines N] [--rounds R] [--per-line]``. Without LOG a log of N lines
(default 1 000 000) is generated with ``bench_log_generate.py`` into a temporary directory and deleted afterwards.
Each round runs, interleaved, the bulk reader (the default of ``specdash scan``), the per-line reader with
``--per-line``, and the anchors found on PATH: ``lnav`` counting the file's lines (when installed), ``grep -c ''``
and ``wc -l``. Figures are CPU seconds (user + system of the child, from ``wait4``) and the child's peak RSS;
the median over the rounds is printed. Targets: >= 1 000 000 lines/s CPU, <= 2x lnav's count time, <= 100 MB RSS.

``--floors`` adds what the bulk reader cannot go below in this interpreter, each a child process on the same file:
the interpreter with the scan command imported; that plus reading the file in the bulk reader's blocks; plus the
bulk reader's one ``findall`` per block (the figures of every regular line extracted, nothing analysed); plus a loop
that only unpacks each match. Whatever the analysis costs comes on top of the last one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_FLOOR_IMPORT = "import specdash.commands.scan"
_FLOOR_READ = _FLOOR_IMPORT + (
    "\nimport sys\nfrom specdash.logs.bulk import BLOCK_BYTES, _BULK, read_blocks\nrest = b''\n"
    "with open(sys.argv[1], 'rb') as fh:\n    for block in read_blocks(fh, BLOCK_BYTES):\n"
    "        cut = block.rfind(b'\\n') + 1\n        data, rest = rest + block[:cut], block[cut:]\n")
_FLOOR_FINDALL = _FLOOR_READ + "        rows = _BULK.findall(data)\n"
_FLOOR_LOOP = _FLOOR_FINDALL + "        for row in rows:\n            t, *figures = row\n"
_PER_LINE = ("import sys, specdash.commands.scan as s; s.PER_LINE = True; from specdash.cli import main; "
             "sys.exit(main(sys.argv[1:]))")


def _run(argv: list[str]) -> tuple[float, float]:
    """(CPU seconds, peak RSS MB) of one run of ``argv`` (its output is discarded)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", nargs="?", help="an SGLang log (default: generate one)")
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--per-line", action="store_true", help="also time the per-line reader")
    ap.add_argument("--floors", action="store_true", help="also time the bulk reader's floors (see above)")
    args = ap.parse_args(argv)
    tmp = None
    if args.log:
        log = Path(args.log)
    else:
        tmp = tempfile.mkdtemp(prefix="specdash-bench-scan-")
        log = Path(tmp) / "server.log"
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_log_generate.py"), str(log),
                        str(args.lines)], check=True)
    try:
        with log.open("rb") as fh:
            lines = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))
        commands = {"specdash scan --json (bulk)": [sys.executable, "-m", "specdash", "scan", "--json", str(log)]}
        if args.per_line:
            commands["specdash scan --json (per-line)"] = [sys.executable, "-c", _PER_LINE, "scan", "--json",
                                                           str(log)]
        if args.floors:
            for name, code in (("floor: import", _FLOOR_IMPORT), ("floor: + read blocks", _FLOOR_READ),
                               ("floor: + findall (extract)", _FLOOR_FINDALL), ("floor: + unpack each", _FLOOR_LOOP)):
                commands[name] = [sys.executable, "-c", code, str(log)]
        if shutil.which("lnav"):
            commands["lnav (count lines)"] = ["lnav", "-n", "-c", ";SELECT count(*) FROM all_logs", str(log)]
        commands["grep -c ''"] = ["grep", "-c", "", str(log)]
        commands["wc -l"] = ["wc", "-l", str(log)]
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                results[name].append(_run(command))
        print(f"log: {log} ({lines} lines, {log.stat().st_size / 1e6:.0f} MB); median of {args.rounds} rounds")
        print(f"{'what':<34} {'CPU s':>8} {'lines/s':>12} {'peak RSS MB':>12}")
        for name, runs in results.items():
            cpu = statistics.median(r[0] for r in runs)
            rss = max(r[1] for r in runs)
            print(f"{name:<34} {cpu:>8.3f} {lines / cpu if cpu else float('inf'):>12,.0f} {rss:>12.1f}")
        bulk = statistics.median(r[0] for r in results["specdash scan --json (bulk)"])
        lnav = results.get("lnav (count lines)")
        print(f"target: >= 1,000,000 lines/s CPU: {'met' if lines / bulk >= 1e6 else 'NOT met'} "
              f"({lines / bulk:,.0f}); peak RSS <= 100 MB: "
              f"{'met' if max(r[1] for r in results['specdash scan --json (bulk)']) <= 100 else 'NOT met'}; "
              + (f"<= 2x lnav: {'met' if bulk <= 2 * statistics.median(r[0] for r in lnav) else 'NOT met'}"
                 if lnav else "lnav not installed: no lnav anchor"))
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
