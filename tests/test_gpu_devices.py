"""Finding processes that hold GPU device files (read-only, through the Host: locally and over SSH), the device
pattern setting, the idle baseline setting and container detection."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from specdash.gpu.attribution import beyond_baseline, idle_baseline_mib, unattributed_mib
from specdash.gpu.container import ContainerInfo, detect_container, parse_container
from specdash.gpu.devices import DEFAULT_DEVICE_GLOBS, device_globs, find_holders, parse_holders
from specdash.gpu.model import GpuInfo, GpuProcess, GpuSnapshot
from specdash.hosts.local import LocalHost

HOLD = "import os, sys, time\nfd = os.open(sys.argv[1], os.O_RDONLY)\nprint('ready', flush=True)\ntime.sleep(60)\n"


def hold(path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"ready"
    return proc


def test_settings_from_the_environment():
    assert device_globs({}) == DEFAULT_DEVICE_GLOBS == ("/dev/nvidia*", "/dev/dri/*")
    assert device_globs({"SPECDASH_GPU_DEVICE_GLOBS": "/tmp/a*::/tmp/b"}) == ("/tmp/a*", "/tmp/b")
    assert idle_baseline_mib({}) == 1024 and idle_baseline_mib({"SPECDASH_GPU_IDLE_MIB": "300"}) == 300
    assert idle_baseline_mib({"SPECDASH_GPU_IDLE_MIB": "-5"}) == 1024


def test_unattributed_memory_per_gpu():
    gpus = (GpuInfo(0, "H100", "GPU-a", 70004, 81559, 0), GpuInfo(1, "H100", "GPU-b", 36458, 81559, 0),
            GpuInfo(2, "H100", "GPU-c", None, 81559, 0), GpuInfo(3, "H100", "GPU-d", 900, 81559, None))
    snap = GpuSnapshot(0, "nvml", gpus=gpus, processes=(GpuProcess(7, 1, "GPU-b", 36454, "x"),
                                                        GpuProcess(8, 3, "GPU-d", None, "y")))
    assert unattributed_mib(snap) == {0: 70004, 1: 4, 2: None, 3: None}
    assert beyond_baseline(unattributed_mib(snap), 1024) == {0: 70004}


def test_holders_parser():
    text = "/proc/12/fd /dev/nvidia0\n/proc/12/fd /dev/nvidiactl\n/proc/12/fd /dev/nvidia0\n" \
           "/proc/x/fd /dev/nvidia0\n/proc/13/fd /dev/nvidia-uvm (deleted)\nnoise\n--specdash-find-end--\n"
    assert parse_holders(text) == {12: ("/dev/nvidia0", "/dev/nvidiactl"), 13: ("/dev/nvidia-uvm",)}
    assert parse_holders("/proc/12/fd /dev/nvidia0\n") is None  # the scan did not finish


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_parsers_never_raise(text):
    parse_holders(text)
    parse_holders(text + "\n--specdash-find-end--\n")
    parse_container(text)


def test_container_evidence():
    assert parse_container("/.dockerenv\n--\n\n--\n--\n0::/\n").kind == "docker"
    assert parse_container("/run/.containerenv\n--\n\n--\n--\n").kind == "podman"
    lxc = parse_container("--\nlxc\n--\ncontainer=lxc\n--\n0::/\n")
    assert (lxc.kind, lxc.evidence) == ("lxc", "/run/systemd/container says 'lxc'")
    assert parse_container("--\n\n--\ncontainer=lxc\n--\n").evidence == "PID 1 has container=lxc"
    assert parse_container("--\n\n--\n--\n12:pids:/kubepods/besteffort/pod1/abc\n").kind == "kubernetes"
    assert parse_container("--\n\n--\n--\n0::/\n") is None
    assert "host PIDs" in lxc.meaning


def test_container_detection_on_this_machine_matches_its_evidence():
    found = asyncio.run(detect_container(LocalHost()))
    if os.path.exists("/.dockerenv"):
        assert found is not None and found.kind == "docker" and found.evidence == "/.dockerenv"
    elif found is not None:
        assert found.evidence  # whatever it is, it says why


def test_holders_found_locally_only_for_matching_files(tmp_path):
    dev, other = tmp_path / "nvidia0", tmp_path / "other"
    dev.write_bytes(b"")
    other.write_bytes(b"")
    a, b = hold(dev), hold(other)
    try:
        holders, error = asyncio.run(find_holders(LocalHost(), (f"{tmp_path}/nvidia*",)))
        assert error is None and holders == {a.pid: (str(dev),)}
    finally:
        for proc in (a, b):
            proc.kill()
            proc.wait()


def test_holders_found_over_ssh(sshd, tmp_path):
    dev = tmp_path / "nvidia-uvm"
    dev.write_bytes(b"")
    proc = hold(dev)

    async def main():
        host = sshd.make_host()
        try:
            await host.connect()
            return await find_holders(host, (f"{tmp_path}/nvidia*",))
        finally:
            await host.close()

    try:
        holders, error = asyncio.run(main())
        assert error is None and holders == {proc.pid: (str(dev),)}
    finally:
        proc.kill()
        proc.wait()


def test_in_a_container_a_listed_pid_without_device_files_is_not_trusted(tmp_path):
    """Inside a container the driver's PID may name another process here. Real processes: one holds the (test) GPU
    device file and is listed; another is listed under a PID that, here, holds no device file — as a host PID
    that collides with a local process would be: it becomes ``unknown`` and is never a target."""
    from support.gpu import reap_group, spawn_orphans

    from specdash.gpu.container import ContainerInfo
    from specdash.gpu.inspect import build_view
    from specdash.gpu.proctable import read_process_table

    dev = tmp_path / "nvidia0"
    dev.write_bytes(b"")
    holder = hold(dev)
    pgid, (collider,) = spawn_orphans(1)  # an SGLang-titled orphan of ours: would be a target if trusted
    try:
        host = LocalHost()
        snap = GpuSnapshot(0, "nvidia-smi", gpus=(GpuInfo(0, "H100", "GPU-a", 70004, 81559, 0),),
                           processes=(GpuProcess(holder.pid, 0, "GPU-a", 10000, "python3"),
                                      GpuProcess(collider, 0, "GPU-a", 60000, "python3")))
        table = asyncio.run(read_process_table(host))
        holders, error = asyncio.run(find_holders(host, (f"{tmp_path}/nvidia*",)))
        user = table.get(holder.pid).user
        lxc = ContainerInfo("lxc", "test")
        rows = {p.pid: p for p in build_view(snap, table, user, holders=holders, container=lxc).processes}
        assert rows[collider].process_class == "unknown" and not rows[collider].cleanable
        assert "probably a host PID that means another process" in rows[collider].reason
        assert rows[holder.pid].process_class == "foreign"  # parent (this test) alive: left alone, as before
        # on a host that is not a container the same view keeps the driver's word
        plain = {p.pid: p for p in build_view(snap, table, user, holders=holders).processes}
        assert plain[collider].process_class == "orphan" and plain[collider].cleanable
    finally:
        holder.kill()
        holder.wait()
        reap_group(pgid)


def test_container_note_states_host_pids_only_when_a_pid_does_not_resolve():
    """In a container the driver *may* report host PIDs; the note says they do not exist here only when the
    process table shows it, and says the PIDs are processes here when they all resolve."""
    info = ContainerInfo("docker", "/.dockerenv")
    assert "may report host PIDs, which would not exist here" in info.meaning
    assert "do not exist here" not in info.meaning
    ok = info.checked(2, 0)
    assert "the 2 PIDs the driver lists are processes here" in ok and "host PIDs" not in ok
    assert "the PID the driver lists is a process here" in info.checked(1, 0)
    bad = info.checked(3, 1)
    assert "1 of the 3 PIDs the driver lists does not exist here or names another process (probably host PIDs" in bad
    assert info.checked(0, 0) == info.meaning


def test_ps_notes_in_a_container_say_what_the_process_table_showed():
    """The view's note (printed by ``ps``/``clean``, shown in the pane) for driver PIDs looked up in this machine's
    real process table: a live PID is "a process here"; a PID that does not exist is named as such."""
    from specdash.gpu.inspect import build_view
    from specdash.gpu.proctable import read_process_table

    table = asyncio.run(read_process_table(LocalHost()))
    info = ContainerInfo("docker", "/.dockerenv")
    gpus = (GpuInfo(0, "H100", "GPU-a", 20004, 81559, 0),)
    live = GpuSnapshot(0, "nvidia-smi", gpus=gpus, processes=(GpuProcess(os.getpid(), 0, "GPU-a", 20000, "py"),))
    note = build_view(live, table, "nobody", container=info).notes[0]
    assert "the PID the driver lists is a process here" in note and "do not exist" not in note
    gone = GpuSnapshot(0, "nvidia-smi", gpus=gpus, processes=(GpuProcess(os.getpid(), 0, "GPU-a", 10000, "py"),
                                                              GpuProcess(4_100_000, 0, "GPU-a", 10000, "x")))
    view = build_view(gone, table, "nobody", container=info)
    assert view.driver_pids_not_here == (4_100_000,)
    assert "1 of the 2 PIDs the driver lists does not exist here" in view.notes[0]
