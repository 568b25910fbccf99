"""Classify SGLang server-log lines, one at a time, as they stream (no Textual, no I/O).

What it understands (SGLang's logging formats, 0.4.x to 2026 releases; examples in
``tests/data/logs/sglang-log-formats.txt``):

* the prefix ``[YYYY-MM-DD HH:MM:SS<ranks>] `` where ``<ranks>`` is `` TP0`` (0.4.x, always), `` DP1 TP1 EP1``
  (0.5.x: only the parallel dimensions in use) or nothing (single GPU, main process); 2026 formatters add
  ``INFO file.py:123: ``; 2024 logs use ``[gpu_id=0] ``; vLLM lines ``(APIServer pid=1) INFO 08-06 09:48:40 [f.py:1] ``;
* bare lines: early ServerArgs warnings (printed before logging is configured), tqdm bars, tracebacks, argparse;
* uvicorn lines (``INFO:     ...``).

Each line becomes a :class:`ParsedLine` with a :class:`LineKind`. Decode/prefill lines carry a typed record
(:mod:`specdash.logs.records`); start-up lines carry their figures in ``info`` (GB values as ``*_gb`` floats,
seconds as ``*_s``).

Robustness: a line is cut to :data:`MAX_PARSE_CHARS` before any regex runs (all regexes are linear, so a
100 000-char line costs microseconds, never a hang); the displayed ``text`` is cut to :data:`MAX_TEXT_CHARS`;
tqdm ``\\r`` storms keep only their last state; ANSI escapes, NUL and other control bytes are removed; lone
surrogates (from ``surrogateescape`` decoding) are replaced.
"""

from __future__ import annotations

import enum
import re
from datetime import datetime
from typing import Any, Literal

from specdash.logs.records import (
    DecodeRecord,
    PrefillRecord,
    parse_decode,
    parse_prefill,
    parse_vllm_spec_metrics,
)
from specdash.text.display import clean as display_clean

#: Characters of one line that are looked at by the classifier (the ServerArgs line of 2026 is ~8 000 chars).
MAX_PARSE_CHARS = 65_536
#: Characters of one line kept in ``ParsedLine.text`` (what the pane renders); longer lines end in a marker.
MAX_TEXT_CHARS = 8_192
#: Characters kept in ``ParsedLine.raw``.
MAX_RAW_CHARS = 8_192


class LineKind(str, enum.Enum):
    """What a log line is. Severity per kind: :func:`severity_of`."""

    override = "override"  # SGLang silently changed/auto-chose a setting (server_args.py)
    warning = "warning"
    error = "error"  # exception line, argparse error, "Scheduler hit an exception", sigquit, CUDA error
    traceback = "traceback"  # "Traceback (most recent call last):" and its frames (grouped)
    decode = "decode"
    prefill = "prefill"
    dist_begin = "dist_begin"  # "Init torch distributed begin." (model_runner.py init_torch_distributed)
    dist_end = "dist_end"  # "Init torch distributed ends. [elapsed=13.00 s, ]mem usage=0.09 GB"
    weights_begin = "weights_begin"
    weights_end = "weights_end"
    kv_cache = "kv_cache"
    graph_begin = "graph_begin"
    graph_progress = "graph_progress"
    graph_end = "graph_end"
    ready = "ready"
    retract = "retract"  # KV pool full, requests retracted
    oom = "oom"  # CUDA out of memory / KV pool too small
    server_args = "server_args"  # server_args=ServerArgs(...) (effective settings after rewrites)
    capacity = "capacity"  # max_total_num_tokens=..., max_running_requests=...
    timings = "timings"  # 2026 "Engine startup timings (s): ..."
    progress = "progress"  # other tqdm bars (checkpoint shards, ...)
    http = "http"  # uvicorn start-up and access lines
    marker = "marker"  # a line specdash inserted itself (truncation, reconnect); never produced by the parser
    plain = "plain"


_K_DECODE = LineKind.decode

Severity = Literal["error", "warning", "success"]

_SEVERITY: dict[LineKind, Severity] = {
    LineKind.override: "warning",
    LineKind.warning: "warning",
    LineKind.retract: "warning",
    LineKind.error: "error",
    LineKind.traceback: "error",
    LineKind.oom: "error",
    LineKind.ready: "success",
}


