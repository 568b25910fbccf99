"""Replay header after a second launch: the new server is starting, not the previous server's end ("crashed",
"stopped") with the new launch's PGID beside it. Sessions written by the real Recorder (fake clock)."""

from __future__ import annotations

import pytest
from support.pilot import wait_until

from specdash.app.replay import ReplayApp
from specdash.session.reader import read_session
from specdash.session.recorder import Recorder

COMMAND = "python3 -m sglang.launch_server --model-path /m --port 30000"
CRASH = [
    "[2025-01-01 10:00:00] server_args=ServerArgs(model_path='/m', port=30000)",
    "[2025-01-01 10:00:05] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 1, in run_scheduler_process',
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
]


@pytest.mark.parametrize("end", ["stopped", "crashed"])
async def test_a_second_launch_is_starting_not_the_previous_end(tmp_path, end):
    now = [0.0]
    path = tmp_path / "session.yaml"
    rec = Recorder(path, {"host": "gpu1.example.com"}, clock=lambda: now[0], timer=False)
    rec.record("connection", state="connected", detail="")
    rec.record("command", action="launched", command=COMMAND, pgid=100)
    now[0] += 1.0
    if end == "stopped":
        rec.record("command", action="stopped", command=COMMAND, pgid=100, exit_reason="stopped by specdash")
    else:
        rec.record("log", lines=[[i * 100, text] for i, text in enumerate(CRASH)], source="/runs/a/server.log")
    now[0] += 1.0
    rec.record("command", action="launched", command=COMMAND, pgid=200)
    now[0] += 1.0
    rec.record("connection", state="connected", detail="")
    rec.close()

    app = ReplayApp(read_session(path), start_paused=True)
    async with app.run_test(size=(160, 48)) as pilot:
        app.player.seek(1.5)  # after the first server's end
        await wait_until(pilot, lambda: app.status_bar.server_state == end, what=f"the first server {end}",
                         state=lambda: app.status_bar.server_state)
        app.player.seek(2.5)  # after the second launch
        await wait_until(pilot, lambda: app.status_bar.server_state == "starting", what="the new server starting",
                         state=lambda: f"{app.status_bar.server_state} ({app.status_bar.server_detail})")
        header = app.status_bar.line(160).plain
        assert "server: starting (launched, PGID 200)" in header
        assert end not in header
