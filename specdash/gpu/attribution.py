"""GPU memory the driver cannot attribute: per GPU, used memory minus the memory of the processes it lists.

An idle GPU shows some used memory with no process (driver and ECC reservations, a persistence daemon: a few MiB to
a few hundred MiB), and a GPU with processes shows a little more than their sum (per-context overhead). Only the
difference beyond :data:`IDLE_BASELINE_MIB` (setting: environment variable ``SPECDASH_GPU_IDLE_MIB``) is reported:
"GPU 0: 68.3 GiB held by processes the driver does not list". That happens inside a container with its own PID
namespace (LXC, Docker without ``--pid=host``), where ``nvidia-smi`` lists no processes while memory is held.
"""

from __future__ import annotations

import os

from specdash.gpu.model import GpuSnapshot

IDLE_BASELINE_ENV = "SPECDASH_GPU_IDLE_MIB"
IDLE_BASELINE_MIB = 1024


def idle_baseline_mib(environ: dict[str, str] | None = None) -> int:
    """:data:`IDLE_BASELINE_ENV` when it is a whole number >= 0, else :data:`IDLE_BASELINE_MIB`."""
    value = (environ if environ is not None else os.environ).get(IDLE_BASELINE_ENV, "").strip()
    return int(value) if value.isdigit() else IDLE_BASELINE_MIB


def unattributed_mib(snapshot: GpuSnapshot) -> dict[int, int | None]:
    """GPU index -> used MiB not held by any process the driver lists (never below 0); None when it cannot be told
    (used memory ``[N/A]``, or a listed process on that GPU reports ``[N/A]``, as in MIG mode)."""
    out: dict[int, int | None] = {}
    for gpu in snapshot.gpus:
        procs = [p for p in snapshot.processes if p.gpu_index == gpu.index]
        if gpu.memory_used_mib is None or any(p.used_mib is None for p in procs):
            out[gpu.index] = None
            continue
        out[gpu.index] = max(0, gpu.memory_used_mib - sum(p.used_mib or 0 for p in procs))
    return out


def beyond_baseline(unattributed: dict[int, int | None], baseline_mib: int | None = None) -> dict[int, int]:
    """The GPUs whose unattributed memory exceeds the idle baseline (default :func:`idle_baseline_mib`)."""
    limit = idle_baseline_mib() if baseline_mib is None else baseline_mib
    return {i: m for i, m in unattributed.items() if m is not None and m > limit}
