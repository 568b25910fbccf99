"""The replay clock with a fake clock: pace, speed, pause/resume, step forward/back, seek, next finding."""

from __future__ import annotations

import asyncio

import pytest
from support.guard import guard

from specdash.session.events import FindingEvent, MarkerEvent, UnknownEvent
from specdash.session.reader import SessionLog
from specdash.session.replay import ReplayPlayer, Rewind, fake_clock


def session(*items: tuple[float, str]) -> SessionLog:
    """Markers (and findings for texts starting with 'F') at the given times."""
    events = [FindingEvent(t=t, message=text) if text.startswith("F") else MarkerEvent(t=t, text=text)
              for t, text in items]
    return SessionLog(path="mem", header=None, events=events, problems=[], closed=True)


def names(items) -> list[str]:
    out = []
    for item in items:
        if isinstance(item, Rewind):
            out.append(f"<rewind {item.t:g}>")
        else:
            out.append(getattr(item, "text", None) or item.message)
    return out


LOG = session((0.0, "a"), (1.0, "b"), (2.0, "Fc"), (5.0, "d"), (6.0, "Fe"), (10.0, "f"))


def make(speed: float = 1.0, **kw):
    clock, advance, wait = fake_clock()
    return ReplayPlayer(LOG, speed, clock=clock, wait=wait, **kw), advance


def test_events_come_due_at_their_time():
    player, advance = make()
    assert names(player.take_due()) == ["a"]
    advance(0.9)
    assert player.take_due() == []
    advance(0.1)
    assert names(player.take_due()) == ["b"]
    assert player.time_to_next_s() == pytest.approx(1.0)
    advance(4.0)
    assert names(player.take_due()) == ["Fc", "d"]


def test_speed_scales_the_pace_and_can_change_midway():
    player, advance = make(speed=2.0)
    player.take_due()
    assert player.time_to_next_s() == pytest.approx(0.5)
    advance(1.0)  # 2 session seconds
    assert names(player.take_due()) == ["b", "Fc"]
    player.set_speed(0.5)
    assert player.position_s == pytest.approx(2.0)
    advance(4.0)  # 2 more session seconds at half speed
    assert player.position_s == pytest.approx(4.0)
    assert player.take_due() == []
    with pytest.raises(ValueError):
        player.set_speed(0)


def test_pause_freezes_position_and_resume_continues():
    player, advance = make()
    advance(1.0)
    assert names(player.take_due()) == ["a", "b"]
    player.pause()
    advance(100.0)
    assert player.take_due() == [] and player.position_s == pytest.approx(1.0)
    assert player.time_to_next_s() is None
    assert player.toggle_pause() is False  # resumed
    advance(1.0)
    assert names(player.take_due()) == ["Fc"]
    assert player.status().describe().startswith("▶ 00:00:02 / 00:00:10")


def test_step_forward_and_back_rebuild_state():
    player, advance = make(start_paused=True)
    assert player.take_due() == []
    assert names([player.step_forward(), player.step_forward()]) == ["a", "b"]
    assert names(player.take_due()) == ["a", "b"]
    assert player.paused and player.position_s == 1.0
    undone = player.step_back()
    assert names([undone]) == ["b"]
    assert names(player.take_due()) == ["<rewind 0>", "a"]
    assert player.position_s == 0.0
    player.step_back()
    assert names(player.take_due()) == ["<rewind 0>"]
    assert player.step_back() is None
    advance(50)
    assert player.take_due() == []  # still paused


def test_seek_forward_hands_out_skipped_events_and_back_rewinds():
    player, advance = make()
    player.take_due()
    player.seek(5.5)
    assert names(player.take_due()) == ["b", "Fc", "d"]
    player.seek(1.5)
    assert names(player.take_due()) == ["<rewind 1>", "a", "b"]
    advance(0.5)
    assert names(player.take_due()) == ["Fc"]
    player.seek(99)
    assert names(player.take_due()) == ["d", "Fe", "f"]
    assert player.at_end and player.position_s == 10.0


def test_seek_to_next_and_previous_finding():
    player, advance = make(start_paused=True)
    found = player.seek_next_finding()
    assert found.message == "Fc"
    assert names(player.take_due()) == ["a", "b", "Fc"] and player.position_s == 2.0
    assert player.seek_next_finding().message == "Fe"
    assert names(player.take_due()) == ["d", "Fe"]
    assert player.seek_next_finding() is None
    assert player.seek_previous_finding().message == "Fc"
    assert names(player.take_due()) == ["<rewind 2>", "a", "b", "Fc"]
    assert player.seek_previous_finding() is None


