"""The bulk path of the log reader: whole blocks of a log (bytes) analysed with one regex pass per block.

A busy SGLang log is mostly three kinds of regular lines: the scheduler's ``Decode batch`` and ``Prefill batch``
lines and uvicorn's access lines. :class:`BulkReader` takes a block of bytes, pulls the figures of every regular
line with one ``findall`` of a compiled bytes regex built from the parser's own patterns
(:data:`specdash.logs.parser._PREFIX`, :data:`specdash.logs.records._DECODE_FAST` / ``_PREFILL_FAST``), and hands
each line to the same :meth:`LogAnalyzer.observe <specdash.logs.analyzer.LogAnalyzer.observe>` as the per-line
path, so findings, trust rules (untrusted samples, steady-state means) and ``scan --json`` are the same. Every
other line (start-up, warnings, tracebacks, tqdm bars, non-ASCII or control bytes, a decode line with a field the
fast pattern does not cover, any line while a traceback is open) is decoded (UTF-8 with replacement) and fed to
the parser line by line.

Usage::

    reader = BulkReader(analyzer, on_line=known.feed, watch=needles)
    for block in blocks:          # bytes, split anywhere
        reader.feed(block)
    reader.close()                # the last line when it has no newline
    analyzer.end_of_input()

``on_line(number, text)`` sees every line the per-line path read and every regular line that contains one of the
``watch`` strings (in line order), so a line matcher (known SGLang issues) sees every line it could match.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import IO, TYPE_CHECKING

from specdash.logs.findings import DERIVED_EVERY
from specdash.logs.metrics import IDLE_GAP_S, MAX_SAMPLES, DecodeSample, _median, _reason_label
from specdash.logs.parser import _PREFIX, ACCESS_5XX, ACCESS_START, LineKind, ParsedLine, _timestamp_of
from specdash.logs.records import _DECODE_FAST, _PREFILL_FAST, DecodeRecord, PrefillRecord
from specdash.logs.state import ServerState

if TYPE_CHECKING:
    from specdash.logs.analyzer import LogAnalyzer

#: Bytes read per block by :func:`read_blocks` (a block's matches are held at once: ~10x its size in memory).
BLOCK_BYTES = 1 << 20

_END = r"(?:, |,)?"
#: One match per line (each ends at its newline). Groups: 1 timestamp, 2 ranks, 3 level; decode 4-12 (the
#: groups of ``_DECODE_FAST``); prefill 13-20 (``_PREFILL_FAST``); 21 a uvicorn line's message; 22 any other line.
_BULK = re.compile(
    (r"(?:" + _PREFIX.pattern + r"(?:" + _DECODE_FAST.pattern + _END + r"|" + _PREFILL_FAST.pattern + _END
     + r"|(" + re.escape(ACCESS_START) + r"[ -~]*))|([^\n]*))\n").encode("ascii")
)
_ACCESS_5XX = ACCESS_5XX.encode("ascii")
_K_decode = LineKind.decode
_K_prefill = LineKind.prefill
_K_http = LineKind.http
#: States in which a decode line changes nothing but metrics and sample findings (LogAnalyzer.observe's short path)
_SERVING_STATES = (ServerState.READY, ServerState.CRASHED)


class BulkLine(ParsedLine):
    """A regular line read by the bulk path: ``number``, ``kind`` (decode, prefill or http), ``timestamp``,
    ``ranks``, ``level`` and its ``record``. The text is not kept (``text``, ``raw`` and ``message`` are empty):
    the analysis of these kinds reads only their figures."""

    __slots__ = ("record",)  # a plain slot: the figures are parsed already (ParsedLine.record parses lazily)

    text = raw = message = ""
    group = 0
    info = None
    truncated = False

    def __init__(self, number: int, kind: LineKind, timestamp: datetime | None, ranks: str, level: str,
                 record: DecodeRecord | PrefillRecord | None) -> None:
        self.number = number
        self.kind = kind
        self.timestamp = timestamp
        self.ranks = ranks
        self.level = level
        self.record = record


class BulkReader:
    """Feeds an analyzer from blocks of bytes (see the module docstring). ``watch``: strings whose lines must
    reach ``on_line`` even when regular; an empty one, or one with U+FFFD (it could match a replaced byte), sends
    every line the per-line way."""

    def __init__(self, analyzer: LogAnalyzer, on_line: Callable[[int, str], None] | None = None,
                 watch: Iterable[str] = ()) -> None:
        self.analyzer = analyzer
        self.on_line = on_line
        needles = set(watch)
        self._per_line_only = any(not n or "\ufffd" in n for n in needles)
        self._needles = tuple(n.encode("utf-8") for n in needles)
        self._rest = b""
        self.lines = 0
        self.bytes = 0

    def feed(self, data: bytes) -> int:
        """Analyse the complete lines of ``data`` (with what was left of the previous block); a last line without
        its newline waits for the next call or :meth:`close`. Returns the number of lines analysed."""
        self.bytes += len(data)
        if self._rest:
            data = self._rest + data
        cut = data.rfind(b"\n") + 1
        self._rest = data[cut:]
        if not cut:
            return 0
        return self._block(data if cut == len(data) else data[:cut])

    def close(self) -> int:
        """The end of the input: analyse a last line that has no newline. Returns the lines analysed."""
        rest, self._rest = self._rest, b""
        return self._block(rest + b"\n") if rest else 0

    def _watched(self, block: bytes, first: int) -> dict[int, str]:
        """Line number -> text of the lines of ``block`` (first line numbered ``first``) that hold a watched
        string."""
        out: dict[int, str] = {}
        for needle in self._needles:
            pos = block.find(needle)
            while pos >= 0:
                start = block.rfind(b"\n", 0, pos) + 1
                end = block.find(b"\n", pos)
                number = first + block.count(b"\n", 0, start)
                out[number] = block[start:end].decode("utf-8", "replace")
                pos = block.find(needle, end)
        return out

    def _per_line(self, block: bytes, first: int) -> int:
        """Every line of ``block`` the per-line way (a watched string could match a replaced byte)."""
        feed = self.analyzer.feed
        on_line = self.on_line
        number = first - 1
        for raw in block.split(b"\n")[:-1]:
            number += 1
            text = raw.decode("utf-8", "replace")
            feed(text)
            if on_line is not None:
                on_line(number, text)
        self.lines += number - first + 1
        return number - first + 1

    def _block(self, block: bytes) -> int:
        # The regular lines are analysed here, inline: the decode line of a serving server is what
        # LogAnalyzer.observe -> LiveMetrics._decode -> FindingsEngine.after_decode do with it, the prefill and
        # access lines what LogAnalyzer.observe does with them when they change nothing but figures (the same
        # statements in the same order: the same float sums, the same refresh points of the derived findings).
        # Any other case (a decode line before the server serves, a prefill line during warmup) goes through
        # LogAnalyzer.observe. tests/test_logs_bulk.py holds this against the per-line path.
        analyzer = self.analyzer
        parser = analyzer.parser
        observe = analyzer.observe
        feed = analyzer.feed
        on_line = self.on_line
        first = parser.lines_seen + 1
        if self._per_line_only:
            return self._per_line(block, first)
        watched = self._watched(block, first) if self._needles else None
        metrics = analyzer.metrics
        engine = analyzer.engine
        startup = analyzer.startup
        samples = metrics.samples
        batch_state = metrics.batch_state
        gaps = metrics._gaps_s
        per_req_q = metrics._per_req
        untrusted_reasons = metrics.untrusted_reasons
        untrusted_lines = metrics.untrusted_lines
        request_cap_now = engine._request_cap_now
        by_key = engine.by_key
        refresh_untrusted = engine._refresh_untrusted
        refresh_no_graph = engine._refresh_no_graph
        refresh_derived = engine.refresh_derived
        serving = _SERVING_STATES
        median = statistics.median
        number = first - 1
        in_traceback = parser.in_traceback
        ts_b = b""
        ts: datetime | None = None
        ranks_b = b""
        ranks = ""
        decode, prefill = _K_decode, _K_prefill
        line: BulkLine | None
        cursor_line, cursor_pos = first, 0  # a known line start, for the rare regular line read the long way
        rows = _BULK.findall(block)
        for (t, rk, lv, it, run, tok, usage, al, ar, graph, gen, queue, seqs, new, cached, pusage, prun, pqueue, inp,
             pgraph, access, other) in rows:
            number += 1
            if t and not in_traceback and (run or seqs or _ACCESS_5XX not in access):
                if t != ts_b:
                    ts_b = t
                    ts = _timestamp_of(t.decode("ascii"))
                if rk != ranks_b:
                    ranks_b = rk
                    ranks = rk[1:].decode("ascii")
                level = lv.decode("ascii") if lv else ""
                try:
                    if run:
                        running = int(run)
                        queued = int(queue)
                        usage_f = float(usage)
                        accept_len = float(al) if al else None
                        accept_rate = float(ar) if ar else None
                        gen_f = float(gen)
                        cuda_graph = (graph == b"True") if graph else None
                        rec = DecodeRecord(running, queued, int(tok), usage_f, accept_len, accept_rate, cuda_graph,
                                           gen_f, int(it) if it else None)
                        line = BulkLine(number, decode, ts, ranks, level, rec)
                    elif seqs:
                        new_tokens = int(new)
                        p_running = int(prun)
                        p_queued = int(pqueue)
                        p_usage = float(pusage)
                        prec = PrefillRecord(int(seqs), new_tokens, int(cached), p_usage, p_running, p_queued,
                                             float(inp) if inp else None, (pgraph == b"True") if pgraph else None)
                        line = BulkLine(number, prefill, ts, ranks, level, prec)
                    else:  # an access line needs no object (see below)
                        line = None
                    regular = True
                except ValueError:  # a figure that does not convert ("1.2.3"): the parser reads it pair by pair
                    regular = False
                if regular:
                    if line is None:
                        # ---- LogAnalyzer.observe of an access line, inline ----
                        analyzer.lines += 1
                        if ts is not None:
                            analyzer.last_ts = ts
                    elif run and analyzer.server_state in serving:
                        # ---- LogAnalyzer.observe's short path: LiveMetrics._decode, inline ----
                        analyzer.lines += 1
                        steps = metrics.num_steps
                        max_len = steps + 1 if steps else (metrics.num_draft_tokens or None)
                        sample = DecodeSample(number, ts, rec, True, "", max_len)
                        prev = metrics._last_decode_ts
                        if max_len and accept_len is not None and accept_len > max_len + 0.005:
                            metrics.above_max_samples += 1
                            peak = metrics.above_max_peak
                            if peak is None or accept_len > peak[0]:
                                metrics.above_max_peak = (accept_len, max_len, number)
                        reason = ""
                        if ts is None:
                            if prev is None and metrics.total_samples == 0:
                                reason = "first sample: its window may include idle time"
                        elif prev is None:
                            reason = "first sample after start or idle: its window includes idle time"
                        else:
                            gap = 0.0 if ts is prev else (ts - prev).total_seconds()
                            if gap > IDLE_GAP_S and gap > (max(IDLE_GAP_S, 3 * median(gaps)) if gaps
                                                           else IDLE_GAP_S):
                                reason = (f"first sample after {gap:.0f} s without decode lines: its window "
                                          "includes idle time")
                            else:
                                gaps.append(gap)
                        since = metrics._prefill_tokens_since
                        if not reason and since:
                            decoded = metrics.decode_log_interval * max(1, running or 1) * (accept_len or 1.0)
                            if since > decoded:
                                reason = f"prefill-dominated window: {since} prefill tokens vs ~{decoded:.0f} decoded"
                        per_req = None
                        if running:
                            per_req = gen_f / running
                            if not reason and len(per_req_q) >= 3:
                                if metrics._per_req_median is None or metrics.total_samples % 16 == 0:
                                    metrics._per_req_median = _median(per_req_q)
                                if per_req < 0.25 * metrics._per_req_median:
                                    reason = (f"gen throughput {gen_f:g} tok/s is far below the recent median: "
                                              "the window includes a stall or a long prefill")
                        if reason:
                            trusted = False
                            sample.trusted, sample.reason = False, reason
                            metrics.untrusted_total += 1
                            metrics.untrusted_kept += 1
                            untrusted_reasons[_reason_label(reason)] += 1
                            untrusted_lines.append(number)
                        else:
                            trusted = True
                            if per_req is not None:
                                per_req_q.append(per_req)
                        if cuda_graph is False:
                            metrics.no_graph_samples += 1
                        batch_state.append((running, queued, usage_f))
                        metrics._last_decode_ts = ts if ts is not None else prev
                        metrics._prefill_tokens_since = 0
                        acc = metrics._acc
                        if len(samples) == MAX_SAMPLES:  # the oldest sample's figures out of the sums
                            old = samples[0]
                            old_rec = old.record
                            old_trusted = old.trusted
                            if not old_trusted:
                                metrics.untrusted_kept -= 1
                            v = old_rec.accept_len
                            if v is not None:
                                acc[0] += -v
                                acc[1] += -1
                                if old_trusted:
                                    acc[2] += -v
                                    acc[3] += -1
                            v = old_rec.accept_rate
                            if v is not None:
                                acc[4] += -v
                                acc[5] += -1
                                if old_trusted:
                                    acc[6] += -v
                                    acc[7] += -1
                            v = old_rec.gen_throughput_tok_s
                            if v is not None:
                                acc[8] += -v
                                acc[9] += -1
                                if old_trusted:
                                    acc[10] += -v
                                    acc[11] += -1
                        samples.append(sample)
                        if accept_len is not None:
                            acc[0] += accept_len
                            acc[1] += 1
                            if trusted:
                                acc[2] += accept_len
                                acc[3] += 1
                        if accept_rate is not None:
                            acc[4] += accept_rate
                            acc[5] += 1
                            if trusted:
                                acc[6] += accept_rate
                                acc[7] += 1
                        acc[8] += gen_f
                        acc[9] += 1
                        if trusted:
                            acc[10] += gen_f
                            acc[11] += 1
                        total = metrics.total_samples = metrics.total_samples + 1
                        # ---- FindingsEngine.after_decode, inline ----
                        if engine._first_ts is None and ts is not None:
                            engine._first_ts = ts
                        if len(batch_state) >= 4 and queued:  # FindingsEngine._request_cap's checks, inline
                            engine._cap_calls += 1
                            if engine._cap_calls % 32 == 0 or "request_cap" not in by_key:
                                request_cap_now(line)
                        if not trusted:
                            engine._untrusted_at = engine._untrusted_last = (line, sample)
                            untrusted = metrics.untrusted_total
                            if untrusted <= 32 or untrusted % DERIVED_EVERY == 0:
                                refresh_untrusted()
                        if cuda_graph is False:
                            engine._no_graph_at = (line, sample)
                            no_graph = metrics.no_graph_samples
                            if no_graph <= 32 or no_graph % DERIVED_EVERY == 0:
                                refresh_no_graph()
                        engine._pending = (line, sample)
                        if total <= 32 or total % DERIVED_EVERY == 0:
                            refresh_derived()
                    elif seqs and not (startup._active and startup.ready_at is None):
                        # ---- LogAnalyzer.observe of a prefill line outside warmup, inline ----
                        analyzer.lines += 1
                        if ts is not None:
                            analyzer.last_ts = ts
                            startup.last_ts = ts
                        metrics.prefills += 1
                        metrics.last_prefill = prec
                        metrics._prefill_tokens_since += new_tokens
                        batch_state.append((p_running, p_queued, p_usage))
                        if engine._first_ts is None and ts is not None:
                            engine._first_ts = ts
                        if len(batch_state) >= 4 and p_queued:
                            engine._cap_calls += 1
                            if engine._cap_calls % 32 == 0 or "request_cap" not in by_key:
                                request_cap_now(line)
                    else:
                        observe(line)
                    if watched and number in watched and on_line is not None:
                        on_line(number, watched[number])
                    continue
            # any other line: the per-line path, with its text
            if t:  # a regular line read the long way (traceback open, 5xx access line): its text from the block
                while cursor_line < number:
                    cursor_pos = block.index(b"\n", cursor_pos) + 1
                    cursor_line += 1
                text = block[cursor_pos:block.index(b"\n", cursor_pos)].decode("utf-8", "replace")
            else:
                text = other.decode("utf-8", "replace")
            parser.advance(number - 1 - parser.lines_seen)
            feed(text)
            in_traceback = parser.in_traceback
            if on_line is not None:
                on_line(number, text)
        parser.advance(number - parser.lines_seen)
        count = number - first + 1
        self.lines += count
        return count


class PerLineReader:
    """The per-line reference for :class:`BulkReader` (same interface): every line decoded and classified by
    :meth:`LogParser.feed_many <specdash.logs.parser.LogParser.feed_many>`, every line given to ``on_line``.
    ``watch`` is accepted and ignored (every line is seen)."""

    def __init__(self, analyzer: LogAnalyzer, on_line: Callable[[int, str], None] | None = None,
                 watch: Iterable[str] = ()) -> None:
        self.analyzer = analyzer
        self.on_line = on_line
        self._rest = b""
        self.lines = 0
        self.bytes = 0

    def feed(self, data: bytes) -> int:
        """Analyse the complete lines of ``data``; returns how many."""
        self.bytes += len(data)
        lines = (self._rest + data).split(b"\n")
        self._rest = lines.pop()
        return self._lines(lines)

    def close(self) -> int:
        """Analyse a last line without newline."""
        rest, self._rest = self._rest, b""
        return self._lines([rest]) if rest else 0

    def _lines(self, raw: list[bytes]) -> int:
        texts = [r.decode("utf-8", "replace") for r in raw]
        first = self.analyzer.lines + 1
        self.analyzer.feed_many(texts)
        if self.on_line is not None:
            for offset, text in enumerate(texts):
                self.on_line(first + offset, text)
        self.lines += len(texts)
        return len(texts)


def read_blocks(stream: IO[bytes], size: int = BLOCK_BYTES) -> Iterable[bytes]:
    """Blocks of ``size`` bytes (the last one shorter) read from a binary stream until its end."""
    read = stream.read
    while True:
        block = read(size)
        if not block:
            return
        yield block


def analyse_stream(analyzer: LogAnalyzer, blocks: Iterable[bytes],
                   on_line: Callable[[int, str], None] | None = None, watch: Iterable[str] = ()) -> LogAnalyzer:
    """Feed every block of ``blocks`` (bytes, split anywhere: a byte range of a file, a stream's reads) to
    ``analyzer`` through a :class:`BulkReader` and close it (a last line without newline is read). The caller
    decides whether the input ended (:meth:`LogAnalyzer.end_of_input`). Returns ``analyzer``."""
    reader = BulkReader(analyzer, on_line, watch)
    for block in blocks:
        reader.feed(block)
    reader.close()
    return analyzer
