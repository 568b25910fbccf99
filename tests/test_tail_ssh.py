"""LogFollower over real SSH (tests/sshd.py): the log keeps growing while sshd dies and comes back, and every
line arrives exactly once, in order; the remote follower never outlives its channel."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from support.guard import guard

from specdash.hosts.base import ConnState
from specdash.hosts.local import LocalHost
from specdash.hosts.tail import LogFollower, TailLines, TailMarker

pytestmark = pytest.mark.ssh

DATA = Path(__file__).parent / "data" / "sglang-log-formats.txt"


def real_log_lines() -> list[bytes]:
    """The real SGLang log lines of the fixture (annotation lines starting with '#' dropped)."""
    return [line for line in DATA.read_bytes().split(b"\n") if line and not line.startswith(b"#")]


async def _follower_processes(path: str) -> list[str]:
    result = await LocalHost().run("ps -ww -eo pid=,args=")
    return [line for line in result.stdout.splitlines() if path in line and "ps -ww -eo" not in line]


async def _wait_for(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + guard(timeout_s)
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await asyncio.sleep(0.02)


class Collector:
    """Consumes a follower into ``events`` (TailLines and TailMarker in arrival order)."""

    def __init__(self, follower: LogFollower) -> None:
        self.follower, self.events = follower, []
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        async for event in self.follower:
            self.events.append(event)

    @property
    def lines(self) -> list[bytes]:
        return [line for ev in self.events if isinstance(ev, TailLines) for line in ev.lines]

    @property
    def markers(self) -> list[str]:
        return [ev.text for ev in self.events if isinstance(ev, TailMarker)]

    async def close(self) -> None:
        await self.follower.aclose()
        await asyncio.wait_for(self.task, guard(5))


@pytest.mark.parametrize("how", ["sshd killed", "link frozen"])
async def test_tail_survives_sshd_death_with_every_line_exactly_once(sshd, tmp_path, how):
    """``sshd killed``: listener and connection processes SIGKILLed (TCP closes at once). ``link frozen``: the
    connection processes SIGSTOPped and the listener killed — the link is open but dead, only keepalive notices.
    Either way the writer keeps appending real SGLang log lines while the link is down; after sshd restarts
    the follower resumes at the end of the last complete line it had."""
    source = real_log_lines()
    log = tmp_path / "server.log"
    written: list[bytes] = []

    def append(count: int) -> None:
        with open(log, "ab") as handle:
            for _ in range(count):
                line = source[len(written) % len(source)]
                handle.write(line + b"\n")
                written.append(line)

    append(50)
    host = sshd.make_host(keepalive_interval_s=0.5, keepalive_count_max=2,
                          reconnect_initial_s=0.2, reconnect_max_s=0.5)
    await host.connect()
    collector = Collector(LogFollower(host, str(log), poll_interval_s=0.05))
    stop_writing = asyncio.Event()

    async def writer() -> None:
        while not stop_writing.is_set():
            append(7)
            await asyncio.sleep(0.01)

    writer_task = asyncio.get_running_loop().create_task(writer())
    frozen: list[int] = []
    try:
        await _wait_for(lambda: len(collector.lines) >= 300, 10, "the first lines")
        if how == "sshd killed":
            sshd.kill()
        else:
            frozen = sshd.freeze_sessions()
            sshd.kill(sessions=False)
        await _wait_for(lambda: host.status.state is not ConnState.CONNECTED, 5, "the drop to be noticed")
        written_at_drop = len(written)
        await asyncio.sleep(0.5)  # the log keeps growing while nobody can connect
        sshd.start()
        await host.wait_connected(timeout_s=10)
        await asyncio.sleep(0.3)
        stop_writing.set()
        await writer_task
        assert len(written) > written_at_drop + 50  # lines really were written during the outage
        await _wait_for(lambda: len(collector.lines) >= len(written), 10, "the follower to catch up")
        await asyncio.sleep(0.3)  # nothing more may arrive: no duplicates trailing in
        assert collector.lines == written
        assert "connection lost: reconnecting" in collector.markers
        resumed = [text for text in collector.markers if text.startswith("reconnected at offset ")]
        assert len(resumed) == 1
        # the resume offset is exactly the end of the last line delivered before the drop
        before: list[bytes] = []
        for event in collector.events:
            if isinstance(event, TailMarker) and event.text.startswith("reconnected"):
                break
            if isinstance(event, TailLines):
                before.extend(event.lines)
        assert int(resumed[0].rsplit(" ", 1)[1]) == sum(len(line) + 1 for line in before)
        assert collector.events[-1].end_offset == log.stat().st_size
    finally:
        stop_writing.set()
        sshd.kill_pids(frozen)
        await collector.close()
        await host.close()
    # the followers of the dead connection and of the live one are gone too
    await _wait_for_no_followers(str(log))


async def _wait_for_no_followers(path: str) -> None:
    deadline = time.monotonic() + 5
    while await _follower_processes(path):
        if time.monotonic() > deadline:
            raise AssertionError(f"remote follower still running: {await _follower_processes(path)}")
        await asyncio.sleep(0.1)


async def test_remote_follower_is_gone_once_the_stream_is_closed(sshd, tmp_path):
    log = tmp_path / "quiet.log"
    log.write_bytes(b"".join(line + b"\n" for line in real_log_lines()[:20]))
    host = sshd.make_host()
    await host.connect()
    try:
        follower = LogFollower(host, str(log))
        first = await follower.__anext__()
        assert isinstance(first, TailLines) and len(first.lines) == 20
        assert await _follower_processes(str(log))  # it runs (and would idle forever on a quiet log)
        await follower.aclose()
        await _wait_for_no_followers(str(log))
    finally:
        await host.close()


async def test_truncation_over_ssh_gives_a_marker_and_the_new_content(sshd, tmp_path):
    lines = real_log_lines()
    log = tmp_path / "trunc.log"
    log.write_bytes(b"".join(line + b"\n" for line in lines[:30]))
    host = sshd.make_host()
    await host.connect()
    collector = Collector(LogFollower(host, str(log), poll_interval_s=0.05))
    try:
        await _wait_for(lambda: len(collector.lines) == 30, 10, "the first 30 lines")
        log.write_bytes(lines[40] + b"\n")  # truncated and rewritten, shorter than before
        await _wait_for(lambda: len(collector.lines) == 31, 10, "the line after truncation")
        assert collector.lines[-1] == lines[40]
        assert any(text.startswith("log truncated") for text in collector.markers)
        marker_index = next(i for i, ev in enumerate(collector.events) if isinstance(ev, TailMarker))
        assert isinstance(collector.events[marker_index + 1], TailLines)
        assert collector.events[-1].end_offset == len(lines[40]) + 1
    finally:
        await collector.close()
        await host.close()


async def test_follow_from_the_current_end_shows_only_new_lines(sshd, tmp_path):
    lines = real_log_lines()
    log = tmp_path / "tail-from-end.log"
    log.write_bytes(b"".join(line + b"\n" for line in lines[:10]))
    host = sshd.make_host()
    await host.connect()
    try:
        start = await host.file_size(str(log))
        collector = Collector(LogFollower(host, str(log), start_offset=start, poll_interval_s=0.05))
        await asyncio.sleep(0.3)
        with open(log, "ab") as handle:
            handle.write(lines[10] + b"\n" + lines[11][:20])  # one complete line and one still being written
        await _wait_for(lambda: len(collector.lines) == 1, 10, "the new line")
        await asyncio.sleep(0.3)
        assert collector.lines == [lines[10]]  # the partial line is not shown before its newline arrives
        with open(log, "ab") as handle:
            handle.write(lines[11][20:] + b"\n")
        await _wait_for(lambda: len(collector.lines) == 2, 10, "the completed line")
        assert collector.lines == [lines[10], lines[11]]
        await collector.close()
    finally:
        await host.close()


async def test_closing_the_host_ends_the_follow_with_a_stopped_marker(sshd, tmp_path):
    log = tmp_path / "closing.log"
    log.write_bytes(real_log_lines()[0] + b"\n")
    host = sshd.make_host()
    await host.connect()
    collector = Collector(LogFollower(host, str(log)))
    await _wait_for(lambda: len(collector.lines) == 1, 10, "the first line")
    await host.close()
    await asyncio.wait_for(collector.task, guard(5))  # the iteration ended by itself
    assert collector.markers == ["stopped: closed"]
    await _wait_for_no_followers(str(log))