def severity_of(kind: LineKind) -> Severity | None:
    """``"warning"`` for override/warning/retract, ``"error"`` for error/traceback/oom, ``"success"`` for ready,
    else None."""
    return _SEVERITY.get(kind)


_LAZY: Any = object()


class ParsedLine:
    """One classified line.

    ``number``: 1-based line number in the stream; ``raw``: the input (cut to MAX_RAW_CHARS); ``text``: the line
    as displayed (no ANSI/NUL/control bytes, last tqdm state only, cut to MAX_TEXT_CHARS); ``message``: ``text``
    without the ``[time ranks]`` prefix; ``timestamp``: naive datetime from the prefix (server local time) or None;
    ``ranks``: ``"TP0"``, ``"DP1 TP1 EP1"`` or ``""``; ``level``: ``INFO``/``WARNING``/... when the formatter prints
    it; ``record``: figures of decode/prefill lines (:class:`DecodeRecord` / :class:`PrefillRecord`, parsed on
    first access, so classifying alone stays cheap); ``group``: for tracebacks, the number of the line that opened
    the traceback (0 otherwise); ``info``: figures of start-up and failure lines; ``truncated``: the line was cut.
    """

    __slots__ = ("number", "raw", "text", "kind", "timestamp", "ranks", "message", "level", "_record", "group",
                 "info", "truncated")

    def __init__(
        self,
        number: int,
        raw: str,
        text: str,
        kind: LineKind,
        timestamp: datetime | None = None,
        ranks: str = "",
        message: str = "",
        level: str = "",
        record: DecodeRecord | PrefillRecord | None = None,
        group: int = 0,
        info: dict[str, Any] | None = None,
        truncated: bool = False,
    ) -> None:
        self.number = number
        self.raw = raw
        self.text = text
        self.kind = kind
        self.timestamp = timestamp
        self.ranks = ranks
        self.message = message
        self.level = level
        self._record = record
        self.group = group
        self.info = info
        self.truncated = truncated

    @property
    def record(self) -> DecodeRecord | PrefillRecord | None:
        """Decode/prefill figures (None for other kinds)."""
        rec = self._record
        if rec is _LAZY:
            rec = parse_decode(self.message) if self.kind is _K_DECODE else parse_prefill(self.message)
            self._record = rec
        return rec

    @record.setter
    def record(self, value: DecodeRecord | PrefillRecord | None) -> None:
        self._record = value

    @property
    def severity(self) -> Severity | None:
        """:func:`severity_of` this line's kind."""
        return _SEVERITY.get(self.kind)

    def __repr__(self) -> str:
        return f"ParsedLine({self.number}, {self.kind.value}, ranks={self.ranks!r}, text={self.text[:60]!r})"


_TS_CACHE: dict[str, datetime | None] = {}


def _timestamp_of(text: str) -> datetime | None:
    ts = _TS_CACHE.get(text)
    if ts is None and text not in _TS_CACHE:
        if len(_TS_CACHE) > 4096:
            _TS_CACHE.clear()
        try:
            ts = datetime.fromisoformat(text)
        except ValueError:
            ts = None
        _TS_CACHE[text] = ts
    return ts


class _FastLine(ParsedLine):
    """A ``[time ranks] Decode batch`` / ``Prefill batch`` / uvicorn line from :meth:`LogParser.feed_many`'s short
    path: clean ASCII, no level tag, not truncated. Prefix fields are derived from ``text`` on access."""

    __slots__ = ("_start",)

    level = ""
    group = 0
    info = None
    truncated = False

    def __init__(self, number: int, text: str, kind: LineKind, start: int, record: Any) -> None:
        self.number = number
        self.text = text
        self.kind = kind
        self._start = start
        self._record = record

    @property
    def raw(self) -> str:  # type: ignore[override]
        return self.text

    @property
    def message(self) -> str:  # type: ignore[override]
        return self.text[self._start:]

    @property
    def timestamp(self) -> datetime | None:  # type: ignore[override]
        return _timestamp_of(self.text[1:20])

    @property
    def ranks(self) -> str:  # type: ignore[override]
        text = self.text
        return text[21:self._start - 2] if text[20] == " " else ""


