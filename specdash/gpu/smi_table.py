"""Read a *pasted* ``nvidia-smi`` output: the human table or the CSV query outputs (pure: text in, data out).

What people paste into issues, and what this module reads from it:

* the human table of ``nvidia-smi`` (drivers 418 to 580): the header
  ``| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |``; per GPU the rows
  ``|   0  NVIDIA H100 80GB HBM3   On  | 00000000:18:00.0 Off | 0 |`` and
  ``| N/A 34C P0 117W / 700W | 76543MiB / 81559MiB | 0% Default |`` (GPU names longer than the column are cut
  and end in ``...``); the ``MIG devices:`` table (``|  0    1   0   0  |  13MiB / 40192MiB | ...``); the
  ``Processes:`` table with its columns ``GPU GI CI PID Type Process name GPU Memory Usage`` (drivers before 450 have
  no GI/CI columns). Long process names are cut by nvidia-smi and start with ``...`` (the end of the path is kept).
  ``Type`` is ``C`` (compute), ``G`` (graphics), ``C+G``, or ``M`` / ``M+C`` (MPS). Memory is ``N/A`` in MIG mode,
  on Windows (WDDM) and in some containers. ``No running processes found`` means the driver listed none.
* the CSV query outputs: ``--query-compute-apps=pid,process_name,used_memory --format=csv[,noheader][,nounits]``
  (header ``pid, process_name, used_gpu_memory [MiB]``) and ``--query-gpu=index,name,memory.used,...`` (header
  ``index, name, memory.used [MiB], ...``), in any field order when the header is there.

A paste is often cut: a process row without its memory column keeps memory unknown (``None``) and a note says so;
a row cut before its ``Type`` column is not read at all, since its PID may be cut too. Without a CSV header the
columns are taken in the order nvidia-smi's own documentation uses (``pid`` before ``used_memory``) and a note says
so; GPU memory without a header is read only from values with units (the smaller is used, the larger total).

Two or more tables in one paste (a "before / after" pair, a ``watch nvidia-smi`` capture) are snapshots of one
machine at different times: only the last is read, and a note names the lines of all of them.

Never raises for any text. Field meanings: ``nvidia-smi --help-query-gpu`` / ``--help-query-compute-apps``.
"""

from __future__ import annotations

import dataclasses
import re

#: the Type column's values: compute, graphics, both, MPS server / MPS client
PROCESS_TYPES: tuple[str, ...] = ("C", "G", "C+G", "M", "M+C")
#: types with a graphics context (a display, a desktop compositor): never offered for killing
GRAPHICS_TYPES: frozenset[str] = frozenset({"G", "C+G"})


@dataclasses.dataclass(frozen=True)
class PastedGpu:
    """One GPU row. ``index``; ``name`` as printed (may end in ``...`` when cut); ``name_cut``; memory in MiB and
    utilisation in percent, None when not printed / ``N/A``; ``bus_id`` ("" when not printed); ``mig`` (True when
    the MIG mode column says Enabled, None when not printed); ``line``: 1-based line of the row in the paste;
    ``uuid`` (CSV only, "" otherwise)."""

    index: int
    name: str
    name_cut: bool
    memory_used_mib: int | None
    memory_total_mib: int | None
    utilization_pct: int | None
    bus_id: str
    mig: bool | None
    line: int
    uuid: str = ""


@dataclasses.dataclass(frozen=True)
class PastedProcess:
    """One process row. ``gpu_index`` (None when the row does not say); ``gi`` / ``ci`` (MIG GPU / compute
    instance, None for ``N/A`` or not printed); ``pid``; ``process_type`` (one of :data:`PROCESS_TYPES`, None in
    CSV outputs, which list compute processes only); ``name`` as printed; ``name_cut`` (nvidia-smi cut it: the
    start is lost); ``used_mib`` (None when ``N/A`` or cut off); ``cut`` (the row ends before its memory column);
    ``gpu_uuid`` (CSV only, "" otherwise); ``line``: 1-based line in the paste."""

    gpu_index: int | None
    gi: int | None
    ci: int | None
    pid: int
    process_type: str | None
    name: str
    name_cut: bool
    used_mib: int | None
    cut: bool
    line: int
    gpu_uuid: str = ""


@dataclasses.dataclass(frozen=True)
class MigDevice:
    """A row of the ``MIG devices:`` table: parent ``gpu``, ``gi``, ``ci``, ``mig_dev``, memory in MiB."""

    gpu: int
    gi: int
    ci: int
    mig_dev: int
    memory_used_mib: int
    memory_total_mib: int
    line: int


