"""``specdash scan`` of a mixed text (an issue body): each part reported by its own analyzer, in order.

:func:`specdash.text.segments.segment` splits the text; each part goes to the analyzer of its kind
(:data:`ANALYZERS`): a launch command to the validator (:func:`specdash.sglang.validate.validate_command`, with the
``VAR=`` / ``export`` lines of earlier shell parts in place), a log excerpt to
:class:`specdash.logs.analyzer.LogAnalyzer`, an nvidia-smi output to :mod:`specdash.gpu.pasted`, a benchmark output
to :mod:`specdash.bench.imported` (when present). Line numbers are those of the whole text.

Used when :func:`is_mixed` says so; a log (with or without its launch command on top) keeps the streaming log
scan. Exit status: 1 when a log part shows a crash or a launch command has an error, else 0.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable
from typing import Any

from specdash.text.segments import Part, Segmentation, segment

#: Largest input read whole to look for parts (a bigger file is a server log, scanned streaming; a GitHub issue
#: body holds at most 65 536 characters).
MAX_MIXED_BYTES = 1024 * 1024
#: A text without any of these is not split (a plain log skips the segmenter's pass): markdown fences, quotes and
#: tags, nvidia-smi's table and CSV headers, shell lines, benchmark output and tables.
_CANDIDATE = re.compile(
    rb"^[ \t]*(?:```|~~~|>|<details|<summary|\+-{3}|\|[^\n]*\||pid, |index, |export |[A-Za-z_]\w*=|\$ |"
    rb"(?:sudo |nohup )?(?:python3?(?:\.\d+)? |docker |podman |srun |torchrun |sglang |vllm |pip3? |uv |"
    rb"docker-compose |nerdctl |kubectl |oc |bash -|sh -|(?:- )?command: ))"
    rb"|NVIDIA-SMI|Benchmark Result|[Ss]peed: ", re.MULTILINE)
#: detail lines shown per part in text output
MAX_DETAIL_LINES = 12


def is_mixed(seg: Segmentation) -> bool:
    """True when ``seg`` is read part by part: it holds an nvidia-smi output, or a command and markdown (fences,
    quotes, ``<details>``), or a command and no log, or benchmark output beside a command. A log with its launch
    command on top and no markdown (``cmd 2>&1 | tee server.log`` with the command echoed first) stays a log: the
    log scan reads the command itself; benchmark output alone or within a log stays with the log scan too, which
    reports benchmark results in a section of their own."""
    kinds = {p.kind for p in seg.parts}
    if "gpu" in kinds:
        return True
    if kinds & {"command", "shell"}:
        return seg.markdown or "log" not in kinds
    return False


def _validate(part: Part, seg: Segmentation, version: str | None) -> dict[str, Any]:
    from specdash.sglang.validate import validate_command

    # the script as the shell would see it: earlier variable-setting shell parts, then this part, other lines blank
    lines = [""] * seg.lines
    for earlier in seg.parts:
        if earlier.kind == "shell" and earlier.last_line < part.first_line:
            lines[earlier.first_line - 1:earlier.last_line] = list(earlier.lines)
    lines[part.first_line - 1:part.last_line] = list(part.lines)
    try:
        report = validate_command("\n".join(lines) + "\n", version)
    except ValueError:
        report = validate_command("\n".join(lines) + "\n", None)
    errors = len(report.by_severity("error"))
    counts = {s: len(report.by_severity(s)) for s in ("error", "override", "warning", "info")}
    head = (f"validate (SGLang {report.sglang_version} rules): "
            + ", ".join(f"{n} {s}{'s' if n != 1 and s != 'info' else ''}" for s, n in counts.items() if n)
            if any(counts.values()) else f"validate (SGLang {report.sglang_version} rules): no findings")
    details = []
    for d in report.diagnostics:
        flags = f" [{', '.join(d.flags)}]" if getattr(d, "flags", None) else ""
        details.append(f"{d.severity.upper() if d.severity != 'info' else 'info'} {d.code}{flags}: {d.message}")
    return {"analyzer": "validate", "summary": head, "details": details, "failed": errors > 0,
            "result": report.to_json()}


def _scan_log(part: Part, seg: Segmentation, version: str | None) -> dict[str, Any]:
    from specdash.logs.analyzer import LogAnalyzer
    from specdash.severity import severity_rank
    from specdash.sglang.known_issues import KnownIssueLogScanner

    analyzer = LogAnalyzer()
    known = KnownIssueLogScanner(version)
    analyzer.feed_many(list(part.lines))
    for number, text in enumerate(part.lines, 1):
        known.feed(number, text)
    analyzer.end_of_input()
    summary = analyzer.summary()
    findings = sorted(summary["findings"] + known.findings(), key=lambda f: (severity_rank(f["severity"]), f["line"]))
    offset = part.first_line - 1
    for f in findings:  # line numbers of the whole text
        if isinstance(f.get("line"), int):
            f["line"] += offset
    summary["findings"] = findings
    summary["first_line"] = part.first_line
    head = f"scan: {summary['lines']} lines, server state {summary['server_state']}" + (
        "; CRASHED" if summary["crashed"] else "")
    marks = {"error": "E", "warning": "W", "success": "+", "info": "i"}
    details = []
    coverage = summary.get("coverage") or {}
    if coverage.get("excerpt"):
        details.append("excerpt: no start-up lines and no end; it cannot tell " + "; ".join(coverage["cannot_tell"]))
    for f in findings:
        when = f" {f['time']}" if f.get("time") else ""
        details.append(f"[{marks.get(f['severity'], '?')}] line {f['line']}{when}: {f['message']}")
    if not findings:
        details.append("no findings")
    return {"analyzer": "scan", "summary": head, "details": details, "failed": bool(summary["crashed"]),
            "result": summary}


def _gpu(part: Part, seg: Segmentation, version: str | None) -> dict[str, Any]:
    from specdash.gpu.pasted import pasted_json
    from specdash.gpu.smi_table import parse_pasted_smi

    data = pasted_json(parse_pasted_smi(part.text))
    offset = part.first_line - 1
    for row in data["gpus"] + data["processes"]:
        row["line"] += offset
    details = []
    for g in data["gpus"]:
        used = "?" if g["memory_used_mib"] is None else g["memory_used_mib"]
        total = "?" if g["memory_total_mib"] is None else g["memory_total_mib"]
        details.append(f"GPU {g['index']} {g['name']}: {used} / {total} MiB"
                       + (f"; {g['unlisted_mib']} MiB held by no listed process" if g["unlisted_mib"] else ""))
    for p in data["processes"]:
        mib = "?" if p["used_mib"] is None else p["used_mib"]
        details.append(f"line {p['line']}: PID {p['pid']} GPU {'?' if p['gpu'] is None else p['gpu']} "
                       f"{p['type'] or '?'} {mib} MiB {p['name']}: {p['class']} — {p['reason']}")
    details.extend(f"note: {n}" for n in data["notes"])
    return {"analyzer": "ps --from", "summary": "ps --from: " + data["summary"], "details": details,
            "failed": False, "result": data}


def _bench(part: Part, seg: Segmentation, version: str | None) -> dict[str, Any]:
    from specdash.bench.imported.report import result_text

    result = part.data
    if result is None:
        return {"analyzer": "bench", "summary": "benchmark output (not read)", "details": [], "failed": False,
                "result": None}
    details = [line for line in result_text(result).splitlines() if line.strip()]
    records = getattr(result, "records", [])
    to_dict = getattr(result, "to_dict", None)
    return {"analyzer": "bench", "summary": f"bench: {getattr(result, 'tool', '?')}, {len(records)} "
                                            f"record{'s' if len(records) != 1 else ''}",
            "details": details, "failed": False, "result": to_dict() if callable(to_dict) else None}


_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?[A-Za-z_]\w*=")


def _shell(part: Part, seg: Segmentation, version: str | None) -> dict[str, Any]:
    used = any(p.kind == "command" and p.first_line > part.last_line for p in seg.parts)
    assignments = sum(1 for line in part.lines if _ASSIGNMENT.match(line))
    summary = "no SGLang launch command in these lines: not checked"
    if assignments and used:
        summary += (f"; its {assignments} variable assignment{'s' if assignments != 1 else ''} "
                    f"{'are' if assignments != 1 else 'is'} read by the launch commands after it")
    return {"analyzer": None, "summary": summary, "details": [], "failed": False, "result": None}


def _prose(part: Part, seg: Segmentation, version: str | None) -> dict[str, Any]:
    return {"analyzer": None, "summary": "", "details": [], "failed": False, "result": None}


#: kind -> analyzer (part, segmentation, SGLang version) -> {analyzer, summary, details, failed, result}
ANALYZERS: dict[str, Callable[[Part, Segmentation, str | None], dict[str, Any]]] = {
    "command": _validate, "shell": _shell, "log": _scan_log, "gpu": _gpu, "bench": _bench, "prose": _prose,
}


def analyze(seg: Segmentation, version: str | None = None) -> dict[str, Any]:
    """The ``scan --json`` document of a mixed text: ``mixed`` (True), ``lines``, ``markdown``, ``cut``,
    ``parts`` (in text order: ``kind``, ``label``, ``first_line``, ``last_line``, ``analyzer``, ``summary``,
    ``details`` (the lines printed under it), ``failed``, ``result`` (the analyzer's own JSON)), ``counts`` (parts
    per kind) and ``failed`` (a crash or a command error in some part)."""
    parts = []
    for part in seg.parts:
        try:
            out = ANALYZERS[part.kind](part, seg, version)
        except Exception as exc:  # noqa: BLE001 - one analyzer's failure must not hide the other parts
            out = {"analyzer": None, "summary": f"not analysed: {type(exc).__name__}: {exc}"[:300], "details": [],
                   "failed": False, "result": None}
        parts.append({"kind": part.kind, "label": part.label, "first_line": part.first_line,
                      "last_line": part.last_line, **out})
    counts: dict[str, int] = {}
    for p in parts:
        counts[p["kind"]] = counts.get(p["kind"], 0) + 1
    return {"mixed": True, "lines": seg.lines, "markdown": seg.markdown, "cut": seg.cut, "parts": parts,
            "counts": counts, "failed": any(p["failed"] for p in parts)}


def render(doc: dict[str, Any]) -> str:
    """The text ``scan`` prints for a mixed text: one heading, then per part ``lines A-B: label → summary`` and its
    detail lines (the same values as :func:`analyze`)."""
    from specdash.text.segments import LABELS

    kinds = ", ".join(f"{n} {LABELS[k]}" for k, n in doc["counts"].items())
    out = [f"{doc['lines']} lines in {len(doc['parts'])} parts ({kinds})"]
    if doc["cut"]:
        out.append("the text is longer than specdash reads as one: only its first lines are split into parts")
    for p in doc["parts"]:
        span = f"line {p['first_line']}" if p["first_line"] == p["last_line"] else \
            f"lines {p['first_line']}-{p['last_line']}"
        out.append(f"{span}: {p['label']}" + (f" → {p['summary']}" if p["summary"] else ""))
        details = p["details"]
        for line in details[:MAX_DETAIL_LINES]:
            out.append(f"    {line}")
        if len(details) > MAX_DETAIL_LINES:
            out.append(f"    … {len(details) - MAX_DETAIL_LINES} more (--json has them all)")
    return "\n".join(out) + "\n"


def read_mixed(path: str, stdin) -> tuple[Segmentation | None, bytes]:
    """``(segmentation, head)``: the parts of FILE (or of ``stdin``'s bytes for ``-``) when it is at most
    :data:`MAX_MIXED_BYTES`, not compressed, and mixed; else ``(None, head)`` where ``head`` holds the bytes read
    from ``stdin`` (to be scanned before the rest of it). Raises OSError for an unreadable FILE."""
    if path == "-":
        head = stdin.read(MAX_MIXED_BYTES + 1)
        if len(head) > MAX_MIXED_BYTES:
            return None, head
        data = head
    else:
        if os.path.isdir(path) or os.path.getsize(path) > MAX_MIXED_BYTES:
            return None, b""
        with open(path, "rb") as handle:
            data = handle.read(MAX_MIXED_BYTES + 1)
        head = b""
    if data[:2] == b"\x1f\x8b" or b"specdash_version" in data[:256] or data.lstrip().startswith(b"--- # size"):
        return None, head
    if not _CANDIDATE.search(data):
        return None, head
    seg = segment(data.decode("utf-8", "replace"))
    return (seg if is_mixed(seg) else None), head


class _Prefixed(io.RawIOBase):
    """A binary stream that yields ``head`` and then the rest of ``rest`` (stdin after :func:`read_mixed`)."""

    def __init__(self, head: bytes, rest) -> None:
        super().__init__()
        self._head = memoryview(head)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if len(self._head):
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read1(len(buffer)) if hasattr(self._rest, "read1") else self._rest.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def prefixed(head: bytes, rest) -> Any:
    """``head`` followed by the rest of the binary stream ``rest``, as one line-iterable binary stream."""
    return io.BufferedReader(_Prefixed(head, rest))
