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
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import IO, TYPE_CHECKING

from specdash.logs.parser import _PREFIX, ACCESS_5XX, ACCESS_START, LineKind, ParsedLine, _timestamp_of
from specdash.logs.records import _DECODE_FAST, _PREFILL_FAST, DecodeRecord, PrefillRecord

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
        analyzer = self.analyzer
        parser = analyzer.parser
        observe = analyzer.observe
        feed = analyzer.feed
        on_line = self.on_line
        first = parser.lines_seen + 1
        if self._per_line_only:
            return self._per_line(block, first)
        watched = self._watched(block, first) if self._needles else None
        number = first - 1
        in_traceback = parser.in_traceback
        ts_b = b""
        ts: datetime | None = None
        ranks_b = b""
        ranks = ""
        decode, prefill, http = _K_decode, _K_prefill, _K_http
        cursor_line, cursor_pos = first, 0  # a known line start, for the rare regular line read the long way
        rows = _BULK.findall(block)
        for (t, rk, lv, it, run, tok, usage, al, ar, graph, gen, queue, seqs, new, cached, pusage, prun, pqueue, inp,
             pgraph, access, other) in rows:
            number += 1
            if t and not in_traceback and (run or seqs or _ACCESS_5XX not in access):
                if t != ts_b:
                    ts_b = t
                    ts = _timestamp_of(t[:19].decode("ascii"))
                if rk != ranks_b:
                    ranks_b = rk
                    ranks = rk[1:].decode("ascii")
                level = lv.decode("ascii") if lv else ""
                try:
                    if run:
                        line = BulkLine(number, decode, ts, ranks, level, DecodeRecord(
                            int(run), int(queue), int(tok), float(usage), float(al) if al else None,
                            float(ar) if ar else None, (graph == b"True") if graph else None, float(gen),
                            int(it) if it else None))
                    elif seqs:
                        line = BulkLine(number, prefill, ts, ranks, level, PrefillRecord(
                            int(seqs), int(new), int(cached), float(pusage), int(prun), int(pqueue),
                            float(inp) if inp else None, (pgraph == b"True") if pgraph else None))
                    else:
                        line = BulkLine(number, http, ts, ranks, level, None)
                except ValueError:  # a figure that does not convert ("1.2.3"): the parser reads it pair by pair
                    line = None
                if line is not None:
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