@dataclasses.dataclass
class PastedSmi:
    """What a pasted nvidia-smi output says.

    ``formats``: the shapes found, in order (``"table"``, ``"csv-apps"``, ``"csv-gpus"``); ``smi_version``,
    ``driver_version``, ``cuda_version`` (None when not in the paste); ``gpus``, ``mig_devices``, ``processes``;
    ``processes_listed``: True when a process list was in the paste (a table's ``Processes:`` section or a CSV apps
    output), False when it was not (nothing can be said about processes); ``no_processes``: the table said ``No
    running processes found``; ``complete``: the table's process section ended with its bottom border (False
    when the paste stops inside it, so more rows may be missing); ``error``: the tool's own failure message
    (``NVIDIA-SMI has failed ...``, ``No devices were found``); ``notes``: one line each, what could not be read.
    """

    formats: list[str] = dataclasses.field(default_factory=list)
    smi_version: str | None = None
    driver_version: str | None = None
    cuda_version: str | None = None
    gpus: list[PastedGpu] = dataclasses.field(default_factory=list)
    mig_devices: list[MigDevice] = dataclasses.field(default_factory=list)
    processes: list[PastedProcess] = dataclasses.field(default_factory=list)
    processes_listed: bool = False
    no_processes: bool = False
    complete: bool = True
    error: str | None = None
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def found(self) -> bool:
        """True when the paste held anything of nvidia-smi (a GPU, a process list, a header or its error)."""
        return bool(self.formats or self.gpus or self.processes or self.error or self.driver_version)


_HEADER = re.compile(r"NVIDIA-SMI\s+(\S+)\s+Driver Version:\s*(\S+)(?:\s+CUDA Version:\s*(\S+))?")
_PERSISTENCE = r"(?:On|Off|WDDM|TCC|N/A)"
_GPU_ROW1 = re.compile(r"^\|\s*(\d{1,3})\s+(.+?)\s+" + _PERSISTENCE + r"\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f:.]+)?")
_GPU_ROW2 = re.compile(r"^\|.*?\|\s*(\d+)\s*MiB\s*/\s*(\d+)\s*MiB\s*\|\s*(?:(\d+)\s*%|N/A)")
_GPU_ROW3 = re.compile(r"^\|[^|]*\|[^|]*\|\s*(Enabled|Disabled|N/A)\s*\|\s*$")
_MIG_ROW = re.compile(r"^\|\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\|\s*(\d+)\s*MiB\s*/\s*(\d+)\s*MiB\s*\|")
_TYPE = r"(C\+G|M\+C|C|G|M)"
# GPU, GI, CI, PID, Type, then the rest (name and memory, possibly cut)
_PROC_NEW = re.compile(r"^\|\s*(\d{1,3})\s+(\d+|N/A)\s+(\d+|N/A)\s+(\d+)\s+" + _TYPE + r"(?:\s+(.*))?$")
_PROC_OLD = re.compile(r"^\|\s*(\d{1,3})\s+(\d+)\s+" + _TYPE + r"(?:\s+(.*))?$")
_PROC_START = re.compile(r"^\|\s*\d{1,3}\s+(?:\d+|N/A)")
_MEMORY_END = re.compile(r"^(?:(.*?)\s+)?(\d+\s*MiB|N/A)\s*\|?\s*$")  # the name may be blank (containers)
_NO_PROCESSES = re.compile(r"No running processes found", re.IGNORECASE)
_BORDER = re.compile(r"^\+[-=+]+\+?\s*$")
_TOOL_ERRORS = (("couldn't communicate with the nvidia driver", "NVIDIA-SMI has failed: no NVIDIA driver"),
                ("no devices were found", "No devices were found"))

#: CSV header names (``--format=csv``) -> our field; a unit in brackets is dropped first
_CSV_FIELDS = {
    "pid": "pid", "process_name": "process_name", "name": "name", "used_gpu_memory": "used_memory",
    "used_memory": "used_memory", "gpu_uuid": "gpu_uuid", "uuid": "uuid", "index": "index",
    "memory.used": "memory.used", "memory.total": "memory.total", "utilization.gpu": "utilization.gpu",
    "gpu_name": "gpu_name", "gpu_bus_id": "gpu_bus_id", "pci.bus_id": "pci.bus_id", "memory.free": "memory.free",
    "driver_version": "driver_version", "timestamp": "timestamp", "gpu_serial": "gpu_serial",
    "temperature.gpu": "temperature.gpu", "power.draw": "power.draw", "power.limit": "power.limit",
    "utilization.memory": "utilization.memory", "compute_mode": "compute_mode", "pstate": "pstate",
    "clocks.sm": "clocks.sm", "clocks.mem": "clocks.mem", "serial": "serial", "count": "count",
    "persistence_mode": "persistence_mode", "mig.mode.current": "mig.mode.current",
}
_GPU_NAME = re.compile(r"^(NVIDIA|Tesla|Quadro|GeForce|TITAN|GRID|A\d{2,3}|H\d{3}|L\d{1,2}\b)")
_UUID = re.compile(r"^(GPU|MIG)-[0-9A-Za-z-]+$")
_NUMBER = re.compile(r"^(\d+(?:\.\d+)?)\s*(MiB|%|W|C)?$")


