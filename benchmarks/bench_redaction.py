"""Recording cost of secret redaction: lines/s of :func:`specdash.text.redaction.redact_text` over a generated
SGLang log (benchmarks/bench_log_generate.py: start-up, decode/prefill lines, access lines, warnings, a
traceback), and how many lines it changed (0 expected: an ordinary log holds no secret).

Usage: ``python benchmarks/bench_redaction.py [N_LINES]`` (default 200 000). Prints lines/s and µs/line.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from specdash.text.redaction import redact_text


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "server.log"
        subprocess.run([sys.executable, str(Path(__file__).with_name("bench_log_generate.py")), str(path), str(n)],
                       check=True)
        lines = path.read_text(errors="replace").splitlines()
    start = time.process_time()
    changed = sum(1 for line in lines if redact_text(line) != line)
    elapsed = time.process_time() - start
    print(f"{len(lines)} lines, {changed} changed, {elapsed:.3f} s CPU: {len(lines) / elapsed:,.0f} lines/s, "
          f"{elapsed / len(lines) * 1e6:.2f} us/line")


if __name__ == "__main__":
    main()
