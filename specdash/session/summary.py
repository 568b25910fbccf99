"""The text timeline of a session (``specdash replay --summary FILE``): header, what was skipped, then the
findings, configs (commands validated/launched/stopped, with their diagnostics), kills, benchmark and sweep
results, connection changes and warning/error markers, one entry per line with its session time. Pure: takes a
:class:`~specdash.session.reader.SessionLog`, returns lines (:func:`summary_lines`) or one JSON-ready object
(:func:`summary_json`, ``specdash replay --summary --json``; its shape is in the README, "JSON output").

The file may not come from specdash's recorder (hand-edited, another version, hostile): every line is redacted
(:func:`specdash.text.redaction.redact_text`) and cleaned of terminal escapes, controls and bidi overrides
(:func:`specdash.text.display.clean`) before it is returned.
"""

from __future__ import annotations

from typing import Any

from specdash.bench.results import accept_source_words
from specdash.session.events import (
    BenchEvent,
    CommandEvent,
    ConnectionEvent,
    Event,
    FindingEvent,
    KillEvent,
    MarkerEvent,
    SweepEvent,
)
from specdash.session.finding_versions import LastVersion, last_versions
from specdash.session.reader import SessionLog
from specdash.session.replay import format_clock
from specdash.sglang.command import on_one_line
from specdash.text.display import clean
from specdash.text.redaction import redact_text

_INDENT = " " * 22


def _num(value: Any, digits: int = 1) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "?"
    return f"{value:,.{digits}f}"


def _percentiles(result: dict[str, Any], key: str) -> str | None:
    block = result.get(key)
    if isinstance(block, dict) and "p50" in block:
        return f"{key.removesuffix('_ms').upper()} p50 {_num(block.get('p50'))} ms / p99 {_num(block.get('p99'))} ms"
    return None


def _sweep_result(data: Any) -> str | None:
    """The sweep's result line computed again from the recorded sweep (``SweepEvent.sweep``), as the replayed bench
    pane shows it (:meth:`specdash.bench.sweep.SweepResult.recommendation`); None when the recording has no
    readable sweep (older or hand-edited files: the recorded text is shown instead)."""
    if not isinstance(data, dict) or not data:
        return None
    from specdash.bench.sweep import SweepResult

    try:
        return SweepResult.from_dict(data).recommendation().reason
    except Exception:  # noqa: BLE001 - a hostile or older recording: fall back to the recorded text
        return None


def _bench_line(result: dict[str, Any]) -> str:
    parts = [f"{_num(result.get('output_tokens_per_s'))} output tokens/s"]
    if "requests_per_s" in result:
        parts.append(f"{_num(result.get('requests_per_s'), 2)} req/s")
    for key in ("ttft_ms", "itl_ms", "tpot_ms"):
        text = _percentiles(result, key)
        if text:
            parts.append(text)
    if result.get("accept_length") is not None:
        source = result.get("accept_length_source")
        parts.append(f"accept length {_num(result.get('accept_length'), 2)}"
                     + (f" ({accept_source_words(str(source))})" if source else ""))
    if result.get("errors"):
        parts.append(f"{result['errors']} errors")
    return ", ".join(parts)


def _config_text(config: dict[str, Any]) -> str:
    keys = ("speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens")
    shown = [f"{k.removeprefix('speculative_')}={config[k]}" for k in keys if k in config]
    return " ".join(shown)


