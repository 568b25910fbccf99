"""Restart = stop the group, wait until its GPU memory is released, launch again."""

from __future__ import annotations

import asyncio
import posixpath
import time
from collections.abc import Awaitable, Callable

from specdash.hosts.base import Host
from specdash.server.launch import launch
from specdash.server.run_handle import RestartResult, RunHandle
from specdash.server.stop import stop
from specdash.text.redaction import REDACTED

#: ``gpu_memory_held_by(pgid) -> MiB`` still held on the host's GPUs by processes of process group ``pgid``
#: (from NVML / nvidia-smi joined with the process table — the GPU package provides it).
GpuMemoryHeldBy = Callable[[int], Awaitable[int]]


async def wait_gpu_released(pgid: int, gpu_memory_held_by: GpuMemoryHeldBy, *, timeout_s: float = 60.0,
                            poll_s: float = 0.5) -> int:
    """Poll ``gpu_memory_held_by(pgid)`` until it is 0 MiB or ``timeout_s`` passed; return the last value (MiB).

    The driver frees a dead process's memory a little after the process is gone, hence the wait. The value returned
    on a timeout comes from a look that began at or after the deadline, however long each look takes.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        looked_at = time.monotonic()
        held_mib = int(await gpu_memory_held_by(pgid))
        if held_mib <= 0 or looked_at >= deadline:
            return max(0, held_mib)
        await asyncio.sleep(max(0.0, min(poll_s, deadline - time.monotonic())))


async def _exact_command(host: Host, handle: RunHandle) -> str:
    """The command to launch again: ``handle.command``, or, when that is the redacted text of a run found again
    from ``run.json`` (:func:`specdash.server.runs.find_runs`), the exact command kept in the run dir's
    ``command.sh`` (0600)."""
    if REDACTED not in handle.command:
        return handle.command
    stored = await host.read_file(posixpath.join(handle.run_dir, "command.sh"))
    if not stored:
        return handle.command
    return stored.decode("utf-8", "replace").rstrip("\n")


async def restart(host: Host, handle: RunHandle, *, gpu_memory_held_by: GpuMemoryHeldBy,
                  command: str | None = None, flag_release: str | None = None, grace_s: float = 15.0,
                  release_timeout_s: float = 60.0, poll_s: float = 0.5, run_dir: str | None = None,
                  sweep_config: str = "") -> RestartResult:
    """Stop ``handle``'s server (:func:`specdash.server.stop`), wait until ``gpu_memory_held_by(handle.pgid)``
    reports 0 MiB (at most ``release_timeout_s``), then :func:`specdash.server.launch` ``command`` (default: the
    same command, the exact one even when ``handle`` came from the redacted ``run.json``) in a new run directory,
    its port read with flag-table ``flag_release`` (None: the newest); ``sweep_config`` as for ``launch``.

    Does not relaunch when the stop was refused or left processes alive, or when memory is still held at the
    timeout: ``RestartResult.new_handle`` is None and ``held_mib`` says how much — the caller offers to kill
    what holds it (GPU package) and then calls ``launch`` itself. Raises HostError when the host is unreachable.
    """
    stopped = await stop(host, handle, grace_s, poll_s=min(poll_s, 0.2))
    if stopped.refused or not stopped.gone:
        held = int(await gpu_memory_held_by(handle.pgid))
        return RestartResult(stopped, released=False, held_mib=held, new_handle=None)
    held = await wait_gpu_released(handle.pgid, gpu_memory_held_by, timeout_s=release_timeout_s, poll_s=poll_s)
    if held > 0:
        return RestartResult(stopped, released=False, held_mib=held, new_handle=None)
    new_handle = await launch(host, command or await _exact_command(host, handle), flag_release=flag_release,
                              run_dir=run_dir, sweep_config=sweep_config)
    return RestartResult(stopped, released=True, held_mib=0, new_handle=new_handle)