# ---------------------------------------------------------------------------------------------------------------
_PREFIX = re.compile(
    r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:[.,]\d+)?((?: [A-Z]{2}\d+)*)\] "
    r"(?:(INFO|WARNING|ERROR|DEBUG|CRITICAL) [\w.\-]+\.py:\d+: )?"
)
_FAST_PREFIX = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)((?: [A-Z]{2}\d+)*)\] ")
_LEVELS = ("INFO ", "WARNING ", "ERROR ", "DEBUG ", "CRITICAL ")
#: How a uvicorn line's message starts, and what sends it the long way (a 5xx status may make it a warning).
ACCESS_START = "INFO:  "
ACCESS_5XX = " 50"
_LEVEL = re.compile(r"(INFO|WARNING|ERROR|DEBUG|CRITICAL) [\w.\-]+\.py:\d+: ")
_GPU_PREFIX = re.compile(r"\[gpu_id=(\d+)\] ")
_VLLM_PREFIX = re.compile(
    r"(?:\((\w+ pid=\d+)\) )?(INFO|WARNING|ERROR|DEBUG|CRITICAL) (\d\d-\d\d \d\d:\d\d:\d\d) \[[\w.\-]+:\d+\] "
)
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CTRL_ANY = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_SPECIAL = re.compile(r"[\x00-\x1f\x7f]")
_CTRL_STRIP = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]+")

_START = re.compile(
    r"(?P<dist_begin>Init torch distributed begin)"
    r"|(?P<dist_end>Init torch distributed ends)"
    r"|(?P<weights_begin>Load weight begin)"
    r"|(?P<weights_end>Load weight end)"
    r"|(?P<kv_cache>KV Cache is allocated)"
    r"|(?P<graph_sizes>Capture cuda graph bs )"
    r"|(?P<graph_begin>Capture (?:[a-z]+ )*(?:cuda|CUDA) graph begin)"
    r"|(?P<graph_end>Capture (?:[a-z]+ )*(?:cuda|CUDA) graph end)"
    r"|(?P<graph_progress>Capturing batches)"
    r"|(?P<ready>The server is fired up and ready to roll)"
    r"|(?P<retract>KV cache pool is full|Decode out of memory happened)"
    r"|(?P<server_args>server_args=)"
    r"|(?P<capacity>max_total_num_tokens=)"
    r"|(?P<timings>Engine startup timings)"
    r"|(?P<http>INFO: {2,})"
    r"|(?P<error>Scheduler hit an exception|Received sigquit|Initialization failed|Exception in |"
    r"(?:Multimodal)?Detokenizer(?:Manager)? hit an exception|TokenizerManager hit an exception|Killed\b)"
)

_EXCEPTION = re.compile(r"((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure|Warning))(?:: (.*))?$")
_ARGPARSE = re.compile(r"[\w.\-]+: error: ")
_TQDM = re.compile(r"(\d+)%(?:\||\s*Completed \|)[^|]*?\|? *(\d+)/(\d+) \[([\d:]+)<([\d:?]+)")

#: Phrases of SGLang's silent-rewrite notices (``server_args.py`` warnings) — any of these makes a line an override.
OVERRIDE_PHRASES: tuple[str, ...] = (
    " is adjusted to ",
    " is reset to ",
    " is changed to ",
    " is set to ",
    " are disabled",
    " is disabled",
    " by default",
    "overriding",
    "does not require setting",
    "spec v2 is used",
)
_WARNING_PHRASES: tuple[str, ...] = ("Warning: ", "WARNING", "is deprecated", "has been removed", "warnings.warn")
_OOM_PHRASES: tuple[str, ...] = ("out of memory", "OutOfMemoryError", "Not enough memory")
_ERROR_PHRASES: tuple[str, ...] = ("CUDA error", "NCCL error", "Segmentation fault", "core dumped")
#: The HTTP server could not listen on its port: the OSError text of CPython's asyncio ``create_server`` ("error
#: while attempting to bind on address %r: %s"), which uvicorn logs as ``ERROR:    [Errno 98] ...`` and exits.
BIND_FAILED = "error while attempting to bind on address"

