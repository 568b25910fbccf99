"""Session event records: one dataclass per event kind, as written to and read from a session file.

A session file is a YAML stream; each document is one event, a mapping with ``kind`` (a stable string below),
``t`` (float seconds since the session started; the header has ``t: 0``) and the kind's fields. Fields equal to
their default are left out when written. The first document is the :class:`HeaderEvent`; a cleanly closed
recording ends with an :class:`EndEvent`.

Kinds (stable strings, never renamed; new kinds may be added — an older reader keeps them as
:class:`UnknownEvent` and reports them):

===========  ==========================================================================================
kind         fields
===========  ==========================================================================================
header       specdash_version, host, sglang_version, started_at (ISO-8601 with offset), demo (bool), note,
             format (session format version: 2; files of format 1 are read the same)
connection   state (``connecting``/``connected``/``retrying``/``failed``), detail
command      action (``validated``/``launched``/``stopped``/``restarted``/``dry_run``), command (text, redacted),
             diagnostics (list of {severity, code, message, flags?}), effective (SGLang field -> value),
             pid, pgid, log_path, exit_reason
log          lines (list of ``[byte_offset, text]``, in order; ``t`` is the arrival time of the batch),
             source (the followed file). Written since format 2 as ``text`` (the lines joined by ``\\n``, one
             string) and ``offsets`` (list of int, one per line) when no line holds a line break (format 1's
             ``lines`` otherwise); read either way into ``lines`` (:func:`event_from_dict`)
marker       text, level (``info``/``warning``/``error``) — e.g. "log truncated", "server restarted"
partial      text (the last state of a log line still being written, e.g. tqdm's ``Capturing batches`` bar
             updating in place), source — drives the start-up progress and ETA; the complete line comes in a
             later ``log`` event
finding      code, severity, message, detail, line (1-based line number or None), offset (byte offset), key
             (de-duplication key)
metric       values ({accept_len, accept_rate, gen_throughput, running_req, queue_req, token_usage, ...})
gpu          gpus (rows per :data:`GPU_COLUMNS`), processes (rows per :data:`PROCESS_COLUMNS`; trailing
             columns may be omitted), source (``nvml``/``nvidia-smi``), error
kill         targets (list of {pid, name, gpu, used_mib, class, user}), outcome (``released``/
             ``not_released``/``refused``/``failed``), before_mib, after_mib, signals (e.g. ["SIGTERM",
             "SIGKILL"]), detail
bench        result (the ``specdash bench --json`` object), config (effective configuration), workload, label
sweep        points (list of {label, config, output_tokens_per_s, speedup, accept_length, stable, ...}),
             baseline (label), recommendation (text), workload
action       binding (binding id, e.g. ``log.filter``), detail
end          (no fields) — written by ``Recorder.close()``; its absence means the recorder did not close
===========  ==========================================================================================

Pure data: no I/O, no Textual.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

#: Session format version written in the header. 2: log lines as one ``text`` + ``offsets`` per batch (format 1:
#: one ``[offset, text]`` per line; both are read).
FORMAT_VERSION = 2
#: The most lines one ``log`` document may carry (the recorder's largest, a 0.2 s batch at 120 000 lines/s, has
#: 24 000); a larger one is refused on read before its text is split.
MAX_LOG_BATCH_LINES = 300_000

#: Column order of a row in :attr:`GpuEvent.gpus` (MiB, percent; None for ``[N/A]``).
GPU_COLUMNS: tuple[str, ...] = ("index", "name", "uuid", "memory_used_mib", "memory_total_mib", "utilization_pct")
#: Column order of a row in :attr:`GpuEvent.processes`; ``class``/``user``/``reason`` are optional trailing columns
#: (the process classification of :mod:`specdash.gpu.classify`: server/orphan/zombie/foreign/unknown).
PROCESS_COLUMNS: tuple[str, ...] = ("pid", "gpu_index", "used_mib", "name", "class", "user", "reason", "ppid",
                                    "pgid")


@dataclasses.dataclass
class Event:
    """Base of all events: ``t`` is seconds since the session started (float). Subclasses set ``kind``.

    ``extra`` keeps fields this version does not know (written by a newer specdash), so nothing read is lost.
    """

    kind: ClassVar[str] = ""
    t: float = 0.0
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The document written to the session file: ``{"kind", "t", <fields not at their default>}``."""
        out: dict[str, Any] = {"kind": self.kind, "t": round(float(self.t), 3)}
        for field in dataclasses.fields(self):
            if field.name in ("t", "extra"):
                continue
            value = getattr(self, field.name)
            if field.default is not dataclasses.MISSING and value == field.default:
                continue
            if field.default_factory is not dataclasses.MISSING and value == field.default_factory():
                continue
            out[field.name] = value
        out.update(self.extra)
        return out


