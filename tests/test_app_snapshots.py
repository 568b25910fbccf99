"""The whole console, every pane, at 80x24 (a supported size) and at 160x48: snapshots of the real app.

The app is the replay console on a session written here by the real Recorder (fake clock): the shipped demo log, a
launch command that names a draft model, two GPU samples and a kill; the replay is paused at its end so every
picture is the same on any machine. The bench pane shows a stored sweep result (tests/data/bench).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.pilot import wait_until

from specdash.app.replay import ReplayApp
from specdash.bench.sweep import SweepResult
from specdash.gpu.model import GpuInfo, GpuProcess, GpuSnapshot
from specdash.session.events import gpu_event_fields
from specdash.session.reader import read_session
from specdash.session.recorder import Recorder

REPO = Path(__file__).resolve().parent.parent
DEMO_LOG = (REPO / "sessions" / "demo-server.log").read_text().splitlines()
SWEEP = Path(__file__).parent / "data" / "bench" / "sweep_result.json"
COMMAND = ("python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct --host 127.0.0.1 --port 30000 "
           "--speculative-algorithm EAGLE3 --speculative-draft-model-path /models/EAGLE3-LLaMA3.1-8B "
           "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4")
SIZES = {"80x24": (80, 24), "160x48": (160, 48)}


def _gpus(used_mib: int, pids: list[int]) -> GpuSnapshot:
    gpus = tuple(GpuInfo(index=i, name="NVIDIA H100 80GB HBM3", uuid=f"GPU-{i}", memory_used_mib=used_mib if i == 0
                         else 4, memory_total_mib=81559, utilization_pct=37 if i == 0 else 0) for i in range(2))
    procs = tuple(GpuProcess(pid=pid, gpu_index=0, gpu_uuid="GPU-0", used_mib=used_mib // len(pids),
                             name="sglang::scheduler_TP0") for pid in pids)
    return GpuSnapshot(time_s=0.0, source="nvidia-smi", gpus=gpus, processes=procs)


def _session(path: Path) -> Path:
    now = [0.0]
    rec = Recorder(path, {"host": "gpu1.example.com", "sglang_version": "0.5.9", "note": "snapshot session"},
                   clock=lambda: now[0], timer=False)
    rec.record("connection", state="connected", detail="")
    rec.record("command", action="launched", command=COMMAND, pgid=4242)
    offset = 0
    for start in range(0, len(DEMO_LOG), 40):
        now[0] += 1.0
        lines = []
        for text in DEMO_LOG[start:start + 40]:
            lines.append([offset, text])
            offset += len(text.encode()) + 1
        rec.record("log", lines=lines, source="/var/log/sglang/server.log")
        if start == 0:
            rec.record("gpu", **gpu_event_fields(_gpus(70000, [5001, 5002]), {
                5001: ("server", "alice", "in the server's process group"),
                5002: ("orphan", "alice", "parent gone")}))
    rec.close()
    return path


def _app(tmp_path: Path) -> ReplayApp:
    return ReplayApp(read_session(_session(tmp_path / "snap.yaml")), start_paused=True)


async def _at_the_end(pilot) -> None:
    app = pilot.app
    await app.deferred_panes_ready()
    app.player.seek(app.player.duration_s)
    await wait_until(pilot, lambda: app.log_pane.view.line_count == len(DEMO_LOG), what="the whole log")
    await wait_until(pilot, lambda: app.gpu_pane.view is not None, what="the GPU sample")
    view = app.log_pane.view
    view.sync_now()
    await pilot.pause(0.6)  # the findings and metrics panels repaint on a 0.25 s timer
    # following: the last line at the bottom however long the repaint took (a loaded machine is slower)
    await wait_until(pilot, lambda: view.max_scroll_y > 0 and view.scroll_y >= view.max_scroll_y, what="log at its end",
                     state=lambda: (f"follow={view.follow} scroll_y={view.scroll_y} max_scroll_y={view.max_scroll_y} "
                                    f"size={view.size} virtual_size={view.virtual_size} lines={view.line_count}"))
    view.scroll_end(animate=False, immediate=True, x_axis=False)
    await pilot.pause()
    app.clear_notifications()  # toasts time out: not part of a stable picture
    await pilot.pause(0.1)


async def _log(pilot) -> None:
    await _at_the_end(pilot)
    await pilot.press("f2")
    await pilot.pause(0.3)


async def _gpus_pane(pilot) -> None:
    await _at_the_end(pilot)
    await pilot.press("f5")
    await pilot.pause(0.3)


async def _builder(pilot) -> None:
    await _at_the_end(pilot)
    await pilot.press("f3")
    await pilot.pause(0.3)


async def _pairing(pilot) -> None:
    await _builder(pilot)
    pilot.app.builder_pane.query_one("#builder-pairing").scroll_visible(animate=False, immediate=True)
    await pilot.pause(0.3)


async def _bench(pilot) -> None:
    await _at_the_end(pilot)
    pane = pilot.app.bench_pane
    sweep = SweepResult.from_dict(json.loads(SWEEP.read_text()))
    for run in sweep.points[-1].runs:
        pane.show_run(run)
    pane.show_sweep(sweep)
    await pilot.press("f4")
    await pilot.pause(0.3)


async def _replay_seek(pilot) -> None:
    await _at_the_end(pilot)
    await pilot.press("g")  # the replay's own input: the seek field above the footer
    await pilot.pause(0.3)


PANES = {"log": _log, "gpus": _gpus_pane, "builder": _builder, "pairing": _pairing, "bench": _bench,
         "replay": _replay_seek}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("pane", list(PANES))
def test_every_pane_at_80x24_and_160x48(snap_compare, tmp_path, monkeypatch, pane, size):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    assert snap_compare(_app(tmp_path), terminal_size=SIZES[size], run_before=PANES[pane])



async def test_80x24_keeps_the_log_readable_and_the_footer_whole(tmp_path, monkeypatch):
    """What the snapshots show, asserted: at 80x24 the log gets most rows, findings fold into the status line, the
    footer holds help and the pane's keys (not the tab keys, which the tabs show), and the diagnostics can be reached
    in the builder."""
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = _app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await _log(pilot)
        view = app.log_pane.view
        assert view.size.height >= 8 and view.size.width >= 76
        assert app.gpu_pane.size.height <= 6
        assert "findings (F shows)" in str(app.log_pane.query_one("#log-status").render())
        shown = {binding.key for (_, binding, enabled, _) in app.active_bindings.values() if binding.show}
        assert "f2" not in shown and "f3" not in shown and "ctrl+q" not in shown
        assert {"f1", "slash", "F"} <= shown
        tabs = [str(tab.label) for tab in app.query("ContentTab")]
        assert tabs[:3] == ["F2 Log", "F3 Launch builder", "F4 Benchmarks"]
        await pilot.press("f3")
        await pilot.pause(0.2)
        diagnostics = app.builder_pane.query_one("#builder-diagnostics")
        diagnostics.focus()
        await wait_until(pilot, lambda: diagnostics.has_focus and diagnostics.region.height >= 4,
                         what="the focused diagnostics laid out", state=lambda: diagnostics.region)
        region = diagnostics.region
        screen = app.screen.region
        assert region.height >= 4 and screen.contains(region.x, region.y) and region.bottom <= screen.bottom
