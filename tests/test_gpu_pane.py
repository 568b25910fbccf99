"""The GPU pane with a real LocalHost and the fake nvidia-smi: orphans shown, tagged, killed with `K`."""

from __future__ import annotations

import asyncio
import getpass
import pathlib

import pytest
from support.gpu import FakeGpuState, pid_alive, reap_group, spawn_holder, spawn_orphans
from support.guard import guard
from textual.app import App, ComposeResult
from textual.command import CommandInput, CommandList, CommandPalette

from specdash.app.gpus import GpuPane
from specdash.app.gpus.kill_modal import KillConfirmScreen
from specdash.app.palette import PaneActions
from specdash.hosts.local import LocalHost


class PaneApp(App):
    COMMANDS = App.COMMANDS | {PaneActions}

    def __init__(self, host, readonly=False, detect_container=True):
        super().__init__()
        self.host, self.readonly, self.detect_container = host, readonly, detect_container

    def compose(self) -> ComposeResult:
        yield GpuPane(self.host, interval_s=0.2, readonly=self.readonly, source="nvidia-smi", grace_s=2,
                      detect_container=self.detect_container)

    @property
    def gpu_pane(self) -> GpuPane:
        return self.query_one(GpuPane)

    async def on_mount(self) -> None:
        await self.host.connect()
        self.query_one(GpuPane).focus()

    async def on_unmount(self) -> None:
        await self.host.close()  # as the console does: ends the sampler's stream while the loop runs


async def wait_for(pilot, predicate, timeout_s: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + guard(timeout_s)
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await pilot.pause(0.05)


async def open_palette(pilot, query: str) -> CommandList:
    """Open the command palette and type ``query``; the palette's list of offered entries."""
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
    await pilot.press(*query)
    await wait_for(pilot, lambda: pilot.app.screen.query_one(CommandInput).value == query)
    return pilot.app.screen.query_one(CommandList)


async def run_palette(pilot, query: str) -> None:
    """Run the palette entry ``query`` finds first (it must find one)."""
    commands = await open_palette(pilot, query)
    await wait_for(pilot, lambda: commands.option_count > 0 and commands.highlighted is not None)
    await pilot.press("enter")
    await wait_for(pilot, lambda: not isinstance(pilot.app.screen, CommandPalette))


async def test_orphans_are_shown_tagged_killed_and_memory_released(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    pgid, pids = spawn_orphans(2)
    bystander = spawn_holder("python3")
    try:
        state.add_process(pids[0], 0, 36000)
        state.add_process(pids[1], 1, 37000)
        state.add_process(bystander.pid, 1, 1000)
        app = PaneApp(LocalHost(env=state.env()))
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.query_one(GpuPane)
            await wait_for(pilot, lambda: len(pane.processes) == 3)
            classes = {p.pid: p.process_class for p in pane.processes}
            assert classes == {pids[0]: "orphan", pids[1]: "orphan", bystander.pid: "foreign"}
            summary = str(app.query_one("#gpu-summary").render())
            assert "2 orphans from a crashed server hold 71.3 GiB on GPU 0–1" in summary
            devices = str(app.query_one("#gpu-devices").render())
            assert "36004 / 81559 MiB" in devices and "38004 / 81559 MiB" in devices
            # the command palette's kill goes through the same action: it asks first (focused row), escape cancels
            await run_palette(pilot, "kill tagged")
            await wait_for(pilot, lambda: isinstance(app.screen, KillConfirmScreen))
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, KillConfirmScreen))
            assert all(pid_alive(p) for p in pids)
            # tag both orphans (rows 0 and 1), kill: the modal names PID, user, command, GPU and MiB
            await pilot.press("space", "space")
            assert pane.tagged == set(pids)
            await pilot.press("K")
            await wait_for(pilot, lambda: isinstance(app.screen, KillConfirmScreen))
            text = " ".join(str(w.render()) for w in app.screen.query(".kill-target"))
            assert f"PID {pids[0]}" in text and f"user {getpass.getuser()}" in text
            assert "GPU 1" in text and "37000 MiB" in text and "sglang::scheduler_TP2" in text
            await pilot.press("y")
            await wait_for(pilot, lambda: pane.last_report is not None, 20)
            assert pane.last_report.released and pane.last_report.after_mib == 0
            assert not any(pid_alive(p) for p in pids) and bystander.poll() is None
            await wait_for(pilot, lambda: [p.pid for p in pane.processes] == [bystander.pid])
            assert "killed 2 of 2 processes: 73000 MiB -> 0 MiB held" in str(app.query_one("#gpu-status").render())
            # the result stays through the samples that follow, however long the user takes to read it (it was
            # held for 10 wall-clock seconds, then replaced by the bystander's row explanation)
            for _ in range(3):
                sampled = pane.view
                await wait_for(pilot, lambda sampled=sampled: pane.view is not sampled)
                await pilot.pause()
                assert "killed 2 of 2 processes" in str(app.query_one("#gpu-status").render())
            # the foreign bystander is never offered: K on it kills nothing and says why
            seen = len(app._notifications)
            await pilot.press("K")
            await wait_for(pilot, lambda: len(app._notifications) > seen)  # K said why it refused
            await pilot.pause(0.1)  # a kill that wrongly started would show by now
            assert not isinstance(app.screen, KillConfirmScreen) and bystander.poll() is None
    finally:
        reap_group(pgid)
        reap_group(bystander.pid)
        bystander.wait()


