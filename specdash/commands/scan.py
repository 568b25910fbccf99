"""``specdash scan [--json] FILE|-``: findings, start-up timeline and metric summary of an SGLang server log.

Exit status: 0, or 1 when the log shows a crash (a traceback's exception, an argparse failure, an OOM, a child
failure). A missing/unreadable file is a usage error (exit 2, one line).
"""

from __future__ import annotations

import argparse
import re
import zlib

NAME = "scan"
HELP = "summarise an SGLang server log: findings, start-up timeline, metrics (exit 1 on a crash)"
DESCRIPTION = (
    "Read an SGLang server log (FILE, or - for stdin) and print what matters: overrides SGLang applied, the crash "
    "reason, time to ready, acceptance and throughput, KV-pool retractions, OOM. Exit 1 when the log shows a crash. "
    "A text that mixes a launch command, a log excerpt, an nvidia-smi output or benchmark output (an issue body) is "
    "reported part by part, in order, each with its line range and its analyzer (exit 1 also for a command error)."
)

#: Lines per block read from a compressed log (line by line, so the lines before damaged data are all read).
BATCH_LINES = 4096
#: True: read every line the per-line way (:class:`specdash.logs.bulk.PerLineReader`), the reference the bulk path
#: is tested against; False (the default): :class:`specdash.logs.bulk.BulkReader`.
PER_LINE = False
#: Texts up to this many lines are also searched for benchmark output (bench_serving, tables, ...).
BENCH_MAX_LINES = 20_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="server log file, or - for standard input")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    parser.add_argument("--sglang-version", metavar="V",
                        help="SGLang release that wrote the log: known SGLang issues are matched for it (default: not "
                             "known, so release-dependent issues are reported at info level)")


def _line_blocks(stream):
    """Yield blocks of whole lines (bytes, each ending in a newline but maybe the last) of a stream read line by
    line: a compressed log, whose damage must not hide the lines read before it."""
    batch: list[bytes] = []
    for raw in stream:
        batch.append(raw)
        if len(batch) >= BATCH_LINES:
            yield b"".join(batch)
            batch = []
    if batch:
        yield b"".join(batch)


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from specdash.cli import UsageError
    from specdash.logs.analyzer import LogAnalyzer
    from specdash.logs.bulk import BulkReader, PerLineReader, read_blocks
    from specdash.sglang.known_issues import KNOWN_ISSUES, KnownIssueLogScanner
    from specdash.sglang.versions import parse_version
    from specdash.text.display import clean

    version = getattr(args, "sglang_version", None)
    if version:
        try:
            parse_version(version)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    from specdash.commands import scan_parts

    try:  # a text that mixes a command, a log, a GPU table or benchmark output: each part by its analyzer
        mixed, head = scan_parts.read_mixed(args.file, sys.stdin.buffer)
    except OSError:
        mixed, head = None, b""  # reported below as for any log
    if mixed is not None:
        doc = scan_parts.analyze(mixed, version)
        if args.json:
            json.dump(doc, sys.stdout, indent=1, default=str)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(clean(scan_parts.render(doc), newlines=True))
        return 1 if doc["failed"] else 0
    known = KnownIssueLogScanner(version)
    analyzer = LogAnalyzer()
    needles = (pattern.needle for entry in KNOWN_ISSUES for pattern in entry.logs)
    reader = (PerLineReader if PER_LINE else BulkReader)(analyzer, on_line=known.feed, watch=needles)
    compressed = False
    if args.file == "-":
        stream = scan_parts.prefixed(head, sys.stdin.buffer)
        close = False
    else:
        try:
            stream = open(args.file, "rb")
        except OSError as exc:
            raise UsageError(f"cannot read {args.file}: {exc.strerror or exc}") from None
        close = True
        head = stream.peek(64)[:64] if hasattr(stream, "peek") else b""
        if head.startswith(b"\x1f\x8b"):  # a compressed log (server.log.gz) or a compressed session
            import gzip

            stream = gzip.open(stream, "rb")
            compressed = True
            try:
                head = stream.peek(256)[:256]
            except (EOFError, OSError, ValueError, zlib.error):  # damaged or cut: the read below reports it
                head = b""
        if head.lstrip().startswith(b"--- # size") or b"specdash_version" in head:
            stream.close()
            raise UsageError(f"{args.file} is a specdash session, not a server log: use "
                             f"'specdash replay {args.file}' (or 'specdash replay --summary {args.file}')")
    damaged = ""
    kept: list[bytes] | None = []  # the text, while short enough to look for benchmark output in it
    kept_newlines = 0
    try:
        for block in (_line_blocks(stream) if compressed else read_blocks(stream)):
            if kept is not None:
                kept.append(block)
                kept_newlines += block.count(b"\n")
                if kept_newlines > BENCH_MAX_LINES:
                    kept = None
            reader.feed(block)
    except IsADirectoryError:
        raise UsageError(f"{args.file} is a directory, not a log file") from None
    except (EOFError, zlib.error, OSError, ValueError) as exc:  # a damaged or cut .gz: report what was read before it
        damaged = f"compressed data damaged or cut ({exc}): the rest of the file is not read"
    finally:
        if close:
            stream.close()

    reader.close()
    analyzer.end_of_input()
    summary = analyzer.summary()
    if known.findings():
        from specdash.severity import severity_rank

        summary["findings"] = sorted(summary["findings"] + known.findings(),
                                     key=lambda f: (severity_rank(f["severity"]), f["line"]))
    kept_lines: list[str] | None = None
    if kept is not None and reader.lines <= BENCH_MAX_LINES:
        text = b"".join(kept).decode("utf-8", "replace")
        kept_lines = text.split("\n")
        if text.endswith("\n") or not text:
            kept_lines.pop()
    bench = _benchmark_results(kept_lines, summary)
    _no_log_lines(kept_lines, summary)
    if damaged:
        sys.stderr.write(f"specdash scan: warning: {clean(damaged, max_chars=300)}\n")
    if args.json:
        json.dump(summary, sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
    elif bench and summary.get("benchmark_only"):
        sys.stdout.write(clean(bench, newlines=True) + "\n")
    elif summary.get("no_log_lines") and not bench:
        sys.stdout.write(f"{summary['lines']} lines; no SGLang log lines in it (no timestamped server lines, "
                         "tracebacks, decode/prefill or start-up lines): prose or other text is not read as a log, "
                         "so there is nothing to report\n")
    else:
        sys.stdout.write(clean(render_text(summary) + (f"\nBenchmark results\n{bench}\n" if bench else ""),
                               newlines=True))
    return 1 if summary["crashed"] else 0


def _benchmark_results(lines: list[str] | None, summary: dict) -> str:
    """Add ``benchmark_results`` (see :meth:`specdash.bench.imported.ImportedResult.to_dict`) and
    ``benchmark_only`` (True when the text holds benchmark output and no server-log content) to ``summary``;
    return the results as text ("" when none)."""
    if not lines:
        return ""
    from specdash.bench.imported import find_results
    from specdash.bench.imported.report import result_text

    results = find_results("\n".join(lines) + "\n")
    if not results:
        return ""
    summary["benchmark_results"] = [r.to_dict() for r in results]
    summary["benchmark_only"] = not (summary["findings"] or summary["metrics"] or summary["startup"]["phases"])
    return "\n\n".join(result_text(r) for r in results)


#: A token only program output has (an identifier with ``_``, a ``--flag``, ``key=value``, ``file.py``, ``XError``,
#: a hex address): a line with one may be a log message printed without its prefix; a line without is prose.
_MACHINE_TOKEN = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|(?:^|\s)--?[A-Za-z]|\w=\S|\w\.py\b|\w(?:Error|Exception)\b|"
                            r"0x[0-9a-fA-F]|[<>|]|\w\.\w+\(")