def test_two_findings_recorded_at_one_instant_are_two_stops_both_ways():
    clock, advance, wait = fake_clock()
    player = ReplayPlayer(session((0.0, "a"), (9.3, "F1"), (9.3, "F2"), (9.3, "b"), (12.0, "F3")), clock=clock,
                          wait=wait, start_paused=True)
    # before: } handed out both at once (it landed on the second) and { could not reach the first
    assert player.seek_next_finding().message == "F1" and names(player.take_due()) == ["a", "F1"]
    assert player.seek_next_finding().message == "F2" and names(player.take_due()) == ["F2"]
    assert player.seek_next_finding().message == "F3" and names(player.take_due()) == ["b", "F3"]
    assert player.seek_previous_finding().message == "F2"
    assert names(player.take_due()) == ["<rewind 9.3>", "a", "F1", "F2"]
    assert player.seek_previous_finding().message == "F1"
    assert names(player.take_due()) == ["<rewind 9.3>", "a", "F1"]
    assert player.seek_previous_finding() is None


def test_unknown_kinds_are_not_replayed():
    log = SessionLog(path="m", header=None, problems=[], events=[
        MarkerEvent(t=0, text="a"), UnknownEvent(t=0.5, unknown_kind="hologram"), MarkerEvent(t=1, text="b")])
    clock, advance, wait = fake_clock()
    player = ReplayPlayer(log, clock=clock, wait=wait)
    advance(2)
    assert names(player.take_due()) == ["a", "b"]


async def test_async_generator_paces_and_obeys_controls():
    clock, advance, wait = fake_clock()
    player = ReplayPlayer(LOG, 2.0, clock=clock, wait=wait)
    seen: list[tuple[float, str]] = []
    async for item in player.events(stop_at_end=True):
        seen.append((clock(), names([item])[0]))
        if names([item]) == ["Fc"]:
            player.seek(9.0)  # jump: d and Fe come at once, then f at its own pace
    assert seen == [(0.0, "a"), (0.5, "b"), (1.0, "Fc"), (1.0, "d"), (1.0, "Fe"), (1.5, "f")]


async def test_real_clock_pause_wakes_the_generator():
    player = ReplayPlayer(session((0.0, "a"), (30.0, "late")), 1.0)
    seen: list[str] = []

    async def consume():
        async for item in player.events():
            seen.append(names([item])[0])

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    assert seen == ["a"]
    player.step_forward()  # must not wait 30 s
    await asyncio.sleep(0.05)
    assert seen == ["a", "late"]
    player.close()
    await asyncio.wait_for(task, guard(1.0))


async def test_replay_host_is_read_only():
    import signal

    from specdash.hosts.base import ConnState, HostError
    from specdash.session.events import HeaderEvent
    from specdash.session.replay_host import ReplayHost

    log = SessionLog(path="/tmp/s.yaml", header=HeaderEvent(host="gpu-box"), events=[], problems=[])
    host = ReplayHost(log)
    assert host.name == "replay: gpu-box"
    await host.connect()
    assert host.status.state is ConnState.CONNECTED and "/tmp/s.yaml" in host.status.detail
    with pytest.raises(HostError, match="read-only"):
        await host.run("nvidia-smi")
    with pytest.raises(HostError, match="read-only"):
        await host.send_signal(1, signal.SIGKILL, group=True)
    with pytest.raises(HostError, match="read-only"):
        host.stream("tail -f /x")
    assert await host.read_file("/etc/hostname") is None and await host.file_size("/x") is None


def test_events_a_seek_or_rebuild_skips_over_are_handed_out_as_jumping():
    """``jumping`` is True exactly while the events a seek (or a step back's rebuild) skipped over are handed out:
    the app shows no notice for those; events reached at the pace and a step forward are not jumping."""
    player, advance = make(start_paused=True)

    async def scenario():
        stream = player.events(stop_at_end=True)

        async def take(count):
            return [(names([await anext(stream)])[0], player.jumping) for _ in range(count)]

        player.seek(2.5)
        assert await take(3) == [("a", True), ("b", True), ("Fc", True)]
        player.step_forward()
        assert await take(1) == [("d", False)]
        player.step_back()
        assert await take(4) == [("<rewind 2>", True), ("a", True), ("b", True), ("Fc", True)]
        player.resume()
        assert await take(3) == [("d", False), ("Fe", False), ("f", False)]

    asyncio.run(asyncio.wait_for(scenario(), guard(5)))


def test_a_seek_right_after_a_step_still_marks_the_skipped_events_jumping():
    """``]`` then ``}`` before the app took the stepped event: the seek's skipped events were handed out as not
    jumping (only a queue holding nothing but jumped items counted), so their notices showed as news."""
    player, advance = make(start_paused=True)

    async def scenario():
        stream = player.events(stop_at_end=True)

        async def take(count):
            return [(names([await anext(stream)])[0], player.jumping) for _ in range(count)]

        player.step_forward()  # "a", reached by a step: news
        player.seek(5.5)  # before "a" was taken: "b", "Fc" and "d" are the past of the new position
        assert await take(4) == [("a", False), ("b", True), ("Fc", True), ("d", True)]
        player.seek(6.5)
        player.step_forward()
        assert await take(2) == [("Fe", True), ("f", False)]

    asyncio.run(asyncio.wait_for(scenario(), guard(5)))
