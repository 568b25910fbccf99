"""The GPU pane on a short terminal (80x24): the process table keeps rows under long GPU notes, and ``K`` never
acts on a process row that is not on screen."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support.gpu import FakeGpuState, reap_group, spawn_holder, spawn_orphans
from support.pilot import screen_text, wait_until
from test_gpu_pane import PaneApp

from specdash.app.gpus import GpuPane
from specdash.app.gpus.kill_modal import KillConfirmScreen
from specdash.app.replay import ReplayApp
from specdash.gpu.model import GpuInfo, GpuProcess, GpuSnapshot
from specdash.hosts.local import LocalHost
from specdash.session.events import gpu_event_fields
from specdash.session.reader import read_session
from specdash.session.recorder import Recorder


def _over_total_session(path: Path) -> Path:
    """A recorded session whose GPU 0 reads more MiB used than its total (two servers counted on one GPU, as a
    shared nvidia-smi can report), with the running server's process and a crashed server's orphan on it."""
    gpus = (GpuInfo(index=0, name="NVIDIA H100 80GB HBM3", uuid="GPU-0", memory_used_mib=121028,
                    memory_total_mib=81559, utilization_pct=0),
            GpuInfo(index=1, name="NVIDIA H100 80GB HBM3", uuid="GPU-1", memory_used_mib=1004,
                    memory_total_mib=81559, utilization_pct=0))
    procs = (GpuProcess(pid=30656, gpu_index=0, gpu_uuid="GPU-0", used_mib=61305, name="sglang::scheduler_TP0"),
             GpuProcess(pid=31001, gpu_index=0, gpu_uuid="GPU-0", used_mib=59719, name="sglang::scheduler_TP0"),
             GpuProcess(pid=31002, gpu_index=1, gpu_uuid="GPU-1", used_mib=1000, name="sglang::detokenizer"))
    snapshot = GpuSnapshot(time_s=0.0, source="nvidia-smi", gpus=gpus, processes=procs)
    now = [0.0]
    rec = Recorder(path, {"host": "local", "sglang_version": "0.5.9", "note": "short screen"},
                   clock=lambda: now[0], timer=False)
    rec.record("connection", state="connected", detail="")
    rec.record("gpu", **gpu_event_fields(snapshot, {
        30656: ("server", "alice", "in process group 30599 of the running server"),
        31001: ("orphan", "alice", "parent gone"),
        31002: ("orphan", "alice", "parent gone")}))
    now[0] += 1.0
    rec.record("connection", state="connected", detail="")
    rec.close()
    return path


async def test_80x24_f5_shows_process_rows_under_the_over_total_note(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = ReplayApp(read_session(_over_total_session(tmp_path / "s.yaml")), start_paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.deferred_panes_ready()
        app.player.seek(app.player.duration_s)
        await wait_until(pilot, lambda: app.gpu_pane.view is not None, what="the GPU sample")
        await pilot.press("f5")
        await pilot.pause(0.3)
        app.clear_notifications()
        await pilot.pause()
        await wait_until(pilot, lambda: len([line for line in screen_text(app).splitlines()
                                             if "30656" in line or "31001" in line]) == 2,
                         what="both process rows on screen", state=lambda: screen_text(app))
        screen = screen_text(app)
        assert "more than its 81559 MiB total" in screen  # the note is still there (it scrolls on its own) ...
        rows = [line for line in screen.splitlines() if "30656" in line or "31001" in line]
        assert len(rows) == 2, screen  # ... and the process rows K acts on are on screen
        assert "server" in rows[0] and "orphan" in rows[1]


async def test_K_refuses_when_the_focused_row_is_not_on_screen(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    server = spawn_holder()
    pgid, pids = spawn_orphans(1)
    try:
        state.add_process(server.pid, 0, 61305)
        state.add_process(pids[0], 0, 59719)
        app = PaneApp(LocalHost(env=state.env()))
        app.keymap_overrides = {"gpus.kill": "ctrl+k"}  # config.yaml's keymap: the refusal names the key bound
        app.set_keymap(app.keymap_overrides)
        async with app.run_test(size=(80, 11)) as pilot:  # the notes above fill the pane: no process row is drawn
            pane = app.query_one(GpuPane)
            pane.set_server_pgids({server.pid})
            await wait_until(pilot, lambda: len(pane.processes) == 2, what="two processes")
            await pilot.pause()
            await wait_until(pilot, lambda: "GPU 0" in screen_text(app), what="the pane drawn",
                             state=lambda: screen_text(app))
            await pilot.pause(0.2)  # a process row that wrongly fitted would be drawn by now
            assert str(server.pid) not in screen_text(app) and not pane.cursor_row_on_screen()
            await pilot.press("ctrl+k")
            await wait_until(pilot, lambda: any("not on screen" in str(n.message) for n in app._notifications),
                             what="K's refusal", state=lambda: [str(n.message) for n in app._notifications])
            assert any("then press ctrl+k again" in str(n.message) for n in app._notifications)
            assert not isinstance(app.screen, KillConfirmScreen)
            await pilot.resize_terminal(80, 24)
            await pilot.pause()
            await wait_until(pilot, lambda: str(server.pid) in screen_text(app) and pane.cursor_row_on_screen(),
                             what="the focused row on screen", state=lambda: screen_text(app))
            await pilot.press("ctrl+k")  # the same row, now seen: the confirmation names it
            await wait_until(pilot, lambda: isinstance(app.screen, KillConfirmScreen), what="the confirmation")
            assert f"PID {server.pid}" in screen_text(app)
            await pilot.press("escape")
            await pilot.pause(0.1)
    finally:
        reap_group(pgid)
        reap_group(server.pid)
        server.wait()
        await asyncio.sleep(0)