@dataclasses.dataclass
class HeaderEvent(Event):
    """First document: who recorded what, where and when. ``demo`` is True for demonstration sessions recorded
    against the test double (not a real GPU run); ``note`` says so in words."""

    kind: ClassVar[str] = "header"
    specdash_version: str = ""
    host: str = ""
    sglang_version: str | None = None
    started_at: str = ""
    demo: bool = False
    note: str = ""
    format: int = FORMAT_VERSION

    def to_dict(self) -> dict[str, Any]:
        """Every header field, defaults included (the header is read by people and by future versions)."""
        out: dict[str, Any] = {"kind": self.kind, "t": 0.0, "format": self.format}
        for field in dataclasses.fields(self):
            if field.name not in ("t", "extra", "format"):
                out[field.name] = getattr(self, field.name)
        out.update(self.extra)
        return out


@dataclasses.dataclass
class ConnectionEvent(Event):
    """A change of the host connection: ``state`` as :class:`specdash.hosts.base.ConnState` values."""

    kind: ClassVar[str] = "connection"
    state: str = ""
    detail: str = ""


#: :attr:`CommandEvent.action` of a restart for a depth sweep configuration
SWEEP_RESTARTED = "sweep restarted"
#: :attr:`CommandEvent.action` of the restart at the end of a depth sweep with the configuration the user kept (the
#: builder's command from then on; its log is the user's server's, not a sweep configuration's)
SWEEP_KEPT = "restarted with the kept sweep config"
#: :attr:`CommandEvent.action` of the restart at the end of a depth sweep that restores the user's own command
SWEEP_RESTORED = "restarted with your command after the sweep"
#: :attr:`CommandEvent.action` at the end of a depth sweep when the configuration kept is the one the server already
#: runs (no restart): from then on its log is the user's server's, not a sweep configuration's
SWEEP_KEPT_RUNNING = "kept the running sweep config"


@dataclasses.dataclass
class CommandEvent(Event):
    """A launch command validated, launched, stopped or restarted, with the validator's diagnostics summary
    (list of {severity, code, message, flags}) and the effective configuration (SGLang field names). ``action``:
    ``validated``, ``launched``, ``stopped``, ``restarted``, :data:`SWEEP_RESTARTED` (the server restarted with
    one configuration of a depth sweep: the builder's command is not changed; the log at ``log_path`` is that
    configuration's), :data:`SWEEP_KEPT` / :data:`SWEEP_RESTORED` (the restart at the end of a sweep with the
    kept configuration / the user's own command: the builder's command, a server like any other), or
    :data:`SWEEP_KEPT_RUNNING` (the configuration kept is the running one: its log is no sweep configuration's
    from then on)."""

    kind: ClassVar[str] = "command"
    action: str = ""
    command: str = ""
    diagnostics: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    effective: dict[str, Any] = dataclasses.field(default_factory=dict)
    pid: int | None = None
    pgid: int | None = None
    log_path: str | None = None
    exit_reason: str | None = None


@dataclasses.dataclass
class LogEvent(Event):
    """A batch of log lines that arrived at ``t``: ``lines`` is a list of ``[byte_offset, text]``."""

    kind: ClassVar[str] = "log"
    lines: list[list[Any]] = dataclasses.field(default_factory=list)
    source: str | None = None