def _entry(event: Event, last: LastVersion | None = None) -> list[str]:
    """Lines for one event (first line: what; further lines: details), or [] when it is not in the timeline.
    ``last``: for a finding whose text changed after it was recorded, the version its log left it in (shown, with
    when it stood so and what it first said)."""
    if isinstance(event, FindingEvent):
        severity, message, detail = (last.severity, last.message, last.detail) if last else (
            event.severity, event.message, event.detail)
        head = f"finding     [{severity}] {message}"
        if event.line is not None:
            head += f" (log line {event.line})"
        lines = [head] + ([detail] if detail else [])
        if last is not None:
            lines.append(f"(as it stood at {format_clock(last.t)}, the end of its log; first raised at "
                         f"{format_clock(event.t)} as: {event.message})")
        return lines
    if isinstance(event, CommandEvent):
        what = event.action or "command"
        # the process group is what the console names (header, quit line, x/r dialogs); the leader's PID is the
        # same number for a server specdash launched (its own session), so it is said only when it differs
        if event.pgid is not None:
            what += f" (PGID {event.pgid}" + (f", leader PID {event.pid})" if event.pid not in (None, event.pgid)
                                              else ")")
        elif event.pid is not None:
            what += f" (PID {event.pid})"
        lines = [f"config      {what}: {on_one_line(event.command)}".rstrip()]
        effective = _config_text(event.effective)
        if effective:
            lines.append(f"effective: {effective}")
        for diag in event.diagnostics:
            if isinstance(diag, dict):
                code = f" {diag['code']}" if diag.get("code") else ""
                lines.append(f"{diag.get('severity', '?')}{code}: {diag.get('message', '')}")
        if event.exit_reason:
            lines.append(f"exit: {event.exit_reason}")
        return lines
    if isinstance(event, BenchEvent):
        label = event.label or event.workload or "benchmark"
        lines = [f"bench       {label}: {_bench_line(event.result)}"]
        config = _config_text(event.config)
        if config:
            lines.append(f"config: {config}")
        return lines
    if isinstance(event, SweepEvent):
        # the baseline is the sweep's point without speculation (SweepResult.baseline): say so, not its label twice
        lines = [f"sweep       {len(event.points)} configs" + (f", workload {event.workload}" if event.workload else "")
                 + (f"; baseline: no speculation (config \"{event.baseline}\")" if event.baseline else "")]
        for point in event.points:
            if not isinstance(point, dict):
                continue
            if point.get("status") == "failed":  # never measured: not "unstable" (a recording since "status")
                lines.append(f"{point.get('label', '?')}: FAILED, not measured")
                continue
            text = f"{point.get('label', '?')}: {_num(point.get('output_tokens_per_s'))} output tokens/s"
            if point.get("speedup") is not None:
                text += f", speedup x{_num(point.get('speedup'), 2)}"
            if point.get("accept_length") is not None:
                text += f", accept length {_num(point.get('accept_length'), 2)}"
            if point.get("stable") is False:
                text += ", UNSTABLE"
            lines.append(text)
        result = _sweep_result(event.sweep) or event.recommendation
        if result:
            lines.append(f"result: {result}")
        return lines
    if isinstance(event, KillEvent):
        from specdash.gpu.kill import describe_targets

        pids = ", ".join(str(t.get("pid")) for t in event.targets if isinstance(t, dict))
        classes = [(str(t.get("class")), str(t.get("source") or "driver")) for t in event.targets
                   if isinstance(t, dict) and t.get("class")]
        what = (describe_targets(classes) if len(classes) == len(event.targets) and classes
                else f"{len(event.targets)} process(es)")  # recordings before classes were recorded
        text = f"kill        {what} (PID {pids}): {event.outcome or '?'}"
        if event.before_mib is not None or event.after_mib is not None:
            text += f", GPU memory {event.before_mib} -> {event.after_mib} MiB"
        return [text] + ([event.detail] if event.detail else [])
    if isinstance(event, ConnectionEvent):
        return [f"connection  {event.state}" + (f": {event.detail}" if event.detail else "")]
    if isinstance(event, MarkerEvent) and event.level in ("warning", "error"):
        return [f"marker      [{event.level}] {event.text}"]
    return []


def summary_lines(log: SessionLog) -> list[str]:
    """The ``--summary`` text of ``log`` as lines (no trailing newlines), redacted and safe to print."""
    return [clean(redact_text(line)) for line in _summary_lines(log)]


