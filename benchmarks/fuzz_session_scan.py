"""Fuzz counts for the session reader (`read_session` + the `replay --summary` text) and `specdash scan`: random
bytes (plain and behind a gzip magic), damaged copies of a real recording (bytes overwritten, cut short; plain and
.gz) and random YAML-ish text. Prints how many inputs ended in a result, a clear error, or a traceback (the goal:
0 tracebacks). Usage: ``python benchmarks/fuzz_session_scan.py [N_PER_KIND]`` (default 2000).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import random
import sys
import tempfile
import traceback
from collections import Counter
from pathlib import Path

from specdash.cli import main as cli_main
from specdash.session.reader import SessionError, read_session
from specdash.session.recorder import Recorder
from specdash.session.summary import summary_lines


def _seed(folder: Path, gz: bool) -> bytes:
    path = folder / ("seed.yaml.gz" if gz else "seed.yaml")
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        for i in range(60):
            rec.record("log", t=i, lines=[[i * 90, f"[2026-11-30 09:12:{i % 60:02d} TP0] Decode batch, #token: {i}"]],
                       source="/var/log/sglang/server.log")
            rec.record("marker", t=i + 0.5, level="warning", text=f"marker {i}")
            rec.record("metric", t=i + 0.6, accept_length=2.0 + i / 100)
            rec.flush()
    return path.read_bytes()


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rng = random.Random(1)
    counts: Counter[str] = Counter()
    tracebacks: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        seeds = {False: _seed(folder, False), True: _seed(folder, True)}
        path = folder / "f.yaml"
        for i in range(n * 4):
            kind = ("random bytes", "damaged recording", "damaged .gz recording", "random YAML text")[i % 4]
            if kind == "random bytes":
                data = (b"\x1f\x8b" if rng.random() < 0.5 else b"") + rng.randbytes(rng.randint(0, 5000))
            elif kind == "random YAML text":
                alphabet = ["---\n", "kind: ", "marker", "t: ", "1e309", "&a ", "*a", "[", "]", "{", "}", ": ",
                            "\n", "'", '"', "\\x1b", "- ", "#", "--- # size 9\n", "log", "lines: ", ".nan"]
                data = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 400))).encode()
                if rng.random() < 0.3:
                    data = gzip.compress(data)
            else:
                data = bytearray(seeds[kind.endswith(".gz recording")])
                for _ in range(rng.randint(1, 8)):
                    at = rng.randrange(len(data))
                    data[at:at + rng.randint(1, 60)] = rng.randbytes(rng.randint(1, 60))
                data = bytes(data[: rng.randint(1, len(data))]) if rng.random() < 0.3 else bytes(data)
            path.write_bytes(data)
            try:
                try:
                    summary_lines(read_session(path))
                    counts[f"{kind}: read"] += 1
                except SessionError:
                    counts[f"{kind}: clear SessionError"] += 1
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    status = cli_main(["scan", str(path)])
                counts[f"scan exit {status}"] += 1
            except Exception:  # noqa: BLE001 - what the fuzz is looking for
                counts["TRACEBACK"] += 1
                tracebacks.append(traceback.format_exc())
    for key in sorted(counts):
        print(f"{counts[key]:>7}  {key}")
    print(f"{n * 4} inputs, {counts['TRACEBACK']} tracebacks")
    for tb in tracebacks[:3]:
        print(tb)


if __name__ == "__main__":
    main()
