"""Parse ``nvidia-smi`` CSV output into :mod:`specdash.gpu.model` types (pure: text in, data out).

The queries specdash runs (``--format=csv,noheader,nounits``; free-text columns last so that a name
containing ", " cannot shift the columns):

* GPUs: ``--query-gpu=index,uuid,memory.used,memory.total,utilization.gpu,name``
* compute processes: ``--query-compute-apps=pid,gpu_uuid,used_memory,process_name``

Quirks of the real tool handled here (NVIDIA driver 470-570, ``nvidia-smi --help-query-gpu``):

* values are separated by ``", "`` and never quoted;
* ``[N/A]`` for a value the driver cannot give (utilisation in MIG mode, per-process memory in MIG mode or in
  containers), ``[Not Found]`` / ``[Insufficient Permissions]`` / ``[Unknown Error]`` for a process name or value
  it could not read (a PID from another PID namespace);
* with ``--format=csv`` (no ``noheader``/``nounits``) a header line and units (``70000 MiB``, ``37 %``) — both
  are accepted;
* no compute processes -> empty output (header only with ``csv``);
* no driver -> exit 9 and "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver..." on
  stdout; no GPU -> "No devices were found" (exit 6); not installed -> exit 127 from the shell;
* MIG: ``nvidia-smi -L`` lists ``MIG ...  Device  N: (UUID: MIG-...)`` lines under their GPU; a process row may
  name a ``MIG-`` UUID, which :func:`parse_list_gpus` maps back to the parent GPU index.
"""

from __future__ import annotations

import re
import time

from specdash.gpu.model import GpuInfo, GpuProcess, GpuSnapshot

GPU_FIELDS: tuple[str, ...] = ("index", "uuid", "memory.used", "memory.total", "utilization.gpu", "name")
APP_FIELDS: tuple[str, ...] = ("pid", "gpu_uuid", "used_memory", "process_name")

GPU_QUERY = "nvidia-smi --query-gpu=" + ",".join(GPU_FIELDS) + " --format=csv,noheader,nounits"
APPS_QUERY = "nvidia-smi --query-compute-apps=" + ",".join(APP_FIELDS) + " --format=csv,noheader,nounits"
LIST_QUERY = "nvidia-smi -L"

NO_DRIVER_ERROR = "no NVIDIA driver on this host"
NO_DEVICES_ERROR = "No devices were found"
NOT_INSTALLED_ERROR = "nvidia-smi not found (no NVIDIA driver on this host)"

#: header names the real tool prints for a field (``--format=csv`` without ``noheader``)
_HEADER_TO_FIELD = {
    "index": "index",
    "name": "name",
    "uuid": "uuid",
    "memory.used [mib]": "memory.used",
    "memory.used": "memory.used",
    "memory.total [mib]": "memory.total",
    "memory.total": "memory.total",
    "utilization.gpu [%]": "utilization.gpu",
    "utilization.gpu": "utilization.gpu",
    "pid": "pid",
    "process_name": "process_name",
    "used_gpu_memory [mib]": "used_memory",
    "used_gpu_memory": "used_memory",
    "used_memory": "used_memory",
    "gpu_uuid": "gpu_uuid",
    "gpu_name": "gpu_name",
}

_BRACKETED = re.compile(r"^\[[^\]]*\]$")  # [N/A], [Not Found], [Insufficient Permissions], [Unknown Error]
_LIST_GPU = re.compile(r"^GPU (\d+): (.*?) \(UUID: ([^)]+)\)\s*$")
_LIST_MIG = re.compile(r"^\s+MIG .*?Device\s+(\d+): \(UUID: ([^)]+)\)\s*$")


def smi_error(exit_status: int, output: str) -> str | None:
    """The one-line reason ``nvidia-smi`` gave no data, or None when ``exit_status``/``output`` look normal.

    ``exit_status``: the command's exit code (127 = not installed, 9 = no driver, 6 = no devices; -1 = our
    timeout); ``output``: its stdout+stderr.
    """
    text = output.strip()
    lowered = text.lower()
    if "couldn't communicate with the nvidia driver" in lowered or exit_status == 9:
        return NO_DRIVER_ERROR
    if "no devices were found" in lowered:
        return NO_DEVICES_ERROR
    if exit_status == 127 or "command not found" in lowered or "nvidia-smi: not found" in lowered:
        return NOT_INSTALLED_ERROR
    if exit_status == -1:
        return "nvidia-smi timed out (driver busy or hung)"
    if exit_status != 0:
        first = text.splitlines()[0].strip() if text else ""
        return (f"nvidia-smi failed (exit {exit_status}): {first}" if first
                else f"nvidia-smi failed (exit {exit_status})")
    return None


def _value(text: str) -> str | None:
    """A CSV cell, or None for a bracketed non-value (``[N/A]``, ``[Not Found]``, ...)."""
    text = text.strip()
    return None if _BRACKETED.match(text) else text


def _number(text: str) -> int | None:
    """An integer cell, tolerating units (``70000 MiB``, ``37 %``) and decimals; None for ``[N/A]``/junk."""
    value = _value(text)
    if value is None:
        return None
    match = re.match(r"^(-?\d+(?:\.\d+)?)", value)
    return int(float(match.group(1))) if match else None


