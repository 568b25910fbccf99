"""LocalHost: streams end with their reader — when the iterator is closed and when specdash itself dies."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

from support.guard import guard

from specdash.hosts.base import ConnState
from specdash.hosts.local import LocalHost


async def _running(pattern: str) -> list[str]:
    result = await LocalHost().run("ps -ww -eo pid=,args=")
    return [line for line in result.stdout.splitlines() if pattern in line and "ps -ww -eo" not in line]


async def _wait_gone(pattern: str, timeout_s: float = 5) -> None:
    deadline = time.monotonic() + guard(timeout_s)
    while await _running(pattern):
        assert time.monotonic() < deadline, await _running(pattern)
        await asyncio.sleep(0.1)


async def test_local_host_is_connected_and_streams_lines():
    host = LocalHost()
    assert host.status.state is ConnState.CONNECTED
    await host.wait_connected(timeout_s=1)
    lines = [line async for line in host.stream("printf 'one\\ntwo\\n'; printf three; echo err >&2")]
    assert lines == [b"one\n", b"two\n", b"three"]


async def test_closing_a_stream_kills_its_process_group():
    marker = f"sleep 41{os.getpid() % 1000}"
    host = LocalHost()
    stream = host.stream(f"echo go; {marker} & {marker}")
    assert await stream.__anext__() == b"go\n"
    assert len(await _running(marker)) >= 2
    await stream.aclose()
    await _wait_gone(marker)


async def test_stream_does_not_outlive_a_killed_specdash(tmp_path):
    """SIGKILL skips every cleanup; the stream's command must still end (its stdin pipe closes)."""
    marker = f"sleep 42{os.getpid() % 1000}"
    script = (
        "import asyncio\n"
        "from specdash.hosts.local import LocalHost\n"
        "async def main():\n"
        f"    async for line in LocalHost().stream('echo ready; {marker}'):\n"
        "        print(line.decode().strip(), flush=True)\n"
        "asyncio.run(main())\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert child.stdout.readline().strip() == b"ready"
        assert await _running(marker)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=5)
        await _wait_gone(marker)
    finally:
        if child.poll() is None:
            child.kill()