_GB = {
    "avail_mem_gb": re.compile(r"avail[ _]mem=([\d.]+) ?GB"),
    "mem_usage_gb": re.compile(r"mem usage=([\d.]+) ?GB"),
}
_ELAPSED = re.compile(r"(?:Time elapsed: |elapsed=)([\d.]+) ?s")
_ARCH = re.compile(r"type=(\w+)")
_KV_TOKENS = re.compile(r"#tokens: (\d+)")
_KV_SIZE = re.compile(r"\b(K|V|KV) size: ([\d.]+) GB")
_GRAPH_WHAT = re.compile(r"Capture ((?:[a-z]+ )*)(?:cuda|CUDA) graph")
_BS_LIST = re.compile(r"bs[=\s]*\[([\d,\s]*)\]")
_BS_ONE = re.compile(r"\(bs=(\d+)")
_RETRACTED = re.compile(r"#retracted_reqs: (\d+)")
_ASSIGN = re.compile(r"(\w+)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^,()\s]+)")
_TIMING = re.compile(r"(\w+)=([\d.]+)")

#: ServerArgs fields kept in ``info`` of a server_args line (SGLang's names).
SERVER_ARGS_FIELDS: frozenset[str] = frozenset(
    {
        "model_path", "served_model_name", "tp_size", "dp_size", "ep_size", "pp_size", "mem_fraction_static",
        "max_running_requests", "max_total_tokens", "chunked_prefill_size", "page_size", "attention_backend",
        "cuda_graph_max_bs", "disable_cuda_graph", "decode_log_interval", "disable_overlap_schedule",
        "enable_mixed_chunk", "speculative_algorithm", "speculative_draft_model_path", "speculative_num_steps",
        "speculative_eagle_topk", "speculative_num_draft_tokens", "port", "host", "quantization", "dtype",
        "kv_cache_dtype", "context_length", "schedule_conservativeness",
    }
)


def _value(text: str) -> Any:
    if text[:1] in "'\"":
        return text[1:-1]
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _secs(clock: str) -> float | None:
    """``"01:02"`` / ``"1:02:03"`` (tqdm) -> seconds; ``"?"`` -> None."""
    try:
        total = 0.0
        for part in clock.split(":"):
            total = total * 60 + float(part)
        return total
    except ValueError:
        return None


