"""End to end: the console connected to a real sshd shows the live server log and the (fake) GPUs.

The log is the demo log shipped in sessions/ (real SGLang 0.5.x line formats); the GPUs
come from the fake nvidia-smi that the test sshd puts first on the remote PATH.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.gpu import FakeGpuState
from support.pilot import wait_until

from specdash.app.main import SpecdashApp
from specdash.hosts.base import ConnState
from specdash.logs.parser import LineKind

REPO = Path(__file__).resolve().parent.parent
DEMO_LOG = (REPO / "sessions" / "demo-server.log").read_text().splitlines()
OVERRIDE = "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1"


def rows_with(view, text: str) -> list[int]:
    return [row for row in range(view.row_count) if text in view.text_at_row(row)]


@pytest.fixture
def holder():
    """A real process we start (and kill by PID at the end) that the fake driver says holds GPU memory."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


async def test_connect_over_ssh_follows_log_live_and_shows_gpus(sshd, tmp_path, holder):
    gpu_state = FakeGpuState(sshd.gpu_state, gpus=2)
    gpu_state.add_process(holder.pid, 0, 70000)
    log = tmp_path / "server.log"
    first, rest = DEMO_LOG[:20], DEMO_LOG[20:]
    log.write_text("\n".join(first) + "\n")

    app = SpecdashApp(sshd.make_host(), log_path=str(log), gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        view = app.log_pane.view
        await wait_until(pilot, lambda: view.line_count >= len(first), what="first lines")
        assert app.host.status.state is ConnState.CONNECTED
        assert "connected" in str(app.status_bar.render())

        # the server keeps writing: every new line arrives, once
        with log.open("a") as out:
            out.write("\n".join(rest) + "\n")
        await wait_until(pilot, lambda: view.line_count >= len(DEMO_LOG), what="appended lines")
        await pilot.pause(0.5)
        assert view.line_count == len(DEMO_LOG)
        assert len(rows_with(view, "The server is fired up and ready to roll!")) == 1

        # the silent 16 -> 2 override is highlighted as a warning, the ready line as success
        (override_row,) = rows_with(view, OVERRIDE)
        assert view.kind_at_row(override_row) is LineKind.override
        (ready_row,) = rows_with(view, "fired up and ready")
        assert view.kind_at_row(ready_row) is LineKind.ready
        assert app._log_state[0] == "ready"  # what the log says (the header adds whether a server still writes it)

        # the GPU pane shows both fake GPUs and the process holding memory
        gpus = app.gpu_pane
        await wait_until(pilot, lambda: gpus.view is not None and len(gpus.view.snapshot.gpus) == 2
                         and any(p.pid == holder.pid for p in gpus.processes), what="GPU rows")
        row = next(p for p in gpus.processes if p.pid == holder.pid)
        assert row.used_mib == 70000 and row.gpu_index == 0
        assert gpus.view.snapshot.gpus[0].memory_used_mib == 70004


async def test_connect_local_without_driver_shows_no_gpu_as_a_state(tmp_path, monkeypatch):
    from specdash.hosts.local import LocalHost

    log = tmp_path / "server.log"
    log.write_text("\n".join(DEMO_LOG[:5]) + "\n")
    state = FakeGpuState(tmp_path / "gpu.json", gpus=0, driver=False)
    app = SpecdashApp(LocalHost(env=state.env()), log_path=str(log), gpu_interval_s=0.5)
    calls = []  # the console makes full garbage collections rare (not in this test process: recorded instead)
    monkeypatch.setattr("specdash.app.main.apply_streaming_gc_policy", lambda: calls.append(1))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.log_pane.view.line_count >= 5, what="log lines")
        assert calls == [1]
        gpus = app.gpu_pane
        await wait_until(pilot, lambda: gpus.view is not None, what="GPU sample")
        assert gpus.view.snapshot.error
        assert "driver" in gpus.view.snapshot.error.lower()


async def test_gpu_sampling_starts_after_the_logs_first_lines_are_painted(tmp_path, monkeypatch):
    """The GPU pane's first sample (container, user, process table, nvidia-smi: host commands) starts once the log's
    first lines are on screen, so it does not delay them; then the GPUs show as usual."""
    from specdash.app.gpus.pane import GpuPane
    from specdash.hosts.local import LocalHost

    log = tmp_path / "server.log"
    log.write_text("\n".join(DEMO_LOG) + "\n")
    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    app = SpecdashApp(LocalHost(env=state.env()), log_path=str(log), gpu_interval_s=0.5)
    lines_at_first_sample: list[int] = []
    run_sampler = GpuPane.run_sampler

    def recording_start(pane):
        lines_at_first_sample.append(app.log_pane.view.line_count)
        return run_sampler(pane)

    monkeypatch.setattr(GpuPane, "run_sampler", recording_start)
    async with app.run_test(size=(160, 48)) as pilot:
        gpus = app.gpu_pane
        await wait_until(pilot, lambda: gpus.view is not None, what="GPU sample")
        assert lines_at_first_sample == [len(DEMO_LOG)]
        assert len(gpus.view.snapshot.gpus) == 2
