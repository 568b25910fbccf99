"""CPU cost of recording a busy log: lines/s through :meth:`Recorder.record` (redaction, JSON, gzip) for a
generated SGLang log (benchmarks/bench_log_generate.py), fed in batches of 50 lines as the log pane receives them.

Usage: ``python benchmarks/bench_recording_cost.py [N_LINES]`` (default 200 000). Prints lines/s of CPU time.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from specdash.session.recorder import Recorder


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        subprocess.run([sys.executable, str(Path(__file__).with_name("bench_log_generate.py")), str(log), str(n)],
                       check=True)
        lines = log.read_text(errors="replace").splitlines()
        t = [0.0]
        rec = Recorder(Path(tmp) / "s.yaml.gz", {"host": "h"}, timer=False, clock=lambda: t[0])
        start = time.process_time()
        offset = 0
        for i in range(0, len(lines), 50):
            batch = []
            for line in lines[i:i + 50]:
                batch.append([offset, line])
                offset += len(line) + 1
            t[0] += 0.05
            rec.record("log", lines=batch, source=str(log))
            if i % 1000 == 0:
                rec.flush()
        rec.close()
        elapsed = time.process_time() - start
        size = (Path(tmp) / "s.yaml.gz").stat().st_size
    rate = len(lines) / elapsed
    print(f"{len(lines)} lines recorded in {elapsed:.2f} s CPU: {rate:,.0f} lines/s; file {size / 1e6:.1f} MB; "
          f"on a 20 000 lines/s stream recording takes {100 * 20_000 / rate:.1f} % of one CPU (goal: <= 20 % "
          f"extra; the log pane itself takes ~26 % at that rate, benchmarks/bench_log_pane.py)")


if __name__ == "__main__":
    main()
