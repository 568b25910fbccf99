"""Helpers for Pilot tests of the app (no tests here)."""

from __future__ import annotations

import asyncio


async def wait_until(pilot, predicate, timeout_s: float = 30.0, what: str = "condition", step_s: float = 0.1) -> None:
    """Let the app run (``pilot.pause``) until ``predicate()`` is true; AssertionError naming ``what`` after
    ``timeout_s`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(step_s)
