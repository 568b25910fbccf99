"""Host-layer figures against a throwaway local sshd (tests/sshd.py): connect time, dead-link detection with
the default keepalive, tail throughput over SSH. Prints figures; run from the repo root."""
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path("tests").resolve()))
from sshd import SshdServer

from specdash.hosts.base import ConnState
from specdash.hosts.tail import LogFollower, TailLines


async def main():
    server = SshdServer(Path(tempfile.mkdtemp()), Path(".").resolve())
    server.start()
    try:
        times = []
        for _ in range(5):
            host = server.make_host()
            t = time.monotonic()
            await host.connect()
            times.append(time.monotonic() - t)
            await host.close()
        print(f"connect (TCP+kex+auth, loopback): median {statistics.median(times)*1000:.0f} ms, max {max(times)*1000:.0f} ms")
        host = server.make_host()
        await host.connect()
        t = time.monotonic()
        [await host.run("true") for _ in range(10)]
        print(f"run('true') round trip: {(time.monotonic()-t)*100:.0f} ms each")
        # throughput: 200k real-ish lines already in the file
        line = b"[2025-08-12 16:05:11] Decode batch. #running-req: 16, #token: 9816, token usage: 0.02, accept len: 3.57, gen throughput (token/s): 1843.06, #queue-req: 0, "
        log = server.root / "big.log"
        log.write_bytes((line + b"\n") * 200_000)
        follower = LogFollower(host, str(log))
        n = 0
        t = time.monotonic()
        async for ev in follower:
            if isinstance(ev, TailLines):
                n += len(ev.lines)
                if n >= 200_000:
                    break
        dt = time.monotonic() - t
        await follower.aclose()
        print(f"tail over SSH: {n/dt:,.0f} lines/s ({log.stat().st_size/dt/1e6:.1f} MB/s) for {n} lines of {len(line)+1} B")
        # latency of a new line
        lat = []
        log2 = server.root / "lat.log"
        log2.write_bytes(b"")
        follower = LogFollower(host, str(log2))
        it = follower.__aiter__()
        for _i in range(10):
            await asyncio.sleep(0.13)
            with open(log2, "ab") as f:
                f.write(b"x\n")
                t = time.monotonic()
            ev = await it.__anext__()
            while not isinstance(ev, TailLines):
                ev = await it.__anext__()
            lat.append(time.monotonic() - t)
        await follower.aclose()
        print(f"new-line latency (poll 0.2 s + 50 ms batch): median {statistics.median(lat)*1000:.0f} ms, max {max(lat)*1000:.0f} ms")
        # keepalive with defaults (3 s, count_max 2)
        frozen = server.freeze_sessions()
        server.kill(sessions=False)
        t = time.monotonic()
        while host.status.state is ConnState.CONNECTED:
            await asyncio.sleep(0.05)
        print(f"dead link noticed after {time.monotonic()-t:.1f} s (keepalive 3 s x (2+1)); state now: {host.status.describe()}")
        server.kill_pids(frozen)
        await host.close()
    finally:
        server.kill()

asyncio.run(main())