async def test_readonly_refuses_inside_the_action(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    pgid, pids = spawn_orphans(1)
    try:
        state.add_process(pids[0], 0, 5000)
        app = PaneApp(LocalHost(env=state.env()), readonly=True)
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.query_one(GpuPane)
            await wait_for(pilot, lambda: len(pane.processes) == 1)
            commands = await open_palette(pilot, "kill tagged")  # the palette offers no way round it
            await pilot.pause(0.5)  # the palette's search has run: an entry it wrongly offered would be listed
            offered = [str(commands.get_option_at_index(i).prompt) for i in range(commands.option_count)]
            assert not any("kill" in entry.lower() for entry in offered), offered
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette))
            await pilot.press("K")  # off in this pane (check_action): no notice here, the console's key filter says why
            await pilot.pause(0.2)  # a confirmation that wrongly opened would show by now
            assert not isinstance(app.screen, KillConfirmScreen)
            worker = pane.kill(list(pane.processes))  # even the worker refuses
            await worker.wait()
            assert worker.result is None and pid_alive(pids[0])
    finally:
        reap_group(pgid)


async def test_no_driver_is_shown_as_a_state_and_server_pgids_reclassify(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", driver=False)
    app = PaneApp(LocalHost(env=state.env()))
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(GpuPane)
        await wait_for(pilot, lambda: pane.view is not None)
        assert "no NVIDIA driver on this host" in str(app.query_one("#gpu-devices").render())
    holder = spawn_holder()
    try:
        state = FakeGpuState(tmp_path / "gpu2.json", gpus=1)
        state.add_process(holder.pid, 0, 3000)
        app = PaneApp(LocalHost(env=state.env()))
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.query_one(GpuPane)
            await wait_for(pilot, lambda: len(pane.processes) == 1)
            # an SGLang worker no live launcher owns (its parent, pytest, is in another session): an orphan...
            assert pane.processes[0].process_class == "orphan"
            pane.set_server_pgids({holder.pid})  # ...until the app says its group is the running server
            assert pane.processes[0].process_class == "server"
    finally:
        reap_group(holder.pid)
        holder.wait()


def test_snapshot_gpu_pane(snap_compare, tmp_path):
    """Deterministic picture: three GPUs (one [N/A]), processes from another PID namespace."""
    state = FakeGpuState(pathlib.Path(tmp_path) / "gpu.json", gpus=3)
    state.state["gpus"][1]["utilization_pct"] = 87
    state.state["gpus"][2]["quirk"] = "na"
    state.add_process(4_000_001, 0, 70312, name="[Not Found]", keep_when_dead=True)
    state.add_process(4_000_002, 1, 36454, name="sglang::scheduler_TP1", keep_when_dead=True)

    async def ready(pilot):
        pane = pilot.app.query_one(GpuPane)
        await wait_for(pilot, lambda: len(pane.processes) == 2)
        await pilot.pause()

    assert snap_compare(PaneApp(LocalHost(env=state.env()), detect_container=False), terminal_size=(160, 48),
                        run_before=ready)


async def test_used_above_total_is_said_and_the_lines_fit_80_columns(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    state.state["gpus"][1]["base_used_mib"] = 122610  # more than the card's 81559 MiB: an inconsistent reading
    state.write()
    app = PaneApp(LocalHost(env=state.env()), detect_container=False)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(GpuPane)
        await wait_for(pilot, lambda: pane.view is not None)
        await wait_for(pilot, lambda: "inconsistent reading" in str(pane.query_one("#gpu-devices").render()))
        lines = str(pane.query_one("#gpu-devices").render()).splitlines()
        assert lines[0].startswith("GPU 0 NVIDIA H100 80GB H") and lines[0].rstrip().endswith("4/81559 MiB   0 %")
        assert lines[1].startswith("GPU 1") and "122610/81559 MiB" in lines[1]
        note = " ".join(line.strip() for line in lines[2:])
        assert "GPU 1: 122610 MiB used is more than its 81559 MiB total — an inconsistent reading" in note
        assert not any("GPU 0:" in line for line in lines)  # a consistent reading gets no comment
        assert all(len(line) <= 76 for line in lines[:2])  # one line per GPU inside an 80-column pane


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_no_running_server_line_stays_after_the_server_is_stopped(tmp_path, size):
    """The status line shows the focused row's reason; once the server is stopped (its group no longer the
    server's, its rows gone) no "running server" line is left on screen, at 80x24 and 160x48."""
    holder = spawn_holder()
    try:
        state = FakeGpuState(tmp_path / f"gpu-{size[0]}.json", gpus=1)
        state.add_process(holder.pid, 0, 3000)
        app = PaneApp(LocalHost(env=state.env()))
        async with app.run_test(size=size) as pilot:
            pane = app.query_one(GpuPane)
            status = app.query_one("#gpu-status")
            await wait_for(pilot, lambda: len(pane.processes) == 1)
            pane.set_server_pgids({holder.pid})
            await wait_for(pilot, lambda: "of the running server" in str(status.render()))
            # stopped: the lifecycle says its group is no server any more; the row left is re-classified
            pane.set_server_pgids(set())
            await wait_for(pilot, lambda: "running server" not in str(status.render()))
            assert pane.processes[0].process_class == "orphan"
            assert str(status.render()) == pane.processes[0].reason
            # its processes exit: no row, no reason of a row that is gone
            state.state["processes"] = []
            state.write()
            await wait_for(pilot, lambda: not pane.processes)
            await wait_for(pilot, lambda: str(status.render()) == "")
            assert str(status.render()) == ""
    finally:
        reap_group(holder.pid)
        holder.wait()


async def test_a_sample_inspected_while_the_server_crashes_shows_its_workers_as_orphans(tmp_path, monkeypatch):
    """The server crashed (the app clears its process groups) while a sample was being inspected with the old
    groups: the pane shows the sample as things are now (orphans), not the crashed server's workers as ``server``
    until the next sample (a kill dialog opened in between offered a ``server`` with no crashed-server clean-up)."""
    from specdash.app.gpus import pane as pane_module

    pgid, pids = spawn_orphans(1)
    try:
        state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
        state.add_process(pids[0], 0, 3000)
        real_inspect = pane_module.inspect_host
        crash_during = asyncio.Event()

        async def inspect_while_crashing(host, snapshot, user, server_pgids, **kwargs):
            view = await real_inspect(host, snapshot, user, server_pgids, **kwargs)
            if crash_during.is_set() and server_pgids:
                crash_during.clear()
                app.gpu_pane.set_server_pgids(set())  # the app's poll saw the crash meanwhile
            return view

        monkeypatch.setattr(pane_module, "inspect_host", inspect_while_crashing)
        app = PaneApp(LocalHost(env=state.env()))
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.query_one(GpuPane)
            pane.set_server_pgids({pgid})
            await wait_for(pilot, lambda: [p.process_class for p in pane.processes] == ["server"])
            crash_during.set()
            await wait_for(pilot, lambda: not crash_during.is_set())
            assert [p.process_class for p in pane.processes] == ["orphan"]
    finally:
        reap_group(pgid)


async def test_a_poll_landing_while_the_pane_is_torn_down_is_dropped(tmp_path):
    """Quitting right after a stop: the server poll's last word (set_server_pgids) reached a pane whose widgets
    were already being removed, and the NoMatches failed the worker (``WorkerFailed`` at exit)."""
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    app = PaneApp(LocalHost(env=state.env()))
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(GpuPane)
        await wait_for(pilot, lambda: pane.view is not None)
        await pane.query_one("#gpu-devices").remove()  # as during the app's teardown
        pane.set_server_pgids(set())  # no NoMatches
        assert pane.view is not None
