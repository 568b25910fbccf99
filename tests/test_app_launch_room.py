"""Launching onto GPUs other processes already fill: the console says so with the figures and asks first."""

from __future__ import annotations

import json
import pathlib

from support.double import empty_log, harness, host_env
from support.pilot import wait_until

from specdash.app.main import SpecdashApp
from specdash.app.modals.confirm import ConfirmScreen
from specdash.gpu.launch_room import launch_devices, launch_room
from specdash.gpu.model import GpuInfo, GpuSnapshot
from specdash.hosts.local import LocalHost


def _fill_gpu0(env: dict[str, str], used_mib: int) -> None:
    """Another tenant's memory on GPU 0 of the fake nvidia-smi (memory no listed process holds)."""
    path = pathlib.Path(env["FAKE_NVIDIA_SMI_STATE"])
    state = json.loads(path.read_text()) if path.exists() else {}
    state["gpus"][0]["base_used_mib"] = used_mib
    path.write_text(json.dumps(state))


def _screen_text(screen) -> str:
    return "\n".join(str(w.render()) for w in screen.query("Static"))


async def test_launch_onto_a_gpu_three_quarters_full_warns_with_the_figures(tmp_path, started_groups):
    env = host_env(tmp_path, "fast")
    app = SpecdashApp(LocalHost(env=env), log_path=empty_log(tmp_path), gpu_interval_s=0.3)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.gpu_pane.view is not None, what="first GPU sample")
        _fill_gpu0(env, 61200)
        await wait_until(pilot, lambda: app.gpu_pane.view.snapshot.gpus[0].memory_used_mib >= 61200,
                         what="GPU 0 sampled at 75 %")
        app.builder_pane.set_command(harness.launch_command(harness.free_port()))
        await pilot.pause(0.2)
        await pilot.press("l")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the launch question")
        used = app.gpu_pane.view.snapshot.gpus[0].memory_used_mib
        figures = f"GPU 0: {used} of 81559 MiB already in use (75%)"
        # the dialog's body is drawn after its title on a loaded machine: wait for it
        await wait_until(pilot, lambda: figures in _screen_text(app.screen), what="the dialog's figures",
                         state=lambda: _screen_text(app.screen))
        text = _screen_text(app.screen)
        assert "Launch onto GPUs already in use?" in text
        assert "GPU 1" not in text  # a TP-1 launch uses GPU 0 only
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), what="the question answered")
        await pilot.pause(0.3)  # a launch that wrongly ran would have started by now
        assert app.run_handle is None  # declined: nothing launched
        await pilot.press("l")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the launch question again")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.run_handle is not None, what="launch after yes")
        started_groups.append(app.run_handle.pgid)


async def test_launch_onto_free_gpus_asks_nothing(tmp_path, started_groups):
    env = host_env(tmp_path, "fast")
    app = SpecdashApp(LocalHost(env=env), log_path=empty_log(tmp_path), gpu_interval_s=0.3)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.gpu_pane.view is not None, what="first GPU sample")
        app.builder_pane.set_command(harness.launch_command(harness.free_port()))
        await pilot.pause(0.2)
        await pilot.press("l")
        await wait_until(pilot, lambda: app.run_handle is not None, what="launch")
        started_groups.append(app.run_handle.pgid)
        assert not isinstance(app.screen, ConfirmScreen)


def _snapshot(*used: int) -> GpuSnapshot:
    gpus = tuple(GpuInfo(i, "NVIDIA H100 80GB HBM3", f"GPU-{i}", u, 81559, 0) for i, u in enumerate(used))
    return GpuSnapshot(0.0, "nvidia-smi", gpus=gpus)


def test_devices_follow_tp_base_gpu_id_and_cuda_visible_devices():
    assert launch_devices({"tp_size": 2, "base_gpu_id": 1}, {}) == ((1, 2), "")
    assert launch_devices({"tp_size": 2, "dp_size": 2}, {})[0] == (0, 1, 2, 3)
    assert launch_devices({"tp_size": 2, "dp_size": 2, "enable_dp_attention": True}, {})[0] == (0, 1)
    devices, assumption = launch_devices({"tp_size": 1, "base_gpu_id": 1}, {"CUDA_VISIBLE_DEVICES": "6,3"})
    assert devices == (3,) and "CUDA_DEVICE_ORDER=PCI_BUS_ID" in assumption
    assert launch_devices({}, {"CUDA_VISIBLE_DEVICES": "3", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}) == ((3,), "")
    assert launch_devices({}, {"CUDA_VISIBLE_DEVICES": "GPU-5f1c0a3e"}) == ((), "")  # a UUID: not judged
    assert launch_devices({"tp_size": 4}, {"CUDA_VISIBLE_DEVICES": "0,1"}) == ((), "")


def test_threshold_follows_mem_fraction_static():
    snap = _snapshot(20000, 4)  # 25 %
    assert launch_room(snap, {}, {}).crowded == ()
    room = launch_room(snap, {"mem_fraction_static": 0.88}, {})
    assert [g.index for g in room.crowded] == [0]
    assert "GPU 0: 20000 of 81559 MiB already in use (25%)" in room.describe()
    assert launch_room(None, {}, {}).describe() == ""  # no sample: nothing claimed