def clean_text(line: str) -> str:
    """``line`` without ANSI escapes, NUL/control bytes (tabs become spaces) and lone surrogates; a non-ASCII line
    also without C1 controls (U+0080-U+009F: U+009B is an 8-bit CSI) and bidi overrides (U+202E ...), as
    :func:`specdash.text.display.clean` removes them."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if "\t" in line:
        line = line.expandtabs(4)
    if _CTRL_ANY.search(line) is not None:
        line = _CTRL_STRIP.sub("", line)
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            line = line.encode("utf-8", "replace").decode("utf-8", "replace")
        line = display_clean(line)
    return line


def last_tqdm_state(line: str) -> str:
    """For a ``\\r``-separated tqdm storm, the last non-empty state (a CRLF ending is just removed)."""
    stripped = line.rstrip("\r")
    if "\r" not in stripped:
        return stripped
    return stripped.rsplit("\r", 1)[-1]


class LogParser:
    """Stateful line classifier: groups tracebacks, knows when a CUDA graph capture is running (so a bare tqdm
    bar is capture progress), collapses ``\\r`` storms. Feed lines in stream order.

    ``default_year`` is used for vLLM timestamps, which have no year (default: the current year).
    """

    def __init__(self, default_year: int | None = None) -> None:
        self._number = 0
        self._tb_group = 0  # number of the line that opened the current traceback, 0 when none is open
        self._tb_recent = 0  # group of the traceback that just ended (for chained exceptions)
        self._capturing = False
        self._ts_text = ""
        self._ts: datetime | None = None
        self._year = default_year or datetime.now().year

    @property
    def lines_seen(self) -> int:
        """How many lines were fed."""
        return self._number

    @property
    def in_traceback(self) -> bool:
        """True while a traceback is open or has just ended (the next line may still belong to it)."""
        return bool(self._tb_group or self._tb_recent)

    def advance(self, lines: int) -> None:
        """Count ``lines`` lines read by the bulk path (:mod:`specdash.logs.bulk`) without :meth:`feed`: the next
        line fed gets the number after them. Only valid while :attr:`in_traceback` is False (those lines are
        regular scheduler/uvicorn lines, which close no state here)."""
        self._number += lines

    def feed_many(self, lines: list[str]) -> list[ParsedLine]:
        """Classify a batch of lines in stream order; returns one :class:`ParsedLine` per line.

        The scheduler's ``Decode batch`` / ``Prefill batch`` lines (most of a busy log) take a short path with one
        regex; every other line goes through :meth:`feed`'s full classification."""
        out: list[ParsedLine] = []
        append = out.append
        match = _FAST_PREFIX.match
        fast = _FastLine
        decode, prefill, http = LineKind.decode, LineKind.prefill, LineKind.http
        lazy = _LAZY
        limit = MAX_TEXT_CHARS
        number = self._number
        for line in lines:
            number += 1
            if not self._tb_group and not self._tb_recent and len(line) <= limit:
                m = match(line)
                if m is not None and line.isascii() and "\x1b" not in line and "\r" not in line \
                        and "\x00" not in line and "\t" not in line and "\x07" not in line:
                    start = m.end()
                    if line.startswith("Decode batch", start):
                        kind = decode
                    elif line.startswith("Prefill batch", start):
                        kind = prefill
                    elif line.startswith(ACCESS_START, start) and ACCESS_5XX not in line:
                        kind = http  # uvicorn start-up and access lines (a 5xx status goes the long way)
                    else:
                        kind = None
                    if kind is not None:
                        append(fast(number, line, kind, start, None if kind is http else lazy))
                        continue
            self._number = number - 1
            append(self.feed(line))
        self._number = number
        return out

    def capture_progress(self, partial: str) -> dict[str, Any] | None:
        """Progress of a CUDA graph capture from a line still being written (the ``\\r``-separated tqdm states
        of ``Capturing batches ...`` before its newline): ``{"pct", "done", "total", "elapsed_s", "eta_s", ...}``
        of the last state, or None when it is not capture progress. Changes nothing: the complete line is fed
        later like any other."""
        text = partial[-MAX_PARSE_CHARS:] if len(partial) > MAX_PARSE_CHARS else partial
        message = clean_text(last_tqdm_state(text.replace("\n", "")))
        m = _PREFIX.match(message)
        if m is not None:
            message = message[m.end():]
        if "%|" not in message or not (self._capturing or message.startswith("Capturing")):
            return None
        return _tqdm_info(message)

    def feed(self, line: str) -> ParsedLine:
        """Classify one line (without its trailing newline; a trailing ``\\n`` is tolerated)."""
        self._number += 1
        number = self._number
        raw = line if len(line) <= MAX_RAW_CHARS else line[:MAX_RAW_CHARS]
        truncated = False
        s = line
        if len(s) > MAX_PARSE_CHARS:
            if "\r" in s:  # a long tqdm storm: its last state is at the end
                s = last_tqdm_state(s.replace("\n", ""))
            if len(s) > MAX_PARSE_CHARS:
                s = s[:MAX_PARSE_CHARS]
                truncated = True
        if not s.isascii() or "\x1b" in s or "\r" in s or "\x00" in s or "\t" in s or "\x07" in s:
            if "\r" in s or "\n" in s:
                s = last_tqdm_state(s.replace("\n", ""))
            s = clean_text(s)

        # ---- prefix -------------------------------------------------------------------------------------
        timestamp = None
        ranks = ""
        level = ""
        message = s
        first = s[:1]
        if first == "[":
            m = _FAST_PREFIX.match(s)
            if m is not None:
                ts_text, ranks = m.groups()
                if ts_text == self._ts_text:
                    timestamp = self._ts
                else:
                    try:
                        timestamp = datetime.fromisoformat(ts_text)
                    except ValueError:
                        timestamp = None
                    self._ts_text, self._ts = ts_text, timestamp
                if ranks:
                    ranks = ranks[1:]
                message = s[m.end():]
                if message[:1] in "IWEDC" and message.startswith(_LEVELS):
                    lm = _LEVEL.match(message)
                    if lm is not None:
                        level = lm.group(1)
                        message = message[lm.end():]
            else:
                m = _PREFIX.match(s)
                if m is not None:
                    try:
                        timestamp = datetime.fromisoformat(m.group(1))
                    except ValueError:
                        timestamp = None
                    r = m.group(2)
                    if r:
                        ranks = r[1:]
                    level = m.group(3) or ""
                    message = s[m.end():]
                else:
                    m = _GPU_PREFIX.match(s)
                    if m is not None:
                        ranks = f"GPU{m.group(1)}"
                        message = s[m.end():]
        elif first == "(" or first in "IWEDC":
            m = _VLLM_PREFIX.match(s)
            if m is not None:
                level = m.group(2)
                try:
                    timestamp = datetime.strptime(f"{self._year}-{m.group(3)}", "%Y-%m-%d %H:%M:%S")
                except ValueError:
                    timestamp = None
                ranks = m.group(1) or ""
                message = s[m.end():]

        if len(s) > MAX_TEXT_CHARS:
            text = f"{s[:MAX_TEXT_CHARS]} … [+{len(s) - MAX_TEXT_CHARS} chars]"
            truncated = True
        else:
            text = s

        # ---- fast paths: the scheduler's periodic lines (figures parsed on first access of .record) -------
        if message.startswith("Decode batch"):
            if self._tb_group or self._tb_recent:
                self._close_traceback()
            return ParsedLine(number, raw, text, LineKind.decode, timestamp, ranks, message, level, _LAZY, 0, None,
                              truncated)
        if message.startswith("Prefill batch"):
            if self._tb_group or self._tb_recent:
                self._close_traceback()
            return ParsedLine(number, raw, text, LineKind.prefill, timestamp, ranks, message, level, _LAZY, 0, None,
                              truncated)
        parsed = ParsedLine(number, raw, text, LineKind.plain, timestamp, ranks, message, level, None, 0, None,
                            truncated)

        # ---- tracebacks (bare lines following "Traceback (most recent call last):") -------------------------
        if self._tb_group or self._tb_recent:
            if self._continue_traceback(parsed, message, prefixed=timestamp is not None):
                return parsed
        if message.startswith('  File "') and timestamp is None:
            # a traceback whose header was cut off (quoted excerpts, a tail started mid-traceback)
            self._tb_group = number
            parsed.kind = LineKind.traceback
            parsed.group = number
            return parsed

        self._classify(parsed, message)
        return parsed

    # -------------------------------------------------------------------------------------------------------
    def _close_traceback(self) -> None:
        self._tb_group = 0
        self._tb_recent = 0

    def _continue_traceback(self, parsed: ParsedLine, message: str, prefixed: bool) -> bool:
        """Handle a line while a traceback is open (or just ended); True when the line belonged to it."""
        if prefixed:
            self._close_traceback()
            return False
        if self._tb_group:
            group = self._tb_group
            if message[:1] in (" ", "\t") or message == "" or message.startswith(
                    ("During handling", "The above exception", "Traceback (most recent")):
                parsed.kind = LineKind.traceback
                parsed.group = group
                return True
            m = _EXCEPTION.match(message)
            if m is not None:
                parsed.group = group
                parsed.kind = LineKind.oom if _is_oom(message) else LineKind.error
                parsed.info = {"exception": m.group(1), "detail": m.group(2) or ""}
                self._tb_group = 0
                self._tb_recent = group
                return True
            if message.startswith(("→", "->", "torch.", "RuntimeError", "Exception")):
                parsed.kind = LineKind.error
                parsed.group = group
                return True
            self._close_traceback()
            return False
        # just after an exception line: a blank line or a chain marker re-opens the same group
        group = self._tb_recent
        if message == "" or message.startswith(("During handling", "The above exception", "Traceback (most recent")):
            parsed.kind = LineKind.traceback
            parsed.group = group
            if message:
                self._tb_group = group
            return True
        if message.startswith(("→", "->")):
            parsed.kind = LineKind.error
            parsed.group = group
            return True
        self._tb_recent = 0
        return False

    def _classify(self, parsed: ParsedLine, message: str) -> None:
        m = _START.match(message)
        if m is not None:
            name = str(m.lastgroup)  # every alternative of _START is a named group
            kind = _KIND_BY_NAME[name]
            parsed.kind = kind
            if kind is LineKind.error:
                if "Traceback (most recent call last)" in message:
                    self._tb_group = parsed.number
                    self._tb_recent = 0
                    parsed.group = parsed.number
                parsed.info = {"exception": "", "detail": message}
            elif name == "graph_sizes":
                parsed.kind = LineKind.plain
                parsed.info = _graph_info(message, sizes_only=True)
            else:
                parsed.info = _INFO_BUILDERS[kind](self, message)
                if kind is LineKind.http and (' 500 ' in message or ' 503 ' in message):
                    parsed.kind = LineKind.warning
            return

        if "Traceback (most recent call last)" in message:
            self._tb_group = parsed.number
            self._tb_recent = 0
            parsed.kind = LineKind.traceback
            parsed.group = parsed.number
            return
        if "%|" in message or "% Completed" in message:
            info = _tqdm_info(message)
            if info is not None:
                captures = self._capturing or message.startswith("Capturing")
                parsed.kind = LineKind.graph_progress if captures else LineKind.progress
                parsed.info = info
                return
        for phrase in _OOM_PHRASES:
            if phrase in message:
                parsed.kind = LineKind.oom
                em = _EXCEPTION.match(message)
                parsed.info = {"exception": em.group(1) if em else "", "detail": em.group(2) or "" if em else message}
                return
        em = _EXCEPTION.match(message)
        if em is not None:
            exc = em.group(1)
            if exc.endswith("Warning"):
                parsed.kind = LineKind.warning
            else:
                parsed.kind = LineKind.error
                parsed.info = {"exception": exc, "detail": em.group(2) or ""}
            return
        if "accept len: " in message:
            parsed.kind = LineKind.decode  # a quoted/condensed decode figure
            parsed.record = parse_decode(message)
            return
        if message.startswith("SpecDecoding metrics"):
            parsed.kind = LineKind.decode
            parsed.record = parse_vllm_spec_metrics(message)
            return
        if _ARGPARSE.match(message) is not None:
            parsed.kind = LineKind.error
            parsed.info = {"exception": "argparse", "detail": message.split(": error: ", 1)[1]}
            return
        if BIND_FAILED in message:
            parsed.kind = LineKind.error
            parsed.info = {"exception": "OSError", "detail": message[max(0, message.find("[Errno")):].strip()}
            return
        for phrase in _ERROR_PHRASES:
            if phrase in message:
                parsed.kind = LineKind.error
                parsed.info = {"exception": "", "detail": message}
                return
        level = parsed.level
        if level in ("ERROR", "CRITICAL"):
            parsed.kind = LineKind.error
            parsed.info = {"exception": "", "detail": message}
            return
        for phrase in OVERRIDE_PHRASES:
            if phrase in message:
                if "speculative" in message or "Overlap scheduler" in message or "chunked prefill" in message \
                        or "Max running requests" in message or "backend" in message or "radix cache" in message \
                        or "draft" in message or "overlap" in message:
                    parsed.kind = LineKind.override
                    return
                break
        if message.startswith("Attention backend not specified"):
            parsed.kind = LineKind.override
            return
        if level == "WARNING":
            parsed.kind = LineKind.warning
            return
        for phrase in _WARNING_PHRASES:
            if phrase in message:
                parsed.kind = LineKind.warning
                return

    # ---- info builders (rare lines: a few small regexes each) ---------------------------------------------
    def _info_dist_begin(self, message: str) -> dict[str, Any]:
        return {}

    def _info_dist_end(self, message: str) -> dict[str, Any]:
        info = _mem_info(message)
        m = _ELAPSED.search(message)
        if m:
            info["elapsed_s"] = float(m.group(1))
        return info

    def _info_weights_begin(self, message: str) -> dict[str, Any]:
        return _mem_info(message)

    def _info_weights_end(self, message: str) -> dict[str, Any]:
        info = _mem_info(message)
        m = _ARCH.search(message)
        if m:
            info["arch"] = m.group(1)
        m = _ELAPSED.search(message)
        if m:
            info["elapsed_s"] = float(m.group(1))
        return info

    def _info_kv_cache(self, message: str) -> dict[str, Any]:
        info: dict[str, Any] = {}
        m = _KV_TOKENS.search(message)
        if m:
            info["tokens"] = int(m.group(1))
        for which, size in _KV_SIZE.findall(message):
            info[f"{which.lower()}_size_gb"] = float(size)
        return info

    def _info_graph_begin(self, message: str) -> dict[str, Any]:
        self._capturing = True
        return _graph_info(message)

    def _info_graph_end(self, message: str) -> dict[str, Any]:
        self._capturing = False
        return _graph_info(message)

    def _info_graph_progress(self, message: str) -> dict[str, Any]:
        return _tqdm_info(message) or {}

    def _info_ready(self, message: str) -> dict[str, Any]:
        self._capturing = False
        return {}

    def _info_retract(self, message: str) -> dict[str, Any]:
        m = _RETRACTED.search(message)
        return {"retracted_reqs": int(m.group(1)) if m else 1}

    def _info_server_args(self, message: str) -> dict[str, Any]:
        info: dict[str, Any] = {}
        for key, value in _ASSIGN.findall(message):
            if key in SERVER_ARGS_FIELDS and key not in info:
                info[key] = _value(value)
        return info

    def _info_capacity(self, message: str) -> dict[str, Any]:
        return {k: _value(v) for k, v in _ASSIGN.findall(message)}

    def _info_timings(self, message: str) -> dict[str, Any]:
        return {k: float(v) for k, v in _TIMING.findall(message)}

    def _info_http(self, message: str) -> dict[str, Any] | None:
        return None


