"""GPU sampling through a real LocalHost running the fake nvidia-smi: one long-lived loop, errors as states."""

from __future__ import annotations

import asyncio
import os
import shlex

from support.gpu import FakeGpuState, reap_group, spawn_holder
from support.guard import guard

from specdash.gpu.sampler import make_sampler
from specdash.hosts.base import HostError
from specdash.hosts.local import LocalHost


async def test_stream_follows_processes_appearing_and_exiting(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    sampler = make_sampler(LocalHost(env=state.env()), interval_s=0.1, source="nvidia-smi")
    holder = spawn_holder()
    seen = []
    try:
        async for snap in sampler.snapshots():
            seen.append(snap)
            pids = [p.pid for p in snap.processes]
            if len(seen) == 1:
                assert snap.error is None and [g.memory_used_mib for g in snap.gpus] == [4, 4]
                state.add_process(holder.pid, 1, 12000)
            elif pids == [holder.pid] and snap.gpus[1].memory_used_mib == 12004:
                reap_group(holder.pid)
                holder.wait()
            elif len(seen) > 2 and not pids and any(s.processes for s in seen):
                break
            assert len(seen) < 60
    finally:
        await sampler.close()
        reap_group(holder.pid)
    assert seen[-1].gpus[1].memory_used_mib == 4


async def test_loop_is_one_remote_process_and_stops_on_close(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    marker = tmp_path / "loops"
    env = state.env()
    # count how many times a shell runs the loop: a wrapper around the fake logs each -L call (once per loop)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "nvidia-smi"
    fake = shlex.quote(state.env()["PATH"].split(":")[0] + "/nvidia-smi")  # the checkout path may hold spaces
    wrapper.write_text(f'#!/bin/sh\necho "$1" >> {shlex.quote(str(marker))}\nexec {fake} "$@"\n')
    wrapper.chmod(0o755)
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    sampler = make_sampler(LocalHost(env=env), interval_s=0.05, source="nvidia-smi")
    count = 0
    async for snap in sampler.snapshots():
        assert snap.error is None
        count += 1
        if count == 4:
            break
    await sampler.close()
    calls = marker.read_text().splitlines()
    assert calls.count("-L") == 1  # four samples, one loop started
    await asyncio.sleep(0.4)
    assert marker.read_text().splitlines() == calls  # the loop ended with the stream: no more nvidia-smi runs


async def test_no_driver_no_gpu_and_no_tool_are_snapshots_with_error(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", driver=False)
    sampler = make_sampler(LocalHost(env=state.env()), interval_s=0.1, source="nvidia-smi")
    snap = await sampler.sample_once()
    assert snap.error == "no NVIDIA driver on this host" and snap.gpus == ()
    async for snap in sampler.snapshots():
        assert snap.error == "no NVIDIA driver on this host"
        break
    await sampler.close()
    state.state.update(driver=True, gpus=[])
    state.write()
    assert (await sampler.sample_once()).error == "No devices were found"
    env = dict(os.environ, PATH=str(tmp_path))  # no nvidia-smi anywhere
    snap = await make_sampler(LocalHost(env=env), 0.1, source="nvidia-smi").sample_once()
    assert snap.error.startswith("nvidia-smi not found")


class _NoStreamHost(LocalHost):
    """A host whose streams fail at once (e.g. a server refusing extra channels): commands still run."""

    def stream(self, command):  # type: ignore[override]
        async def fail():
            raise HostError("channel open failed")
            yield b""  # pragma: no cover

        return fail()


async def test_falls_back_to_one_command_per_tick_when_streaming_fails(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    sampler = make_sampler(_NoStreamHost(env=state.env()), interval_s=0.05, source="nvidia-smi")
    snaps = []
    async for snap in sampler.snapshots():
        snaps.append(snap)
        if len(snaps) == 3:
            break
    await sampler.close()
    assert snaps[0].error == "cannot reach host: channel open failed"
    assert snaps[-1].error is None and len(snaps[-1].gpus) == 2


async def test_local_host_without_nvml_uses_nvidia_smi(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    sampler = make_sampler(LocalHost(env=state.env()), interval_s=0.1)
    snap = await asyncio.wait_for(sampler.sample_once(), guard(30))
    await sampler.close()
    if snap.source == "nvml":  # a machine with a real GPU: NVML answered
        assert snap.error is None or snap.gpus == ()
    else:
        assert snap.source == "nvidia-smi" and [g.memory_total_mib for g in snap.gpus] == [81559]
