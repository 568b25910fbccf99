"""Peak memory of reading hostile session files of at most 100 MB (``read_session`` + ``replay --summary`` text),
each in a fresh child process; prints the file size, the seconds, the peak RSS (MiB) and the first problem.

Files built: a gzip decompression bomb (zeros in comment lines, 100 MB compressed), a plain file of tiny documents
(the most documents per byte), one document holding one huge log batch, nested-alias bombs, numbers out of range,
and an ordinary busy recording of the same size for comparison.

Usage: ``python benchmarks/bench_session_worst.py [SIZE_MB]`` (default 100).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

CHILD = r"""
import resource, sys, time
from specdash.session.reader import SessionError, read_session
from specdash.session.summary import summary_lines
start = time.perf_counter()
try:
    log = read_session(sys.argv[1])
    lines = summary_lines(log)
    first = log.problems[0] if log.problems else "-"
    result = f"{len(log.events)} events; {first}"
except SessionError as exc:
    result = f"SessionError: {exc}"
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{time.perf_counter() - start:.1f}\t{rss:.0f}\t{result[:150]}")
"""

HEADER = '--- # size 30\n"kind": "header"\n"t": 0\n"host": "h"\n'


def _write_gzip_bomb(path: Path, size: int) -> None:
    """A header member, then one member of 64 MiB of comment lines written again and again (concatenated gzip
    members are one valid stream): ``size`` bytes that expand about 1000-fold."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = comp.compress((b"#" + b"0" * 1022 + b"\n") * (64 * 1024)) + comp.flush()
    with open(path, "wb") as f:
        f.write(gzip.compress(HEADER.encode()))
        while f.tell() < size - len(member):
            f.write(member)


def _write_tiny_docs(path: Path, size: int) -> None:
    doc = "---\n{kind: marker, t: 1}\n"
    with open(path, "w") as f:
        f.write(HEADER)
        chunk = doc * 10000
        while f.tell() < size - len(chunk):
            f.write(chunk)


def _write_huge_log_doc(path: Path, size: int) -> None:
    line = "[2026-11-30 09:12:13 TP0] Decode batch, #running-req: 12, #token: 4321, accept len: 2.31"
    n = (size - 200) // (len(json.dumps(line)) + 16)  # "  [i, ...],\n" with i up to 7 digits
    with open(path, "w") as f:
        f.write(HEADER + '--- \n"kind": "log"\n"t": 1\n"lines": [\n')
        f.write(",\n".join(f"  [{i}, {json.dumps(line)}]" for i in range(n)))
        f.write("]\n")


def _write_alias_bombs(path: Path, size: int) -> None:
    bomb = ("---\nkind: marker\nt: 1\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
            "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ntext: *d\n")
    ok = "---\nkind: marker\nt: 1\nlevel: &l warning\ntext: [*l, *l, *l, *l, *l, *l, *l, *l, *l, *l, *l, *l]\n"
    with open(path, "w") as f:
        f.write(HEADER)
        chunk = (bomb + ok) * 2000
        while f.tell() < size - len(chunk):
            f.write(chunk)


def _write_out_of_range(path: Path, size: int) -> None:
    with open(path, "w") as f:
        f.write(HEADER)
        chunk = "---\nkind: marker\nt: 1e309\ntext: x\n" * 10000
        while f.tell() < size - len(chunk):
            f.write(chunk)


def _write_busy(path: Path, size: int) -> None:
    from specdash.session.recorder import Recorder

    t = [0.0]
    rec = Recorder(path, {"host": "h"}, timer=False, clock=lambda: t[0])
    line = "[2026-11-30 09:12:13 TP0] Decode batch, #running-req: 12, #token: 4321, accept len: 2.31, gen throughput"
    i = 0
    while i % 1000 or path.stat().st_size < size - 2_000_000:
        t[0] += 0.05
        rec.record("log", lines=[[i * 120, line]], source="/var/log/sglang/server.log")
        if i % 20 == 0:
            rec.record("metric", accept_length=2.3, gen_throughput=120.0)
        i += 1
        if i % 200 == 0:
            rec.flush()
    rec.close()


def main() -> None:
    size = int(float(sys.argv[1] if len(sys.argv) > 1 else 100) * 1_000_000)
    builders = [("gzip bomb (.gz)", "bomb.yaml.gz", _write_gzip_bomb), ("tiny documents", "tiny.yaml", _write_tiny_docs),
                ("one huge log document", "huge.yaml", _write_huge_log_doc),
                ("alias bombs", "alias.yaml", _write_alias_bombs), ("t: 1e309 everywhere", "nan.yaml", _write_out_of_range),
                ("busy recording (normal)", "busy.yaml", _write_busy)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    with tempfile.TemporaryDirectory() as tmp:
        for label, name, build in builders:
            path = Path(tmp) / name
            build(path, size)
            out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, env=env)
            secs, rss, result = (out.stdout.strip().split("\t") + ["?", "?", out.stderr[-200:]])[:3]
            print(f"{label:<26} {path.stat().st_size / 1e6:6.1f} MB  {secs:>5} s  peak RSS {rss:>5} MiB  {result}")
            path.unlink()


if __name__ == "__main__":
    main()
