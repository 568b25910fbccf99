"""Cost of looking for benchmark output in a text: :func:`specdash.bench.imported.find_results` over a generated
SGLang log (benchmarks/bench_log_generate.py; no benchmark output in it, what ``specdash scan`` pays on a log of up
to ``scan.BENCH_MAX_LINES`` lines) and over the same log with a bench_serving block and a result table appended.

Usage: ``python benchmarks/bench_imported_results.py [N_LINES]`` (default 20 000). Prints lines/s and what was found.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from specdash.bench.imported import find_results

TABLE = """| steps | topk | draft tokens | accept length | TPOT (ms) | throughput (tok/s) |
|---|---|---|---|---|---|
| 0 | 0 | 0 | 1.00 | 11.1 | 90.0 |
| 3 | 1 | 4 | 2.90 | 7.0 | 142.1 |
"""
BLOCK = """============ Serving Benchmark Result ============
Successful requests:                     200
Benchmark duration (s):                  90.00
Total generated tokens:                  51200
Output token throughput (tok/s):         568.89
==================================================
"""


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "server.log"
        subprocess.run([sys.executable, str(Path(__file__).with_name("bench_log_generate.py")), str(path), str(n)],
                       check=True)
        text = path.read_text(errors="replace")
    for label, body in (("log only", text), ("log + bench output", text + BLOCK + "\n" + TABLE)):
        lines = body.count("\n")
        start = time.process_time()
        found = find_results(body)
        elapsed = max(time.process_time() - start, 1e-9)
        print(f"{label}: {lines} lines, {elapsed:.3f} s CPU, {lines / elapsed:,.0f} lines/s; found "
              f"{[(r.tool, r.first_line, r.last_line) for r in found]}")


if __name__ == "__main__":
    main()
