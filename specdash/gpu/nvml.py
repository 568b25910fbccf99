"""Read GPUs and their processes through NVML (nvidia-ml-py, ``import pynvml``) on this machine.

Blocking calls: run them in a worker thread (see :mod:`specdash.gpu.sampler`), never on the event loop — NVML
calls can stall for seconds when a GPU is wedged or the driver is busy tearing down a context.
"""

from __future__ import annotations

import time
from typing import Any

from specdash.gpu.model import GpuInfo, GpuProcess, GpuSnapshot

_MIB = 1024 * 1024


class NvmlUnavailable(Exception):
    """NVML cannot be used here (library missing, no driver, no GPU); the message is one line."""


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class NvmlReader:
    """Holds an NVML session (``nvmlInit`` once) and reads one :class:`GpuSnapshot` per :meth:`read` call.

    Raises :class:`NvmlUnavailable` from :meth:`open` when NVML cannot start (pynvml missing, library not
    found, driver not loaded). :meth:`read` never raises: errors become ``GpuSnapshot.error``.
    """

    def __init__(self) -> None:
        self._nv: Any = None  # the pynvml module once open (it ships no type information)

    def open(self) -> None:
        """``nvmlInit``; raises NvmlUnavailable with a one-line reason."""
        try:
            import pynvml
        except ImportError as exc:  # pragma: no cover - dependency of the package
            raise NvmlUnavailable(f"nvidia-ml-py not installed ({exc})") from exc
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as exc:
            raise NvmlUnavailable(f"NVML unavailable: {exc}") from exc
        self._nv = pynvml

    def close(self) -> None:
        """``nvmlShutdown`` (ignored when not open)."""
        if self._nv is not None:
            try:
                self._nv.nvmlShutdown()
            except Exception:  # noqa: BLE001 - shutting down, nothing to report
                pass
            self._nv = None

    def _processes(self, handle, index: int, uuid: str) -> list[GpuProcess]:
        nv = self._nv
        out: list[GpuProcess] = []
        handles = [handle]
        try:  # MIG: processes live on the MIG device handles
            current, _pending = nv.nvmlDeviceGetMigMode(handle)
            if current == getattr(nv, "NVML_DEVICE_MIG_ENABLE", 1):
                for mig in range(nv.nvmlDeviceGetMaxMigDeviceCount(handle)):
                    try:
                        handles.append(nv.nvmlDeviceGetMigDeviceHandleByIndex(handle, mig))
                    except nv.NVMLError:
                        continue
        except nv.NVMLError:
            pass
        seen: set[int] = set()
        for h in handles:
            for kind, getters in (("compute", ("nvmlDeviceGetComputeRunningProcesses",
                                               "nvmlDeviceGetComputeRunningProcesses_v2")),
                                  ("graphics", ("nvmlDeviceGetGraphicsRunningProcesses",
                                                "nvmlDeviceGetGraphicsRunningProcesses_v2"))):
                infos = None
                for getter in getters:
                    fn = getattr(nv, getter, None)
                    if fn is None:
                        continue
                    try:
                        infos = fn(h)
                        break
                    except nv.NVMLError_FunctionNotFound:  # older driver: try the older entry point
                        continue
                    except nv.NVMLError:
                        break
                for info in infos or []:
                    pid = int(info.pid)
                    if pid in seen:
                        continue
                    seen.add(pid)
                    used = getattr(info, "usedGpuMemory", None)
                    try:
                        name = _text(nv.nvmlSystemGetProcessName(pid))
                    except nv.NVMLError:
                        name = "[Not Found]"
                    out.append(GpuProcess(pid=pid, gpu_index=index, gpu_uuid=uuid,
                                          used_mib=None if used is None else int(used) // _MIB,
                                          name=name, kind=kind))
        return out

    def read(self) -> GpuSnapshot:
        """One snapshot of every GPU and its compute/graphics processes (memory in MiB)."""
        now = time.time()
        nv = self._nv
        if nv is None:
            return GpuSnapshot(time_s=now, source="nvml", error="NVML not initialised")
        try:
            count = nv.nvmlDeviceGetCount()
        except nv.NVMLError as exc:
            return GpuSnapshot(time_s=now, source="nvml", error=f"NVML: {exc}")
        if count == 0:
            return GpuSnapshot(time_s=now, source="nvml", error="No devices were found")
        gpus: list[GpuInfo] = []
        procs: list[GpuProcess] = []
        problems: list[str] = []
        for index in range(count):
            try:
                handle = nv.nvmlDeviceGetHandleByIndex(index)
                name = _text(nv.nvmlDeviceGetName(handle))
                uuid = _text(nv.nvmlDeviceGetUUID(handle))
            except nv.NVMLError as exc:  # e.g. "GPU is lost": show what the others say
                problems.append(f"GPU {index}: {exc}")
                continue
            used = total = util = None
            try:
                mem = nv.nvmlDeviceGetMemoryInfo(handle)
                used, total = int(mem.used) // _MIB, int(mem.total) // _MIB
            except nv.NVMLError:
                pass
            try:
                util = int(nv.nvmlDeviceGetUtilizationRates(handle).gpu)
            except nv.NVMLError:  # NotSupported in MIG mode -> [N/A]
                pass
            gpus.append(GpuInfo(index=index, name=name, uuid=uuid, memory_used_mib=used, memory_total_mib=total,
                                utilization_pct=util))
            procs.extend(self._processes(handle, index, uuid))
        if not gpus:
            return GpuSnapshot(time_s=now, source="nvml", error="; ".join(problems) or "no GPU readable")
        return GpuSnapshot(time_s=now, source="nvml", gpus=tuple(gpus), processes=tuple(procs),
                           warning="; ".join(problems) or None)