@dataclasses.dataclass
class MarkerEvent(Event):
    """A marker in the story (log truncated/rotated, server restarted, user note)."""

    kind: ClassVar[str] = "marker"
    text: str = ""
    level: str = "info"


@dataclasses.dataclass
class PartialEvent(Event):
    """The followed log's unfinished last line at ``t`` (its last ``\\r`` state): capture progress between log
    lines. Not a log line: the complete line is in a later :class:`LogEvent`."""

    kind: ClassVar[str] = "partial"
    text: str = ""
    source: str | None = None


@dataclasses.dataclass
class FindingEvent(Event):
    """A finding of the log analysis (:mod:`specdash.logs.findings`): ``severity``
    (error/override/warning/info/success), ``line`` 1-based line number in the followed log, ``offset`` its byte offset,
    ``key`` a de-duplication key."""

    kind: ClassVar[str] = "finding"
    code: str = ""
    severity: str = "info"
    message: str = ""
    detail: str = ""
    line: int | None = None
    offset: int | None = None
    key: str | None = None


@dataclasses.dataclass
class MetricEvent(Event):
    """A metric sample (thinned to at most one per second by the recorder): ``values`` maps metric names
    (accept_len, accept_rate, gen_throughput, running_req, queue_req, token_usage, ...) to numbers."""

    kind: ClassVar[str] = "metric"
    values: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class GpuEvent(Event):
    """A GPU sample (thinned to at most one per second): compact rows, see :data:`GPU_COLUMNS` and
    :data:`PROCESS_COLUMNS`. Convert with :func:`gpu_event_fields` / :func:`gpu_snapshot_from_event`."""

    kind: ClassVar[str] = "gpu"
    gpus: list[list[Any]] = dataclasses.field(default_factory=list)
    processes: list[list[Any]] = dataclasses.field(default_factory=list)
    source: str = ""
    error: str | None = None


@dataclasses.dataclass
class KillEvent(Event):
    """A kill and its outcome: ``targets`` (list of {pid, name, gpu, used_mib, class, user}), ``outcome``
    (released/not_released/refused/failed), GPU memory held by the targets before/after in MiB."""

    kind: ClassVar[str] = "kill"
    targets: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    outcome: str = ""
    before_mib: int | None = None
    after_mib: int | None = None
    signals: list[str] = dataclasses.field(default_factory=list)
    detail: str = ""


@dataclasses.dataclass
class BenchEvent(Event):
    """A benchmark result: ``result`` is the ``specdash bench --json`` object (output_tokens_per_s, ttft_ms, ...,
    accept_length, accept_length_source), ``config`` the effective configuration it ran against, ``run`` the whole
    run (its per-request timings stripped) so a replay can show it in the Benchmarks pane."""

    kind: ClassVar[str] = "bench"
    result: dict[str, Any] = dataclasses.field(default_factory=dict)
    config: dict[str, Any] = dataclasses.field(default_factory=dict)
    workload: str = ""
    label: str = ""
    run: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class SweepEvent(Event):
    """A depth sweep's results: ``points`` (one dict per config: label, config, output_tokens_per_s, speedup
    against the baseline, accept_length, stable, ...), the ``baseline`` label, the ``recommendation`` and the whole
    ``sweep`` (its runs' per-request timings stripped) for replay."""

    kind: ClassVar[str] = "sweep"
    points: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    baseline: str | None = None
    recommendation: str = ""
    workload: str = ""
    sweep: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class ActionEvent(Event):
    """A user action: the stable ``binding`` id of the key binding (or palette command) used."""

    kind: ClassVar[str] = "action"
    binding: str = ""
    detail: str = ""


@dataclasses.dataclass
class EndEvent(Event):
    """Written by ``Recorder.close()``: the recording ended cleanly at ``t``."""

    kind: ClassVar[str] = "end"


