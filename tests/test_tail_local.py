"""LogFollower on this machine (LocalHost): waiting for the file, batching, rotation, odd bytes, closing."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from support.guard import guard
from support.tail import collect_until as _collect_until
from support.tail import lines_of as _lines

from specdash.hosts.local import LocalHost
from specdash.hosts.tail import LogFollower, TailLines, TailMarker, TailPartial

DATA = Path(__file__).parent / "data" / "sglang-log-formats.txt"

LINES = [line for line in DATA.read_bytes().split(b"\n") if line and not line.startswith(b"#")]


async def test_waits_for_a_missing_file_then_follows_it(tmp_path):
    host = LocalHost()
    await host.connect()
    log = tmp_path / "later.log"
    follower = LogFollower(host, str(log), poll_interval_s=0.05)

    async def create_later() -> None:
        await asyncio.sleep(0.3)
        log.write_bytes(LINES[0] + b"\n" + LINES[1] + b"\n")

    creator = asyncio.create_task(create_later())
    events = await _collect_until(follower, lambda evs: len(_lines(evs)) >= 2)
    await follower.aclose()
    await creator
    assert isinstance(events[0], TailMarker) and events[0].text == "file does not exist yet: waiting"
    assert _lines(events) == LINES[:2]
    assert events[-1].end_offset == len(LINES[0]) + len(LINES[1]) + 2


async def test_big_backlog_comes_in_batches_of_at_most_1000_lines_with_exact_offsets(tmp_path):
    host = LocalHost()
    await host.connect()
    log = tmp_path / "big.log"
    written = [LINES[i % len(LINES)] for i in range(5000)]
    log.write_bytes(b"".join(line + b"\n" for line in written))
    follower = LogFollower(host, str(log))
    events = await _collect_until(follower, lambda evs: len(_lines(evs)) >= 5000)
    await follower.aclose()
    batches = [ev for ev in events if isinstance(ev, TailLines)]
    assert all(1 <= len(batch.lines) <= 1000 for batch in batches)
    assert len(batches) < 50  # batched, not one event per frame or per line
    assert _lines(events) == written
    position = 0
    for batch in batches:
        position += sum(len(line) + 1 for line in batch.lines)
        assert batch.end_offset == position
    assert position == log.stat().st_size


async def test_rotation_reads_the_old_file_to_its_end_then_the_new_one(tmp_path):
    host = LocalHost()
    await host.connect()
    log = tmp_path / "server.log"
    log.write_bytes(LINES[0] + b"\n")
    follower = LogFollower(host, str(log), poll_interval_s=0.05)
    got_first = asyncio.Event()

    async def rotate() -> None:
        await got_first.wait()
        os.rename(log, tmp_path / "server.log.1")
        with open(tmp_path / "server.log.1", "ab") as old:
            old.write(LINES[1] + b"\n")  # written by the server just before it reopened its log
        log.write_bytes(LINES[2] + b"\n")

    rotator = asyncio.create_task(rotate())

    def done(events: list) -> bool:
        if _lines(events):
            got_first.set()
        return len(_lines(events)) >= 3

    events = await _collect_until(follower, done)
    await follower.aclose()
    await rotator
    assert _lines(events) == LINES[:3]
    kinds = [ev.text if isinstance(ev, TailMarker) else ev.lines for ev in events]
    assert kinds == [[LINES[0]], [LINES[1]], "file rotated: following the new file from the start", [LINES[2]]]
    assert events[-1].end_offset == len(LINES[2]) + 1


async def test_any_bytes_pass_through_unchanged(tmp_path):
    host = LocalHost()
    await host.connect()
    log = tmp_path / "binary.log"
    odd = [b"\x00\xff\xfe not utf-8 \x1b[31mred\x1b[0m", b"100%|\xe2\x96\x88\xe2\x96\x88| 23/23\r", b""]
    log.write_bytes(b"".join(line + b"\n" for line in odd))
    follower = LogFollower(host, str(log))
    events = await _collect_until(follower, lambda evs: len(_lines(evs)) >= 3)
    await follower.aclose()
    assert _lines(events) == odd


async def test_aclose_ends_the_iteration_of_a_waiting_consumer(tmp_path):
    host = LocalHost()
    await host.connect()
    log = tmp_path / "idle.log"
    log.write_bytes(b"")
    follower = LogFollower(host, str(log))
    consumer = asyncio.create_task(_collect_until(follower, lambda evs: False, timeout_s=30))
    await asyncio.sleep(0.3)
    started = time.monotonic()
    await follower.aclose()
    assert await asyncio.wait_for(consumer, guard(5)) == []
    assert time.monotonic() - started < 5
    result = await host.run("ps -ww -eo args=")
    assert str(log) not in result.stdout.replace("ps -ww -eo args=", "")


async def test_recent_start_offset_starts_at_a_whole_line_inside_the_window(tmp_path):
    from specdash.hosts.tail import recent_start_offset

    host = LocalHost()
    log = tmp_path / "long.log"
    written = [LINES[i % len(LINES)] for i in range(400)]
    log.write_bytes(b"".join(line + b"\n" for line in written))
    size = log.stat().st_size
    assert await recent_start_offset(host, str(log), window_bytes=size + 10) == 0
    assert await recent_start_offset(host, str(tmp_path / "missing.log")) == 0
    offset = await recent_start_offset(host, str(log), window_bytes=4096)
    assert size - 4096 <= offset < size
    data = log.read_bytes()
    assert data[offset - 1 : offset] == b"\n"  # a line starts there
    follower = LogFollower(host, str(log), start_offset=offset)
    events = await _collect_until(follower, lambda evs: bool(_lines(evs)))
    await follower.aclose()
    expected = data[offset:].split(b"\n")[:-1]
    assert _lines(events) == expected and 1 < len(expected) < 400


async def test_a_bar_updating_in_place_is_announced_before_its_newline(tmp_path):
    host = LocalHost()
    await host.connect()
    log = tmp_path / "capture.log"
    begin = b"[2025-08-12 16:02:26 TP0] Capture cuda graph begin."
    log.write_bytes(begin + b"\n" + b"Capturing batches (bs=48):  10%|# | 1/10\rCapturing batches (bs=44):  20%|## | 2/10")
    follower = LogFollower(host, str(log), poll_interval_s=0.05)
    events = await _collect_until(follower, lambda evs: any(isinstance(e, TailPartial) for e in evs))
    partial = next(e for e in events if isinstance(e, TailPartial))
    assert partial.text.endswith(b"20%|## | 2/10") and _lines(events) == [begin]
    assert follower.offset == len(begin) + 1  # the unfinished line does not move the resume point
    with log.open("ab") as f:
        f.write(b"\rCapturing batches (bs=40):  30%|### | 3/10")
    more = await _collect_until(follower, lambda evs: any(isinstance(e, TailPartial) for e in evs))
    assert [e.text.rsplit(b"\r", 1)[-1] for e in more if isinstance(e, TailPartial)] == \
        [b"Capturing batches (bs=40):  30%|### | 3/10"]
    with log.open("ab") as f:
        f.write(b"\rCapturing batches (bs=1): 100%|##########| 10/10\n")
    done = await _collect_until(follower, lambda evs: bool(_lines(evs)))
    await follower.aclose()
    assert _lines(done)[0].endswith(b"100%|##########| 10/10") and _lines(done)[0].count(b"\r") == 3
    assert not [e for e in done if isinstance(e, TailPartial)]


async def test_each_line_carries_its_start_offset_also_after_a_line_cut_at_the_limit(tmp_path):
    """A line still growing past MAX_LINE_BYTES is delivered cut, without a newline: counting back from the end
    with ``len + 1`` bytes per line would put every earlier line of the batch one byte off."""
    from specdash.hosts.tail import MAX_LINE_BYTES

    host = LocalHost()
    await host.connect()
    log = tmp_path / "long.log"
    head = b"ab\n" + b"x" * (MAX_LINE_BYTES + 10)  # the long line has no newline yet
    log.write_bytes(head)
    follower = LogFollower(host, str(log), poll_interval_s=0.05)
    events = await _collect_until(follower, lambda evs: sum(len(line) for line in _lines(evs)) >= MAX_LINE_BYTES)
    with log.open("ab") as out:
        out.write(b"\nc\n")
    events += await _collect_until(follower, lambda evs: b"c" in _lines(evs))
    await follower.aclose()
    content = log.read_bytes()
    batches = [ev for ev in events if isinstance(ev, TailLines)]
    pairs = [(offset, line) for ev in batches for offset, line in zip(ev.offsets, ev.lines, strict=False)]
    assert all(len(ev.offsets) == len(ev.lines) for ev in batches)
    assert any(len(line) >= MAX_LINE_BYTES for _, line in pairs)  # the cut happened
    for offset, line in pairs:
        assert content[offset:offset + len(line)] == line  # each offset is where its bytes are in the file
    assert pairs[0] == (0, b"ab") and pairs[-1] == (len(content) - 2, b"c")