def _cut_name(name: str) -> bool:
    return name.startswith("...") or name.endswith("...")


def _int_or_none(text: str | None) -> int | None:
    if text is None or not text.strip().isdigit():
        return None
    return int(text.strip())


def parse_pasted_smi(text: str) -> PastedSmi:
    """Read everything nvidia-smi-shaped in ``text`` (a table, CSV outputs, or both); see the module docstring.

    Returns a :class:`PastedSmi`; ``found`` is False when nothing in ``text`` is nvidia-smi output.
    """
    out = PastedSmi()
    lines = text.splitlines()
    lowered = text.lower()
    for needle, message in _TOOL_ERRORS:
        if needle in lowered:
            out.error = message
    if any(line.lstrip().startswith(("|", "+")) for line in lines):
        _parse_table(lines, out)
    _parse_csv(lines, out, cut_last=bool(text) and not text.endswith(("\n", "\r")))
    index_of = {g.uuid: g.index for g in out.gpus if g.uuid}
    out.processes = [dataclasses.replace(p, gpu_index=index_of[p.gpu_uuid])
                     if p.gpu_index is None and p.gpu_uuid in index_of else p for p in out.processes]
    return out


def _parse_table(lines: list[str], out: PastedSmi) -> None:
    section = ""  # "gpus", "mig", "processes"
    pending: PastedGpu | None = None  # a GPU row 1 waiting for its memory row
    seen_table = False
    in_processes_rows = False
    tables: list[int] = []  # the header line of each nvidia-smi table in the paste
    notes_before = len(out.notes)
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped.startswith(("|", "+")):
            if in_processes_rows and stripped:
                in_processes_rows = False  # the table stopped without its bottom border
                out.complete = False
            continue
        header = _HEADER.search(line)
        if header:
            if seen_table and (out.gpus or out.processes_listed or out.mig_devices):
                # another snapshot (a "before / after" paste): one machine at one time is read, the last one
                tables.append(number)
                out.gpus, out.mig_devices, out.processes = [], [], []
                out.processes_listed = out.no_processes = False
                out.complete, pending, in_processes_rows, section = True, None, False, ""
                del out.notes[notes_before:]
            else:
                tables[:] = [number]
            seen_table = True
            out.smi_version, out.driver_version = header.group(1), header.group(2)
            cuda = header.group(3)
            out.cuda_version = None if cuda in (None, "N/A") else cuda.rstrip("|")
            section = "gpus"
            continue
        if "Processes:" in line:
            seen_table = True
            section = "processes"
            out.processes_listed = True
            out.complete = False  # until the bottom border closes the rows
            continue
        if "MIG devices:" in line:
            seen_table = True
            section = "mig"
            continue
        if stripped.startswith("|=") or stripped.startswith("+="):
            if section == "processes":
                in_processes_rows = True
            continue
        if _BORDER.match(stripped):
            if in_processes_rows:
                out.complete = True
                in_processes_rows = False
                section = ""
            continue
        body = stripped
        if section == "processes":
            if _NO_PROCESSES.search(body):
                out.no_processes = True
                continue
            _process_row(body, number, out)
            continue
        if section == "mig":
            mig = _MIG_ROW.match(body)
            if mig:
                g, gi, ci, dev, used, total = (int(x) for x in mig.groups())
                out.mig_devices.append(MigDevice(g, gi, ci, dev, used, total, number))
            continue
        row1 = _GPU_ROW1.match(body)
        if row1 and "MiB" not in body and not body.startswith("| GPU"):
            seen_table = True
            name = row1.group(2).strip()
            pending = PastedGpu(index=int(row1.group(1)), name=name, name_cut=_cut_name(name), memory_used_mib=None,
                                memory_total_mib=None, utilization_pct=None, bus_id=row1.group(3) or "", mig=None,
                                line=number)
            out.gpus.append(pending)
            continue
        row2 = _GPU_ROW2.match(body)
        if row2 and pending is not None:
            updated = dataclasses.replace(pending, memory_used_mib=int(row2.group(1)),
                                          memory_total_mib=int(row2.group(2)),
                                          utilization_pct=_int_or_none(row2.group(3)))
            out.gpus[-1] = updated
            pending = updated
            continue
        row3 = _GPU_ROW3.match(body)
        if row3 and pending is not None and out.gpus and out.gpus[-1] is pending:
            if row3.group(1) != "N/A":
                out.gpus[-1] = dataclasses.replace(pending, mig=row3.group(1) == "Enabled")
            pending = None
    if in_processes_rows:
        out.complete = False
    if seen_table:
        out.formats.append("table")
    if len(tables) > 1:
        out.notes.append(f"the paste holds {len(tables)} nvidia-smi tables (lines {', '.join(map(str, tables))}): "
                         f"only the last one (line {tables[-1]}) is read; paste one table for another")
    if out.processes_listed and not out.complete:
        out.notes.append("the Processes table is cut (no bottom border): rows after the last one shown may be missing")