@dataclasses.dataclass
class UnknownEvent(Event):
    """An event whose kind this version does not know; ``unknown_kind`` and ``fields`` keep it unchanged."""

    kind: ClassVar[str] = "unknown"
    unknown_kind: str = ""
    fields: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The original document, unchanged."""
        return {"kind": self.unknown_kind, "t": self.t, **self.fields}


#: kind string -> event class, for every known kind.
EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (HeaderEvent, ConnectionEvent, CommandEvent, LogEvent, MarkerEvent, PartialEvent, FindingEvent,
                MetricEvent, GpuEvent, KillEvent, BenchEvent, SweepEvent, ActionEvent, EndEvent)
}


_FIELD_NAMES: dict[str, frozenset[str]] = {
    kind: frozenset(f.name for f in dataclasses.fields(cls)) - {"t", "extra"} for kind, cls in EVENT_TYPES.items()
}


# Container fields checked on read, so a damaged or hand-edited document cannot hand a pane the wrong shape.
_SHAPES: dict[str, tuple[tuple[str, type], ...]] = {
    "log": (("lines", list),),
    "command": (("diagnostics", list), ("effective", dict)),
    "metric": (("values", dict),),
    "gpu": (("gpus", list), ("processes", list)),
    "kill": (("targets", list), ("signals", list)),
    "bench": (("result", dict), ("config", dict)),
    "sweep": (("points", list),),
}


def make_event(kind: str, t: float, fields: dict[str, Any]) -> Event:
    """Build the event of ``kind`` at ``t`` from ``fields``; fields the class lacks go to ``extra``.

    Raises KeyError for an unknown kind (use :func:`event_from_dict` when reading files).
    """
    cls = EVENT_TYPES[kind]
    names = _FIELD_NAMES[kind]
    known = {}
    extra = {}
    for key, value in fields.items():
        if key in names:
            known[key] = value
        elif key != "kind" and key != "t":
            extra[key] = value
    return cls(t=float(t), extra=extra, **known)


def event_from_dict(doc: dict[str, Any]) -> Event:
    """Turn one parsed document into an event; an unknown kind gives :class:`UnknownEvent` (nothing dropped).

    ``doc`` must hold ``kind`` (str) and a numeric ``t``; raises ValueError with a short reason otherwise.
    """
    kind = doc.get("kind")
    if not isinstance(kind, str) or not kind:
        raise ValueError("no 'kind'")
    t = doc.get("t", 0.0 if kind == "header" else None)
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        raise ValueError(f"{kind} event has no numeric 't'")
    if kind not in EVENT_TYPES:
        return UnknownEvent(t=float(t), unknown_kind=kind,
                            fields={k: v for k, v in doc.items() if k not in ("kind", "t")})
    for name, shape in _SHAPES.get(kind, ()):
        value = doc.get(name)
        if value is not None and not isinstance(value, shape):
            raise ValueError(f"{kind} event: {name!r} must be a {shape.__name__}, got {type(value).__name__}")
    if kind == "log" and ("text" in doc or "offsets" in doc):
        doc = _joined_log_lines(doc)
    if kind == "log":
        for line in doc.get("lines") or ():
            if not (isinstance(line, list) and len(line) == 2 and isinstance(line[1], str)):
                raise ValueError(f"log event: each of 'lines' must be [offset, text], got {line!r:.60}")
    return make_event(kind, t, doc)


def _joined_log_lines(doc: dict[str, Any]) -> dict[str, Any]:
    """A format 2 ``log`` document (``text`` + ``offsets``) with its lines as format 1's ``lines`` (a new dict).

    Raises ValueError (one short reason) unless ``text`` is a string, ``offsets`` a list of ints (not bools) with
    one per line of ``text`` and at most :data:`MAX_LOG_BATCH_LINES` of them, and there is no ``lines`` beside
    them. The counts are compared before ``text`` is split, so a document cannot make more lines than offsets."""
    text, offsets = doc.get("text"), doc.get("offsets")
    if "lines" in doc:
        raise ValueError("log event: both 'lines' and 'text'/'offsets'")
    if not isinstance(text, str) or not isinstance(offsets, list):
        raise ValueError(f"log event: 'text' must be a str and 'offsets' a list, got {type(text).__name__} and "
                         f"{type(offsets).__name__}")
    if len(offsets) > MAX_LOG_BATCH_LINES:
        raise ValueError(f"log event: more than {MAX_LOG_BATCH_LINES:,} lines (limit)")
    count = text.count("\n") + 1
    if count != len(offsets):
        raise ValueError(f"log event: {len(offsets)} offsets for {count} lines of 'text'")
    if not set(map(type, offsets)) <= {int}:
        raise ValueError("log event: each of 'offsets' must be an int")
    out = {k: v for k, v in doc.items() if k not in ("text", "offsets")}
    out["lines"] = [[offset, line] for offset, line in zip(offsets, text.split("\n"), strict=True)]
    return out


def gpu_event_fields(snapshot: Any, classes: dict[int, tuple[Any, ...]] | None = None) -> dict[str, Any]:
    """Fields for ``record("gpu", **fields)`` from a :class:`specdash.gpu.model.GpuSnapshot`.

    ``classes`` optionally maps PID -> (class, user, reason) or (class, user, reason, ppid, pgid) from the process
    classification (:mod:`specdash.gpu.classify`).
    """
    classes = classes or {}
    gpus = [[g.index, g.name, g.uuid, g.memory_used_mib, g.memory_total_mib, g.utilization_pct]
            for g in snapshot.gpus]
    processes = []
    for p in snapshot.processes:
        row: list[Any] = [p.pid, p.gpu_index, p.used_mib, p.name]
        if p.pid in classes:
            row.extend(classes[p.pid])
        processes.append(row)
    fields: dict[str, Any] = {"gpus": gpus, "processes": processes, "source": snapshot.source}
    if snapshot.error:
        fields["error"] = snapshot.error
    return fields


def gpu_snapshot_from_event(event: GpuEvent, time_s: float = 0.0) -> Any:
    """Rebuild a :class:`specdash.gpu.model.GpuSnapshot` from a recorded GPU event (for the GPU pane in replay).

    ``time_s`` becomes the snapshot's ``time_s`` (e.g. header start time + ``event.t``). Process rows lose the
    GPU UUID (not recorded; looked up from the GPU rows by index). Malformed rows are skipped.
    """
    from specdash.gpu.model import GpuInfo, GpuProcess, GpuSnapshot

    gpus = []
    uuid_by_index: dict[int, str] = {}
    for row in event.gpus:
        if not isinstance(row, list) or len(row) < 6:
            continue
        gpus.append(GpuInfo(index=row[0], name=row[1], uuid=row[2], memory_used_mib=row[3],
                            memory_total_mib=row[4], utilization_pct=row[5]))
        uuid_by_index[row[0]] = row[2]
    processes = []
    for row in event.processes:
        if not isinstance(row, list) or len(row) < 4:
            continue
        processes.append(GpuProcess(pid=row[0], gpu_index=row[1], gpu_uuid=uuid_by_index.get(row[1], ""),
                                    used_mib=row[2], name=row[3]))
    return GpuSnapshot(time_s=time_s, source=event.source, gpus=tuple(gpus), processes=tuple(processes),
                       error=event.error)


def process_parents(event: GpuEvent) -> dict[int, tuple[int | None, int | None]]:
    """PID -> (PPID, PGID) from the optional ``ppid``/``pgid`` process columns of a GPU event (recorded since
    they were added; None where a row lacks them or holds no integer)."""
    def number(value: Any) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    out = {}
    for row in event.processes:
        if isinstance(row, list) and len(row) > 7 and number(row[0]) is not None:
            out[row[0]] = (number(row[7]), number(row[8]) if len(row) > 8 else None)
    return out


def process_classes(event: GpuEvent) -> dict[int, tuple[str | None, str | None, str | None]]:
    """PID -> (class, user, reason) from the optional trailing process columns of a GPU event."""
    out = {}
    for row in event.processes:
        if isinstance(row, list) and len(row) > 4:
            padded = list(row[4:7]) + [None] * (3 - len(row[4:7]))
            out[row[0]] = (padded[0], padded[1], padded[2])
    return out
