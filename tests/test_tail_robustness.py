"""LogFollower on hostile file events (LocalHost, real files): a path starting with "-", a copy-truncate whose
rewrite outgrows the old size inside one poll, a deleted log."""

from __future__ import annotations

import os

import pytest
from support.guard import guard
from support.tail import collect_until as _collect_until
from support.tail import lines_of as _lines

from specdash.hosts.local import LocalHost
from specdash.hosts.tail import LogFollower, TailMarker

pytestmark = pytest.mark.timeout(guard(60))  # a hang guard, scaled like every wait


def _line(i: int, tag: str = "a") -> bytes:
    return (f"[2026-11-30 09:{i // 60 % 60:02d}:{i % 60:02d} TP0] Decode batch {tag}, #running-req: 1, "
            f"#token: {i}, accept len: 2.{i % 10}").encode()


def _markers(events):
    return [ev.text for ev in events if isinstance(ev, TailMarker)]


async def test_log_path_starting_with_a_dash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-server.log").write_bytes(b"".join(_line(i) + b"\n" for i in range(3)))
    host = LocalHost()
    await host.connect()
    follower = LogFollower(host, "-server.log", poll_interval_s=0.05)
    events = await _collect_until(follower, lambda evs: len(_lines(evs)) >= 3)
    with open(tmp_path / "-server.log", "ab") as f:
        f.write(_line(3) + b"\n")
    events += await _collect_until(follower, lambda evs: len(_lines(evs)) >= 1)
    await follower.aclose()
    assert _lines(events) == [_line(i) for i in range(4)]
    assert not any("rotated" in m for m in _markers(events))


async def test_copy_truncate_with_a_burst_larger_than_the_old_size(tmp_path):
    log = tmp_path / "server.log"
    old = [_line(i, "old") for i in range(5)]
    log.write_bytes(b"".join(line + b"\n" for line in old))
    host = LocalHost()
    await host.connect()
    follower = LogFollower(host, str(log), poll_interval_s=0.5)
    events = await _collect_until(follower, lambda evs: len(_lines(evs)) >= 5)
    # copy-truncate, then more than the old size written before the next poll (same inode)
    new = [_line(i, "new") for i in range(20)]
    with open(log, "r+b") as f:
        f.truncate(0)
        f.write(b"".join(line + b"\n" for line in new))
    assert os.stat(log).st_size > sum(len(x) + 1 for x in old)
    events = await _collect_until(follower, lambda evs: new[-1] in _lines(evs))
    await follower.aclose()
    assert any("truncated and rewritten" in m for m in _markers(events))
    assert _lines(events) == new  # every line of the rewritten file, none lost


async def test_a_deleted_log_is_announced(tmp_path):
    log = tmp_path / "server.log"
    log.write_bytes(_line(0) + b"\n")
    host = LocalHost()
    await host.connect()
    follower = LogFollower(host, str(log), poll_interval_s=0.05)
    await _collect_until(follower, lambda evs: len(_lines(evs)) >= 1)
    log.unlink()
    events = await _collect_until(follower, lambda evs: any("deleted" in m for m in _markers(evs)))
    log.write_bytes(_line(1) + b"\n")  # it comes back: followed as a new file
    events += await _collect_until(follower, lambda evs: len(_lines(evs)) >= 1)
    await follower.aclose()
    assert "log file deleted: showing what was written to it; following the path again if it comes back" in \
        _markers(events)
    assert _lines(events) == [_line(1)]
