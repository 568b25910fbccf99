"""Before a launch: which GPUs the command will use, and which of them already hold memory.

SGLang puts the scheduler of PP rank ``p``, TP rank ``t`` on device ``base_gpu_id + p * tp_size + t * gpu_id_step``
(``_launch_subprocesses`` in ``python/sglang/srt/entrypoints/engine.py``), counted among the devices CUDA can see;
without ``--enable-dp-attention`` each of the ``dp_size`` replicas starts ``tp_size * pp_size`` devices further
(``DataParallelController``, ``python/sglang/srt/managers/data_parallel_controller.py``).
``CUDA_VISIBLE_DEVICES`` renumbers them: device ``i`` is the ``i``-th entry of that list. nvidia-smi numbers GPUs in
PCI bus order; CUDA does so only with ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (its default, ``FASTEST_FIRST``, may order
mixed GPUs differently), so without it the mapping is stated as an assumption. Entries that are not plain numbers
(GPU UUIDs, MIG names) cannot be mapped: those launches are not judged.

SGLang sizes its static memory (weights + KV cache) as ``mem_fraction_static`` of the GPU's *total* memory
(``ModelRunner.init_memory_pool``), so memory another process already holds comes out of the same budget: a GPU
more than ``1 - mem_fraction_static`` full (25 % when the fraction is left to SGLang) is reported.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from specdash.gpu.model import GpuSnapshot

#: Share of a GPU's total memory in use above which a launch is warned about when --mem-fraction-static is not given.
DEFAULT_WARN_SHARE = 0.25


@dataclasses.dataclass(frozen=True)
class CrowdedGpu:
    """A GPU the launch will use that already holds memory: ``index`` (nvidia-smi's), ``used_mib``,
    ``total_mib``."""

    index: int
    used_mib: int
    total_mib: int

    @property
    def share(self) -> float:
        """Used / total (may exceed 1 on an inconsistent reading)."""
        return self.used_mib / self.total_mib


@dataclasses.dataclass(frozen=True)
class LaunchRoom:
    """What :func:`launch_room` found: ``devices`` (nvidia-smi indices the launch will use; empty when they
    cannot be told), ``crowded`` (those above ``threshold``, a share of total memory), ``assumption`` (a sentence
    when the device mapping rests on one, else "")."""

    devices: tuple[int, ...]
    crowded: tuple[CrowdedGpu, ...]
    threshold: float
    assumption: str = ""

    def describe(self) -> str:
        """Plain text, one line per crowded GPU, then what it means; "" when none is crowded."""
        if not self.crowded:
            return ""
        lines = [f"GPU {g.index}: {g.used_mib} of {g.total_mib} MiB already in use ({g.share:.0%})"
                 for g in self.crowded]
        lines.append(f"SGLang takes its share of each GPU's total memory (mem_fraction_static) for weights and KV "
                     f"cache; with more than {self.threshold:.0%} already held by other processes it may run out of "
                     "memory at start-up or get a small KV cache.")
        if self.assumption:
            lines.append(self.assumption)
        return "\n".join(lines)


def _int(value: Any, default: int) -> int:
    try:
        return int(value) if value not in (None, "", "auto") else default
    except (TypeError, ValueError):
        return default


def launch_devices(effective: dict[str, Any], env: dict[str, str]) -> tuple[tuple[int, ...], str]:
    """``(nvidia-smi indices, assumption)`` of the GPUs a launch with these resolved arguments (``effective``: the
    validator's ``tp_size``, ``pp_size``, ``dp_size``, ``enable_dp_attention``, ``base_gpu_id``, ``gpu_id_step``)
    and environment uses; ``((), "")`` when they cannot be told (a ``CUDA_VISIBLE_DEVICES`` entry that is not a
    number, or fewer entries than devices needed)."""
    tp = max(1, _int(effective.get("tp_size"), 1))
    pp = max(1, _int(effective.get("pp_size"), 1))
    dp = max(1, _int(effective.get("dp_size"), 1))
    base = max(0, _int(effective.get("base_gpu_id"), 0))
    step = max(1, _int(effective.get("gpu_id_step"), 1))
    replicas = 1 if effective.get("enable_dp_attention") else dp
    logical = [base + r * tp * pp + p * tp + t * step for r in range(replicas) for p in range(pp) for t in range(tp)]
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return tuple(logical), ""
    entries = [e.strip() for e in visible.split(",") if e.strip()]
    if not all(e.isdigit() for e in entries) or any(i >= len(entries) for i in logical):
        return (), ""
    devices = tuple(int(entries[i]) for i in logical)
    assumption = "" if env.get("CUDA_DEVICE_ORDER") == "PCI_BUS_ID" else (
        f"(CUDA_VISIBLE_DEVICES={visible} read as nvidia-smi's numbering; CUDA numbers devices that way only with "
        "CUDA_DEVICE_ORDER=PCI_BUS_ID)")
    return devices, assumption


def launch_room(snapshot: GpuSnapshot | None, effective: dict[str, Any], env: dict[str, str]) -> LaunchRoom:
    """The GPUs of ``snapshot`` (the latest sample; None or an error: nothing known, nothing reported) that a launch
    with ``effective`` arguments and ``env`` will use and that already hold more than the threshold."""
    fraction = effective.get("mem_fraction_static")
    threshold = DEFAULT_WARN_SHARE
    if isinstance(fraction, (int, float)) and not isinstance(fraction, bool) and 0 < fraction < 1:
        threshold = 1 - float(fraction)
    devices, assumption = launch_devices(effective, env)
    if snapshot is None or snapshot.error or not devices:
        return LaunchRoom(devices, (), threshold)
    by_index = {g.index: g for g in snapshot.gpus}
    crowded = []
    for index in devices:
        gpu = by_index.get(index)
        if gpu is None or gpu.memory_used_mib is None or not gpu.memory_total_mib:
            continue
        if gpu.memory_used_mib / gpu.memory_total_mib > threshold:
            crowded.append(CrowdedGpu(index, gpu.memory_used_mib, gpu.memory_total_mib))
    return LaunchRoom(devices, tuple(crowded), threshold, assumption if crowded else "")