_KIND_BY_NAME = {kind.value: kind for kind in LineKind}
_KIND_BY_NAME["graph_sizes"] = LineKind.graph_begin

_INFO_BUILDERS = {
    LineKind.dist_begin: LogParser._info_dist_begin,
    LineKind.dist_end: LogParser._info_dist_end,
    LineKind.weights_begin: LogParser._info_weights_begin,
    LineKind.weights_end: LogParser._info_weights_end,
    LineKind.kv_cache: LogParser._info_kv_cache,
    LineKind.graph_begin: LogParser._info_graph_begin,
    LineKind.graph_end: LogParser._info_graph_end,
    LineKind.graph_progress: LogParser._info_graph_progress,
    LineKind.ready: LogParser._info_ready,
    LineKind.retract: LogParser._info_retract,
    LineKind.server_args: LogParser._info_server_args,
    LineKind.capacity: LogParser._info_capacity,
    LineKind.timings: LogParser._info_timings,
    LineKind.http: LogParser._info_http,
}


def _is_oom(message: str) -> bool:
    return any(p in message for p in _OOM_PHRASES)


def _mem_info(message: str) -> dict[str, Any]:
    info: dict[str, Any] = {}
    for key, rx in _GB.items():
        m = rx.search(message)
        if m:
            info[key] = float(m.group(1))
    return info


