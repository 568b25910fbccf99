"""Helpers for Pilot tests of the app (no tests here)."""

from __future__ import annotations

import asyncio

from support.guard import guard


async def wait_until(pilot, predicate, timeout_s: float = 30.0, what: str = "condition", step_s: float = 0.1,
                     state=None) -> None:
    """Let the app run (``pilot.pause``) until ``predicate()`` is true; AssertionError naming ``what`` after
    ``timeout_s`` seconds (with ``state()``, a callable returning a string, appended: what was seen instead)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + guard(timeout_s)
    while not predicate():
        if loop.time() > deadline:
            seen = f" (seen: {state()})" if state is not None else ""
            raise AssertionError(f"timed out waiting for {what}{seen}")
        await pilot.pause(step_s)


async def benchmark_from_the_bench_pane(pilot, app, port: int, **overrides):
    """Wait until the bench pane points at ``http://127.0.0.1:<port>`` (the server's port, forwarded), then run one
    benchmark with ``b`` (``overrides``: BenchSettings fields) and return its RunResult."""
    bench = app.bench_pane
    await wait_until(pilot, lambda: bench.server_url == f"http://127.0.0.1:{port}", what="bench URL")
    bench.bench_overrides = {"warmup_requests": 0, **overrides}
    await pilot.press("f4")
    await pilot.pause(0.2)
    await pilot.press("b")
    await wait_until(pilot, lambda: bench.results, timeout_s=60, what="benchmark result")
    return bench.results[-1]


def screen_text(app) -> str:
    """The characters of the app's current screen, one line per terminal row (what the user sees, no styles)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def launch_until_ready(pilot, app, started_groups, command: str) -> None:
    """Put ``command`` in the builder, press ``l``, note the run's process group in ``started_groups`` (ended at
    teardown) and wait until the header says ``ready``."""
    app.builder_pane.set_command(command)
    await pilot.pause(0.2)
    await pilot.press("l")
    await wait_until(pilot, lambda: app.run_handle is not None, what="launch")
    started_groups.append(app.run_handle.pgid)
    await wait_until(pilot, lambda: app.status_bar.server_state == "ready", what="ready")