def _process_row(body: str, number: int, out: PastedSmi) -> None:
    new = _PROC_NEW.match(body)
    if new:
        gpu, gi, ci, pid, ptype, rest = new.groups()
    else:
        old = _PROC_OLD.match(body)
        if not old:
            if _PROC_START.match(body):
                out.notes.append(f"line {number}: a process row cut before its Type column: its PID may be cut too, "
                                 "so it is not read")
            return
        gpu, pid, ptype, rest = old.groups()
        gi = ci = None
    if rest is None and ptype in ("C", "M"):
        out.notes.append(f"line {number}: the row of PID {pid} is cut right after its Type ({ptype}), which may "
                         f"itself be cut ({ptype}+G / M+C): type unknown")
        ptype = None
    rest = (rest or "").rstrip()
    memory = _MEMORY_END.match(rest)
    cut = memory is None
    if memory:
        name, mem = (memory.group(1) or "").strip(), memory.group(2)
        used = None if mem == "N/A" else int(mem.replace("MiB", "").strip())
    else:
        name, used = re.split(r"\s{2,}", rest.rstrip("|").strip())[0], None
        out.notes.append(f"line {number}: the row of PID {pid} is cut before its memory column: its GPU memory is "
                         "unknown" + (" and its name may be cut" if name else ""))
    out.processes.append(PastedProcess(
        gpu_index=int(gpu), gi=_int_or_none(gi), ci=_int_or_none(ci), pid=int(pid), process_type=ptype,
        name=name, name_cut=_cut_name(name) or (cut and bool(name)), used_mib=used, cut=cut, line=number))


def _csv_header(cells: list[str]) -> list[str] | None:
    """Our field names for a CSV header line, or None when the line is not a header."""
    fields = []
    for cell in cells:
        key = re.sub(r"\s*\[[^\]]*\]\s*$", "", cell.strip().lower())
        if key not in _CSV_FIELDS:
            return None
        fields.append(_CSV_FIELDS[key])
    return fields


def _mib(cell: str) -> int | None:
    match = _NUMBER.match(cell.strip())
    if not match or match.group(2) not in (None, "MiB"):
        return None
    return int(float(match.group(1)))