def _summary_lines(log: SessionLog) -> list[str]:
    out = [f"session: {log.path}"]
    h = log.header
    if h is not None:
        release = f"SGLang {h.sglang_version}" if h.sglang_version else "SGLang release not known at the start"
        out.append(f"recorded: {h.started_at or '?'} on {h.host or '?'}, {release}, "
                   f"specdash {h.specdash_version or '?'}")
        if h.demo:
            note = (h.note or "").strip()
            if note.upper().startswith("DEMONSTRATION"):
                out.append(note)  # the note already says it
            else:
                out.append(f"DEMONSTRATION session (not a real GPU run): {note}".rstrip(": "))
        elif h.note:
            out.append(f"note: {h.note}")
    out.append(f"duration {format_clock(log.duration_s)}, {len(log.events)} events"
               + ("" if log.closed else " (recording not closed)"))
    if log.problems:
        out.append(f"problems ({len(log.problems)}):")
        out.extend(f"  - {p}" for p in log.problems)
    out.append("timeline:")
    shown = 0
    last = last_versions(log)
    for index, event in enumerate(log.events):
        lines = _entry(event, last.get(index))
        if not lines:
            continue
        shown += 1
        out.append(f"  {format_clock(event.t)}  {lines[0]}")
        out.extend(f"{_INDENT}{line}" for line in lines[1:])
    if not shown:
        out.append("  (no findings, configs or benchmark results)")
    return out


#: Version of :func:`summary_json`'s shape; raised when a field changes meaning or goes (new fields may be added).
SUMMARY_SCHEMA = 1


def summary_json(log: SessionLog) -> dict[str, Any]:
    """The timeline of ``log`` as one JSON-ready object::

        {"schema": 1, "session": path, "header": {recorded header fields} | null, "duration_s": float,
         "events": int, "closed": bool, "problems": [str],
         "timeline": [{"t": float, "kind": event kind, "lines": [str], "fields": {recorded fields},
                       "last": {"t", "severity", "message", "detail"} (findings whose text changed later only)}]}

    ``timeline`` holds the events :func:`summary_lines` shows, in order; ``lines`` are its text for the event (a
    finding as it last stood: :mod:`specdash.session.finding_versions`), ``fields`` the event as recorded in the
    file (less ``kind`` and ``t``: a finding's first version), ``last`` the finding as its log left it. Every
    string in it is redacted and cleaned
    as the text summary is (the file may be hand-written).
    """
    return _safe(_summary_json(log))


def _safe(value: Any) -> Any:
    """``value`` with every string redacted and cleaned (dict keys too), recursively."""
    if isinstance(value, str):
        return clean(redact_text(value))
    if isinstance(value, dict):
        return {_safe(k) if isinstance(k, str) else k: _safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_safe(v) for v in value]
    return value


def _summary_json(log: SessionLog) -> dict[str, Any]:
    header = None
    if log.header is not None:
        header = {k: v for k, v in log.header.to_dict().items() if k not in ("kind", "t")}
    timeline = []
    last = last_versions(log)
    for index, event in enumerate(log.events):
        lines = _entry(event, last.get(index))
        if not lines:
            continue
        fields = {k: v for k, v in event.to_dict().items() if k not in ("kind", "t")}
        entry = {"t": round(float(event.t), 3), "kind": event.kind, "lines": lines, "fields": fields}
        version = last.get(index)
        if version is not None:
            entry["last"] = {"t": round(version.t, 3), "severity": version.severity, "message": version.message,
                             "detail": version.detail}
        timeline.append(entry)
    return {
        "schema": SUMMARY_SCHEMA,
        "session": str(log.path),
        "header": header,
        "duration_s": round(float(log.duration_s), 3),
        "events": len(log.events),
        "closed": bool(log.closed),
        "problems": list(log.problems),
        "timeline": timeline,
    }
