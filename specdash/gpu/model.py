"""GPU data shapes shared by the samplers (NVML, nvidia-smi), the classifier and the GPU pane."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class GpuInfo:
    """One GPU. Memory in MiB, utilisation in percent (None when the driver reports ``[N/A]``)."""

    index: int
    name: str
    uuid: str
    memory_used_mib: int | None
    memory_total_mib: int | None
    utilization_pct: int | None


@dataclasses.dataclass(frozen=True)
class GpuProcess:
    """A compute process holding memory on a GPU: ``pid`` as the driver sees it (may be a host PID
    inside a container), ``gpu_index`` (None if its GPU UUID matched no GPU), ``used_mib`` (None for
    ``[N/A]``), ``name`` (process name as reported), ``kind`` (``"compute"``, or ``"graphics"`` for a
    display/graphics context that NVML reports; nvidia-smi's compute query lists compute processes only)."""

    pid: int
    gpu_index: int | None
    gpu_uuid: str
    used_mib: int | None
    name: str
    kind: str = "compute"


@dataclasses.dataclass(frozen=True)
class GpuSnapshot:
    """The GPUs and compute processes at one moment.

    ``time_s`` is ``time.time()`` of the sample; ``source`` is ``"nvml"`` or ``"nvidia-smi"``;
    ``error`` is a one-line explanation when no GPU could be read (``no NVIDIA driver``, ``No devices
    were found``, ``nvidia-smi not found``) — a normal state, shown as such. ``warning`` is a one-line note
    when the GPUs were read but something else was not (e.g. the process query failed); ``gpus`` stay valid.
    """

    time_s: float
    source: str
    gpus: tuple[GpuInfo, ...] = ()
    processes: tuple[GpuProcess, ...] = ()
    error: str | None = None
    warning: str | None = None
