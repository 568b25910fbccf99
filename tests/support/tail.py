"""Helpers for the log-follower tests: collect events until a condition, and the lines among them."""

from __future__ import annotations

import asyncio

from specdash.hosts.tail import LogFollower, TailLines
from support.guard import guard


async def collect_until(follower: LogFollower, predicate, timeout_s: float = 10) -> list:
    events: list = []

    async def run() -> None:
        async for event in follower:
            events.append(event)
            if predicate(events):
                return

    await asyncio.wait_for(run(), guard(timeout_s))
    return events


def lines_of(events: list) -> list[bytes]:
    return [line for ev in events if isinstance(ev, TailLines) for line in ev.lines]