def _rows(text: str, fields: tuple[str, ...]) -> list[dict[str, str]]:
    """Split CSV lines into dicts keyed by field; a header line (if any) reorders the fields.

    The last column takes the rest of the line (it may contain ", ").
    """
    rows: list[dict[str, str]] = []
    order = list(fields)
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        cells = [c.strip() for c in line.split(", ")]
        lowered = [c.lower() for c in cells]
        if lowered and all(c in _HEADER_TO_FIELD for c in lowered) and lowered[0] in ("index", "pid", "uuid", "name",
                                                                                       "gpu_uuid", "process_name"):
            order = [_HEADER_TO_FIELD[c] for c in lowered]
            continue
        parts = line.split(", ", len(order) - 1)
        if len(parts) != len(order):
            continue  # e.g. "Unable to determine the device handle for GPU ...": not a data row
        rows.append(dict(zip(order, (p.strip() for p in parts), strict=False)))
    return rows


def parse_gpu_csv(text: str) -> list[GpuInfo]:
    """Parse ``--query-gpu`` output (fields :data:`GPU_FIELDS`, with or without header/units) into GpuInfo.

    Memory in MiB, utilisation in percent; ``[N/A]`` becomes None. Lines that are not data rows are skipped.
    """
    gpus = []
    for row in _rows(text, GPU_FIELDS):
        index = _number(row.get("index", ""))
        if index is None:
            continue
        gpus.append(
            GpuInfo(
                index=index,
                name=_value(row.get("name", "")) or "",
                uuid=_value(row.get("uuid", "")) or "",
                memory_used_mib=_number(row.get("memory.used", "[N/A]")),
                memory_total_mib=_number(row.get("memory.total", "[N/A]")),
                utilization_pct=_number(row.get("utilization.gpu", "[N/A]")),
            )
        )
    return gpus


def parse_list_gpus(text: str) -> dict[str, int]:
    """Parse ``nvidia-smi -L`` into ``{uuid: gpu_index}`` for GPUs and their MIG devices (``MIG-...`` -> parent)."""
    mapping: dict[str, int] = {}
    current: int | None = None
    for line in text.splitlines():
        match = _LIST_GPU.match(line)
        if match:
            current = int(match.group(1))
            mapping[match.group(3).strip()] = current
            continue
        match = _LIST_MIG.match(line)
        if match and current is not None:
            mapping[match.group(2).strip()] = current
    return mapping


def parse_apps_csv(text: str, gpus: list[GpuInfo] | tuple[GpuInfo, ...] = (),
                   uuid_to_index: dict[str, int] | None = None) -> list[GpuProcess]:
    """Parse ``--query-compute-apps`` output (fields :data:`APP_FIELDS`) into GpuProcess.

    ``gpu_index`` comes from the row's GPU UUID matched against ``gpus`` (or ``uuid_to_index`` from
    :func:`parse_list_gpus`, for MIG UUIDs); None when unmatched. ``used_mib`` None for ``[N/A]``; ``name`` is
    kept as printed (``[Not Found]`` stays visible: it means another PID namespace).
    """
    index_of = {g.uuid: g.index for g in gpus}
    if uuid_to_index:
        index_of.update(uuid_to_index)
    processes = []
    for row in _rows(text, APP_FIELDS):
        pid = _number(row.get("pid", ""))
        if pid is None:
            continue
        uuid = (_value(row.get("gpu_uuid", "")) or "").strip()
        processes.append(
            GpuProcess(
                pid=pid,
                gpu_index=index_of.get(uuid),
                gpu_uuid=uuid,
                used_mib=_number(row.get("used_memory", "[N/A]")),
                name=row.get("process_name", "").strip(),
            )
        )
    return processes


def snapshot_from_smi(gpu_status: int, gpu_text: str, apps_status: int | None = None, apps_text: str = "",
                      list_text: str = "", time_s: float | None = None) -> GpuSnapshot:
    """Build a GpuSnapshot from the two queries' exit codes and output (and optionally ``-L`` output).

    Never raises: no driver / no device / not installed / a failed query give a snapshot with ``error`` set.
    """
    now = time.time() if time_s is None else time_s
    error = smi_error(gpu_status, gpu_text)
    if error:
        return GpuSnapshot(time_s=now, source="nvidia-smi", error=error)
    gpus = parse_gpu_csv(gpu_text)
    if not gpus:
        first = gpu_text.strip().splitlines()[0] if gpu_text.strip() else "no GPU rows"
        return GpuSnapshot(time_s=now, source="nvidia-smi", error=f"nvidia-smi gave no GPU rows: {first}")
    processes: list[GpuProcess] = []
    apps_error = smi_error(apps_status, apps_text) if apps_status is not None else None
    if not apps_error:
        processes = parse_apps_csv(apps_text, gpus, parse_list_gpus(list_text) if list_text else None)
    return GpuSnapshot(time_s=now, source="nvidia-smi", gpus=tuple(gpus), processes=tuple(processes),
                       warning=None if not apps_error else f"processes unavailable: {apps_error}")