def _no_log_lines(lines: list[str] | None, summary: dict) -> None:
    """In a short text (``lines``; None for a long one) findings the analyzer read from prose are dropped: lines
    outside the log parts (:func:`specdash.text.segments.detect_logs`: timestamped lines, tracebacks,
    decode/prefill/start-up lines) without a :data:`_MACHINE_TOKEN` (an issue's "it says out of memory sometimes"
    is no OOM). With no log part and no finding left, ``summary["no_log_lines"]`` is set. A text with metrics or
    start-up phases is a log and is left alone."""
    if lines is None or summary["metrics"] or summary["startup"]["phases"]:
        return
    from specdash.text.segments import detect_logs

    parts = detect_logs(list(lines), [0] * len(lines))
    in_log = [False] * len(lines)
    for first, last, _ in parts:
        in_log[first:last + 1] = [True] * (last + 1 - first)

    def prose(finding: dict) -> bool:
        line = finding.get("line")
        return (isinstance(line, int) and 1 <= line <= len(lines) and not in_log[line - 1]
                and not _MACHINE_TOKEN.search(lines[line - 1]))

    summary["findings"] = [f for f in summary["findings"] if not prose(f)]
    if not summary["findings"] and not parts:
        summary["no_log_lines"] = True
        summary["crashed"] = False


def render_text(summary: dict) -> str:
    """Human-readable report of :meth:`LogAnalyzer.summary`."""
    out: list[str] = []
    out.append(f"{summary['lines']} lines; server state: {summary['server_state']}"
               + ("; CRASHED" if summary["crashed"] else ""))
    coverage = summary.get("coverage") or {}
    if coverage.get("excerpt"):
        out.append("excerpt: no start-up lines and no end (a piece of a longer log); it cannot tell "
                   + "; ".join(coverage["cannot_tell"]))
    out.append("")
    out.append("Findings")
    if not summary["findings"]:
        out.append("  (none)")
    marks = {"error": "E", "warning": "W", "success": "+", "info": "i"}
    for f in summary["findings"]:
        count = f" ×{f['count']}" if f["count"] > 1 else ""
        when = f" {f['time']}" if f["time"] else ""
        out.append(f"  [{marks.get(f['severity'], '?')}] line {f['line']}{when}: {f['message']}{count}")
        if f["explanation"]:
            out.append(f"      {f['explanation']}")
        if f["fix"]:
            out.append(f"      fix: {f['fix']}")
    startup = summary["startup"]
    if startup["phases"]:
        out.append("")
        ttr = startup["time_to_ready_s"]
        out.append("Start-up" + (f" (ready after {ttr:.0f} s)" if ttr is not None else ""))
        for p in startup["phases"]:
            elapsed = f"{p['elapsed_s']:.2f} s" if p["elapsed_s"] is not None else p["state"]
            mem = ", ".join(f"{k}={v}" for k, v in p.items() if k.endswith("_gb") or k == "kv_tokens")
            out.append(f"  {p['label']:<22} {elapsed:>10}  {mem}")
    metrics = summary["metrics"]
    if metrics:
        out.append("")
        out.append("Metrics (mean over trusted samples; last; samples)")
        for name, m in metrics.items():
            of_all = ", mean of all (none trusted)" if m.get("mean_of") == "all" else ""
            out.append(f"  {name:<16} mean {m['mean']:<10g} last {m['last']:<10g} samples {m['samples']} "
                       f"(trusted {m['trusted_samples']}){of_all}")
    if summary.get("consistency"):
        out.append(f"  check: {summary['consistency']['text']}")
    out.append("")
    return "\n".join(out)