def _parse_csv(lines: list[str], out: PastedSmi, cut_last: bool = False) -> None:
    """``cut_last``: the text does not end with a newline, so its last line may be cut (``7653`` of ``76530 MiB``):
    that line's last value, when it is a bare number (no unit after it), is not read, nor the line when that value
    is its PID or its columns are guessed."""
    header: list[str] | None = None
    apps = gpus = False
    guessed = False
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if ", " not in line or line.startswith(("|", "+")):
            if not line:
                header = None
            continue
        cells = [c.strip() for c in line.split(", ")]
        fields = _csv_header(cells)
        if fields is not None:
            header = fields
            continue
        # a value that ends with its unit ("76530 MiB", "12 %") is whole; a bare number may have lost digits
        cut = cut_last and number == len(lines) and not re.search(r"(MiB|%|W|C|\])$", cells[-1])
        if cut and (header is None or len(cells) != len(header) or header[-1] in ("pid", "index")):
            out.notes.append(f"line {number}: the paste ends inside this CSV row (no newline after it): not read")
            continue
        if cut:
            out.notes.append(f"line {number}: the paste ends inside this CSV row (no newline after it): its last "
                             f"value ({cells[-1]}) may be cut and is not read")
            cells[-1] = ""
        if header is not None:
            if len(cells) < len(header):
                out.notes.append(f"line {number}: a CSV row with fewer columns than its header: not read")
                continue
            if len(cells) > len(header):  # a free-text column with ", " in it: the extra cells belong to it
                free = next((i for i, f in enumerate(header) if f in ("process_name", "name")), len(header) - 1)
                extra = len(cells) - len(header)
                cells = cells[:free] + [", ".join(cells[free:free + extra + 1])] + cells[free + extra + 1:]
            row = dict(zip(header, cells, strict=False))
        else:
            guess = _guess_row(cells)
            if guess is None:
                continue
            row = guess
            guessed = True
        if "pid" in row:
            pid = _int_or_none(row["pid"])
            if pid is None:
                continue
            name = row.get("process_name", "")
            used = _mib(row["used_memory"]) if "used_memory" in row else None
            uuid = row.get("gpu_uuid", "")
            out.processes.append(PastedProcess(
                gpu_index=None, gi=None, ci=None, pid=pid, process_type=None, name=name, name_cut=False,
                used_mib=used, cut=False, line=number, gpu_uuid=uuid if _UUID.match(uuid) else ""))
            apps = True
        elif "index" in row or "memory.used" in row or "name" in row:
            index = _int_or_none(row.get("index"))
            if index is None:
                index = len([g for g in out.gpus if g.line > 0])
                out.notes.append(f"line {number}: GPU row without an index column: taken as GPU {index} by order")
            name = row.get("name", "")
            out.gpus.append(PastedGpu(
                index=index, name=name, name_cut=False, memory_used_mib=_mib(row.get("memory.used", "")),
                memory_total_mib=_mib(row.get("memory.total", "")),
                utilization_pct=_int_or_none(row.get("utilization.gpu", "").replace("%", "").strip() or None),
                bus_id=row.get("pci.bus_id", ""), mig=None, line=number,
                uuid=row.get("uuid", "") if _UUID.match(row.get("uuid", "")) else ""))
            gpus = True
    if apps:
        out.formats.append("csv-apps")
        out.processes_listed = True
    if gpus:
        out.formats.append("csv-gpus")
    if guessed:
        out.notes.append("a CSV output without its header line: columns read by their look (PID before memory, as "
                         "in nvidia-smi's documentation); paste it with the header for certainty")


def _guess_row(cells: list[str]) -> dict[str, str] | None:
    """A header-less CSV row read by the look of its cells, or None when it does not look like nvidia-smi's."""
    if len(cells) < 2 or len(cells) > 12:
        return None
    kinds = []
    for cell in cells:
        if _UUID.match(cell):
            kinds.append("uuid")
        elif cell.isdigit():
            kinds.append("int")
        elif _NUMBER.match(cell) and cell.endswith("MiB"):
            kinds.append("mib")
        elif _NUMBER.match(cell) or cell == "[N/A]":
            kinds.append("number")
        else:
            kinds.append("text")
    texts = [c for c, k in zip(cells, kinds, strict=False) if k == "text"]
    if len(texts) > 1:
        return None
    name = texts[0] if texts else ""
    row: dict[str, str] = {}
    if _GPU_NAME.match(name) or ("mib" in kinds and kinds.count("mib") >= 2):
        if kinds[0] != "int":
            return None
        row["index"], row["name"] = cells[0], name
        gpu_uuid = next((c for c, k in zip(cells, kinds, strict=False) if k == "uuid"), "")
        if gpu_uuid:
            row["uuid"] = gpu_uuid
        mibs = sorted((int(_mib(c) or 0) for c, k in zip(cells, kinds, strict=False) if k == "mib"))
        if len(mibs) == 2:
            row["memory.used"], row["memory.total"] = f"{mibs[0]} MiB", f"{mibs[1]} MiB"
        return row
    ints = [c for c, k in zip(cells, kinds, strict=False) if k == "int"]
    mib = [c for c, k in zip(cells, kinds, strict=False) if k == "mib"]
    if len(cells) < 3 or not ints or not name or not re.match(r"^(/\S*|\[[^\]]+\]|[\w.:+-]+)$", name):
        return None
    row["pid"] = ints[0]
    row["process_name"] = name
    if mib:
        row["used_memory"] = mib[0]
    elif len(ints) >= 2:
        row["used_memory"] = ints[1]
    uuid = next((c for c, k in zip(cells, kinds, strict=False) if k == "uuid"), "")
    if uuid:
        row["gpu_uuid"] = uuid
    return row