def _graph_info(message: str, sizes_only: bool = False) -> dict[str, Any]:
    """``which`` (target/draft), ``stage`` (decode/verify/extend/prefill or ""), elapsed, memory, batch sizes."""
    info = _mem_info(message)
    m = _BS_LIST.search(message)
    if m:
        info["batch_sizes"] = len([x for x in m.group(1).split(",") if x.strip()])
    if sizes_only:
        return info
    m = _GRAPH_WHAT.search(message)
    words = m.group(1).split() if m else []
    info["which"] = "draft" if "draft" in words else "target"
    info["stage"] = next((w for w in words if w in ("decode", "verify", "extend", "prefill")), "")
    m = _ELAPSED.search(message)
    if m:
        info["elapsed_s"] = float(m.group(1))
    return info


def _tqdm_info(message: str) -> dict[str, Any] | None:
    m = _TQDM.search(message)
    if m is None:
        return None
    pct, done, total, elapsed, eta = m.groups()
    info: dict[str, Any] = {
        "pct": int(pct),
        "done": int(done),
        "total": int(total),
        "elapsed_s": _secs(elapsed),
        "eta_s": _secs(eta),
    }
    bm = _BS_ONE.search(message)
    if bm:
        info["bs"] = int(bm.group(1))
    gm = _GB["avail_mem_gb"].search(message)
    if gm:
        info["avail_mem_gb"] = float(gm.group(1))
    return info
