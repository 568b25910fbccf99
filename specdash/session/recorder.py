"""The session recorder: appends every event of a live session to a YAML stream, crash-safe.

File format: a YAML stream, one document per event (a ``--- # size N`` line, then a block mapping whose keys and
values are written in JSON form, YAML's flow subset: see :func:`dump_document`; kinds and fields in
:mod:`specdash.session.events`). The first document is the header. Any YAML reader reads it
(``yaml.safe_load_all``); specdash's reader parses this exact shape with ``json``, which is fast.

Guarantees:

* **Redacted before written**: every string of every event goes through
  :func:`specdash.text.redaction.redact_value` in :meth:`Recorder.record`, before it is buffered; log lines through
  :func:`specdash.text.redaction.redact_lines` (exactly :func:`~specdash.text.redaction.redact_text` per line, its
  pre-check run once per line shape of a batch).
* **Log lines a batch at a time** (format 2): a ``log`` document holds its lines as one ``text`` (joined by line
  breaks, one JSON string) and one ``offsets`` list (:meth:`Recorder.record_log`; a batch with a line break
  inside a line, or lines of another shape, is written in format 1's ``lines``). Readers accept both.
* **Append-only, crash-safe**: the file is opened ``O_APPEND`` and never rewritten; buffered documents are
  written by one ``os.write()`` call per flush, so a crash (even SIGKILL) leaves only whole flushes plus at most
  one partly written flush at the end, which the reader detects and skips.
* **At most one second lost**: a flush happens on a timer thread every ``flush_interval_s`` (1 s), on a
  :meth:`record` call when the last flush is older than that, and on :meth:`close`. The data is handed to the
  kernel (a killed process loses nothing flushed); ``fsync`` only on :meth:`close` (power loss may lose more).
* **Thinned**: ``metric`` and ``gpu`` samples closer than ``min_sample_interval_s`` (1 s) to the previous kept
  sample of the same kind are dropped; consecutive ``log`` batches from the same source that arrive within
  ``log_batch_s`` (0.2 s) of the batch's first line are merged into one document (arrival time = first line's);
  log lines longer than :data:`MAX_LINE_CHARS` are cut (with a note of how much).
* **Compressed** when the path ends in ``.gz``: one gzip stream (zlib, :data:`GZIP_LEVEL`) with a sync flush per
  write, so every flushed block is decodable even when the stream was never finished, and a full flush every
  :data:`FULL_FLUSH_EVERY` writes, so a reader can resume decoding after a damaged block at the next full flush
  point (a full flush resets the compressor's history; every flush ends with the bytes ``00 00 ff ff``).
  Measured (format 1, level 6; benchmarks/bench_replay_open.py, a busy hour: 20 decode lines/s, a GPU sample every
  2 s, a metric sample per s): 19.8 MB per hour plain, 2.5 MB per hour as ``.yaml.gz`` with sync flushes only (the
  full flush points add about 20 %: 1.13 -> 1.36 MB for a synthetic busy hour of one flush per second);
  :func:`~specdash.session.reader.read_session` opens that hour in about 0.5 s of CPU time (1.6 s wall on a
  2-CPU machine at load 8). The same hour in format 2 at level 2: 3.4 MB as ``.yaml.gz`` (2.7 MB in format 1 at
  level 6, measured side by side), opened in 0.41 s of CPU time (0.35 s).

No Textual; thread-safe (one lock); errors while writing never raise into the app: the first one is kept in
:attr:`Recorder.error` and recording stops.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
import os
import re
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from specdash.session.events import (
    EVENT_TYPES,
    SWEEP_KEPT,
    SWEEP_KEPT_RUNNING,
    SWEEP_RESTORED,
    Event,
    HeaderEvent,
    make_event,
)
from specdash.text.redaction import redact_lines, redact_text, redact_value

#: Log lines longer than this many characters are cut before writing.
MAX_LINE_CHARS = 16_384
#: In a ``.gz`` file every write ends with a sync flush (decodable at once) and every this many writes with a full
#: flush (the compressor's history reset: a reader resumes there after a damaged block). Every write a full flush
#: would double the file (2.3 instead of 1.1 MB per busy hour); one in 10 costs ~10 % and loses ~10 s to damage.
FULL_FLUSH_EVERY = 10
#: zlib level of a ``.gz`` session file. Measured (benchmarks/bench_recording_cost.py, 200 000 generated SGLang
#: lines at 20 000 lines/s): level 2 compresses at ~0.7 us/line to 32 bytes/line, level 6 at ~2.3 us/line to 25
#: bytes/line. Level 2 keeps recording within 20 % of the live pane's own CPU; the file is ~27 % larger.
GZIP_LEVEL = 2
#: Event kinds thinned to at most one sample per ``min_sample_interval_s``.
THINNED_KINDS = frozenset({"metric", "gpu"})
#: Event kinds that make a session worth keeping on their own: something a replay shows from the host.
REPLAYABLE_KINDS = frozenset({"log", "marker", "finding", "metric", "gpu", "kill", "bench", "sweep"})
#: ``command`` actions that make a session worth keeping: something done on the host. A command only typed into
#: the launch builder (``validated``) does not: ``specdash validate`` reproduces that without a session.
REPLAYABLE_COMMAND_ACTIONS = frozenset({"launched", "stopped", "restarted", "dry_run", SWEEP_KEPT, SWEEP_RESTORED,
                                        SWEEP_KEPT_RUNNING})


# Characters that are not printable in YAML (or are line breaks there) but that JSON leaves raw: escaped as \\uXXXX,
# which both JSON and YAML double-quoted scalars decode the same way.
_YAML_UNSAFE_RE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


_encode_string = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) writes for a str
_encode_ascii = json.encoder.encode_basestring_ascii  # json.dumps(ensure_ascii=True): printable ASCII only
_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89abAB]")  # a high surrogate as _encode_ascii writes it


def _json_item(item: Any) -> str:
    """``json.dumps(item)`` for one element of a list written one per line; a log line ``[offset, text]`` directly."""
    if type(item) is list and len(item) == 2 and type(item[0]) is int and type(item[1]) is str:
        return f"[{item[0]}, {_encode_string(item[1])}]"
    return _json(item)


def dump_document(doc: dict[str, Any]) -> str:
    """One document as written to a session file: a ``--- # size N`` line (N: characters of the document that
    follows, so a document cut short at the end of a crashed recording is recognised), then one
    ``"key": value`` line per field, keys and values in JSON form (JSON is YAML's flow subset, so any YAML
    reader reads the file); a list of lists/dicts (log ``lines``, GPU rows) is written one element per line,
    indented. Example::

        --- # size 214
        "kind": "log"
        "t": 12.4
        "lines": [
          [48213, "[2026-11-30 09:12:13 TP0] Decode batch, #running-req: 12, ... accept len: 2.31, ..."],
          [48400, "[2026-11-30 09:12:13 TP0] Decode batch, #running-req: 12, ... accept len: 2.29, ..."]]
        "source": "/var/log/sglang/server.log"

    Because a JSON string never holds a raw line break, ``{`` + the body with each ``\\n"`` turned into ``,"``
    + ``}`` is one JSON object: :func:`specdash.session.reader.read_session` parses a document with one
    ``json.loads`` (libyaml alone reads only ~10 MB/s, too slow for a busy hour) and falls back to YAML for
    anything else (e.g. a hand-edited file).
    """
    parts: list[str] = []
    for key, value in doc.items():
        if type(value) is _LogBatch:
            parts.append(value.dump())  # YAML-safe already
            continue
        name = _json(str(key))
        if isinstance(value, list) and value and all(isinstance(item, (list, dict)) for item in value):
            part = f"{name}: [\n  " + ",\n  ".join(_json_item(item) for item in value) + "]\n"
        else:
            part = f"{name}: {_json(value)}\n"
        parts.append(_yaml_safe(part))
    body = "".join(parts)
    return f"--- # size {len(body)}\n{body}"


def _yaml_safe(text: str) -> str:
    """JSON ``text`` with the characters YAML does not take raw (DEL, C1 controls, line/paragraph separators,
    surrogates, BOM, non-characters) escaped as ``\\uXXXX``, which JSON and YAML decode alike."""
    if not text.isascii() or "\x7f" in text:
        return _YAML_UNSAFE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def to_plain(value: Any) -> Any:
    """``value`` as JSON-ready data: dataclasses become dicts, enums their value, paths strings, tuples/sets
    lists, dict keys strings, non-finite floats None; anything else unknown becomes ``str(value)``. Applied to
    every field before redaction, so a secret inside a dataclass is redacted too."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, enum.Enum):
        return to_plain(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(to_plain(k)): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_plain(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def _cut_line(text: Any) -> Any:
    if isinstance(text, str) and len(text) > MAX_LINE_CHARS:
        return text[:MAX_LINE_CHARS] + f" … [{len(text) - MAX_LINE_CHARS} characters cut by the recorder]"
    return text


def _log_lines(lines: Any) -> list[list[Any]]:
    """A ``log`` event's ``[[byte_offset, text], ...]`` as written: each text cut (:func:`_cut_line`) and redacted
    (:func:`redact_text`; an offset that is not an int goes through :func:`to_plain` and :func:`redact_value`).
    The direct path for the one field that carries every line of a busy log: what the generic walk of
    :func:`to_plain` and :func:`redact_value` would give, without its per-value dispatch."""
    out: list[list[Any]] = []
    append = out.append
    for item in lines or ():
        if isinstance(item, (list, tuple)) and len(item) == 2 and type(item[0]) is int and type(item[1]) is str:
            append([item[0], redact_text(_cut_line(item[1]))])
        else:
            append(redact_value(to_plain([_cut_line(part) for part in item] if isinstance(item, (list, tuple))
                                         else item)))
    return out


class _LogBatch:
    """The lines of one ``log`` document until it is written: ``texts`` (cut and redacted) with the byte ``offsets``
    where they start, or, for lines of any other shape, ``pairs`` (the generic ``[[offset, text], ...]``, already
    redacted). :meth:`dump` writes the document's lines field(s)."""

    __slots__ = ("texts", "offsets", "pairs")

    def __init__(self, texts: list[str], offsets: list[int], pairs: list[Any] | None = None) -> None:
        self.texts, self.offsets, self.pairs = texts, offsets, pairs

    def as_pairs(self) -> list[Any]:
        """``[[offset, text], ...]``: the format 1 ``lines`` field."""
        if self.pairs is not None:
            return self.pairs
        return [[offset, text] for offset, text in zip(self.offsets, self.texts, strict=True)]

    def extend(self, other: _LogBatch) -> None:
        """Append ``other``'s lines (merging two documents of one source)."""
        if self.pairs is None and other.pairs is None:
            self.texts.extend(other.texts)
            self.offsets.extend(other.offsets)
        else:
            self.pairs = self.as_pairs() + other.as_pairs()
            self.texts, self.offsets = [], []

    def dump(self) -> str:
        """The lines as written: format 2 (``"text"``: the lines joined by ``\\n`` in one JSON string, written in
        printable ASCII (other characters as ``\\uXXXX``), then
        ``"offsets"``: one JSON list of ints) when every line is a string without a line break and every offset an
        int; otherwise format 1 (``"lines"``: one ``[offset, "text"]`` per line). Format 2 costs one JSON string
        per batch instead of one per line, and its offsets list is written by ``json``'s C encoder."""
        if self.pairs is None and self.texts:
            joined = "\n".join(self.texts)
            if joined.count("\n") == len(self.texts) - 1:
                # every character outside printable ASCII escaped (\\uXXXX): YAML-safe as it is, and an ASCII
                # document is cheap to write (one non-ASCII line would make the whole batch a wide string). A
                # character beyond U+FFFF would be a JSON surrogate pair, which YAML readers do not join: such a
                # batch is written with its characters raw (JSON's default), escaped only where YAML needs it.
                encoded = _encode_ascii(joined)
                if not joined.isascii() and _SURROGATE_ESCAPE_RE.search(encoded):
                    encoded = _yaml_safe(_encode_string(joined))
                return f'"text": {encoded}\n"offsets": {json.dumps(self.offsets)}\n'
        pairs = self.as_pairs()
        if not pairs:
            return '"lines": []\n'
        return _yaml_safe('"lines": [\n  ' + ",\n  ".join(_json_item(item) for item in pairs) + "]\n")


def _log_batch(lines: Any) -> _LogBatch:
    """A ``log`` event's ``lines`` field (``[[byte_offset, text], ...]``) as a :class:`_LogBatch`, cut and redacted:
    int offsets with string texts take the batch path (:func:`_batch_of`); anything else the generic one
    (:func:`_log_lines`)."""
    lines = list(lines or ())
    if all(type(item) in (list, tuple) and len(item) == 2 and type(item[0]) is int and type(item[1]) is str
           for item in lines):
        return _batch_of([item[1] for item in lines], [item[0] for item in lines])
    return _LogBatch([], [], _log_lines(lines))


def _batch_of(texts: list[str], offsets: list[int]) -> _LogBatch:
    """A batch of string ``texts`` at int ``offsets`` (same length), each cut (:func:`_cut_line`) and redacted
    (:func:`specdash.text.redaction.redact_lines`: exactly :func:`redact_text` per line)."""
    if texts and max(map(len, texts)) > MAX_LINE_CHARS:
        texts = [_cut_line(text) for text in texts]
    return _LogBatch(redact_lines(texts), list(offsets))


class Recorder:
    """Records one session to ``path``.

    ``Recorder(path, header)``: ``header`` holds the header fields (``host``, ``sglang_version``, ``demo``,
    ``note``; ``specdash_version`` and ``started_at`` default to this version and now, ISO-8601 with UTC offset).
    The file must not exist (FileExistsError otherwise, unless ``overwrite=True``); its folder is created.
    The header document is written immediately. ``clock`` (default ``time.monotonic``) gives ``t``.

    Use as a context manager or call :meth:`close`. Raises OSError only from the constructor.

    ``discard_if_empty``: :meth:`finish` deletes the file when nothing worth replaying was recorded (see
    :attr:`worth_keeping`) — e.g. a connect that failed leaves no junk session behind. ``start_recording`` sets it
    for the auto-named files of the sessions folder; a file the user named (``--record PATH``) is always kept.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        header: dict[str, Any],
        *,
        flush_interval_s: float = 1.0,
        min_sample_interval_s: float = 1.0,
        log_batch_s: float = 0.2,
        overwrite: bool = False,
        clock: Callable[[], float] = time.monotonic,
        timer: bool = True,
        discard_if_empty: bool = False,
    ) -> None:
        self.path = Path(path)
        self.discard_if_empty = discard_if_empty
        #: True once a ``connection`` event with state ``connected`` was recorded.
        self.reached_connected = False
        #: True once :meth:`finish` deleted the file (nothing worth replaying).
        self.discarded = False
        self._replayable = False
        self.flush_interval_s = flush_interval_s
        self.min_sample_interval_s = min_sample_interval_s
        self.log_batch_s = log_batch_s
        self.error: str | None = None
        self.events_recorded = 0
        self.events_thinned = 0
        self._clock = clock
        self._start = clock()
        self._lock = threading.RLock()
        self._pending: list[dict[str, Any]] = []
        self._last_flush = self._start
        self._last_sample_t: dict[str, float] = {}
        self._last_t = 0.0
        self._closed = False
        self._compress = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31) if self.path.name.endswith(".gz") else None
        self._writes = 0

        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if overwrite else os.O_EXCL)
        self._fd = os.open(self.path, flags, 0o600)

        fields = dict(header)
        if not fields.get("specdash_version"):
            from specdash import __version__

            fields["specdash_version"] = __version__
        fields.setdefault("started_at", datetime.datetime.now().astimezone().isoformat(timespec="seconds"))
        self.header = make_event("header", 0.0, redact_value(to_plain(fields)))
        assert isinstance(self.header, HeaderEvent)
        self._pending.append(self.header.to_dict())
        self.flush()

        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if timer:
            self._thread = threading.Thread(target=self._timer_loop, name="specdash-recorder", daemon=True)
            self._thread.start()

    # -- recording ---------------------------------------------------------------------------------

    def now_s(self) -> float:
        """Seconds since the session started, by the recorder's clock."""
        return self._clock() - self._start

    def record(self, kind: str, t: float | None = None, **fields: Any) -> bool:
        """Record one event of ``kind`` (see :mod:`specdash.session.events`) with its fields.

        ``t`` defaults to :meth:`now_s`. Fields may hold dataclasses, enums, paths, tuples (see :func:`to_plain`);
        every string is redacted before buffering. Returns False when the event was
        thinned away, or the recorder is closed or has failed (see :attr:`error`); True otherwise.
        Raises ValueError for an unknown kind or ``header`` (programming errors).
        """
        if kind not in EVENT_TYPES or kind in ("header", "end"):
            raise ValueError(f"unknown or reserved event kind {kind!r}")
        with self._lock:
            if self._closed or self.error:
                return False
            t_s = self.now_s() if t is None else float(t)
            if kind in THINNED_KINDS:
                last = self._last_sample_t.get(kind)
                if last is not None and t_s - last < self.min_sample_interval_s:
                    self.events_thinned += 1
                    return False
                self._last_sample_t[kind] = t_s
            if kind == "log":
                batch = _log_batch(fields.pop("lines", ()))
                doc = make_event(kind, t_s, redact_value(to_plain(fields))).to_dict()
                doc["lines"] = batch
            else:
                doc = make_event(kind, t_s, redact_value(to_plain(fields))).to_dict()
            self._append(kind, t_s, doc, fields)
            return True

    def record_log(self, texts: list[str], offsets: list[int], source: str | None = None,
                   t: float | None = None) -> bool:
        """Record one batch of log lines: the decoded ``texts`` (no line breaks) and the byte offset where each
        starts in ``source``. The same event as ``record("log", lines=[[offset, text], ...], source=source)``
        (lines paired up to the shorter list), without building the pairs: the path of a followed log, every
        line of it. Returns as :meth:`record`."""
        if (len(texts) != len(offsets) or not set(map(type, offsets)) <= {int}
                or not set(map(type, texts)) <= {str}):
            return self.record("log", t=t, lines=[[o, x] for o, x in zip(offsets, texts, strict=False)],
                               source=source)
        with self._lock:
            if self._closed or self.error:
                return False
            t_s = self.now_s() if t is None else float(t)
            doc: dict[str, Any] = {"kind": "log", "t": round(t_s, 3)}
            if source is not None:
                doc["source"] = redact_text(str(source))
            doc["lines"] = _batch_of(texts, offsets)
            self._append("log", t_s, doc, {})
            return True

    def _append(self, kind: str, t_s: float, doc: dict[str, Any], fields: dict[str, Any]) -> None:
        """Buffer ``doc`` (merged into the last log document when it can be), count it, flush when due."""
        if not (kind == "log" and self._merge_log(doc)):
            self._pending.append(doc)
        self.events_recorded += 1
        self._note_replayable(kind, fields)
        self._last_t = max(self._last_t, t_s)
        if self._clock() - self._last_flush >= self.flush_interval_s:
            self.flush()

    def record_event(self, event: Event) -> bool:
        """Record an already built event (its ``t`` is kept); see :meth:`record`."""
        doc = event.to_dict()
        kind = doc.pop("kind")
        t = doc.pop("t")
        return self.record(kind, t=t, **doc)

    def _note_replayable(self, kind: str, fields: dict[str, Any]) -> None:
        if kind == "connection":
            if str(fields.get("state", "")) == "connected":
                self.reached_connected = True
        elif kind in REPLAYABLE_KINDS or (kind == "command"
                                          and str(fields.get("action", "")) in REPLAYABLE_COMMAND_ACTIONS):
            self._replayable = True

    @property
    def worth_keeping(self) -> bool:
        """True when the session holds something worth replaying: the connection reached ``connected`` (even if it
        dropped later), or at least one event of :data:`REPLAYABLE_KINDS` or a ``command`` of
        :data:`REPLAYABLE_COMMAND_ACTIONS` was recorded. False for a header, connection attempts that failed,
        key-binding actions and commands only typed into the builder."""
        return self.reached_connected or self._replayable

    def _merge_log(self, doc: dict[str, Any]) -> bool:
        if not self._pending:
            return False
        last = self._pending[-1]
        if (last.get("kind") == "log" and last.get("source") == doc.get("source")
                and doc["t"] - last["t"] <= self.log_batch_s):
            last["lines"].extend(doc["lines"])
            return True
        return False

    # -- writing -----------------------------------------------------------------------------------

    def flush(self) -> None:
        """Write every buffered document now, with one ``os.write`` call (never raises; see :attr:`error`)."""
        with self._lock:
            self._last_flush = self._clock()
            if not self._pending or self.error:
                return
            text = "".join(dump_document(doc) for doc in self._pending)
            self._pending.clear()
            data = text.encode("utf-8")
            if self._compress is not None:
                self._writes += 1
                mode = zlib.Z_FULL_FLUSH if self._writes % FULL_FLUSH_EVERY == 0 else zlib.Z_SYNC_FLUSH
                data = self._compress.compress(data) + self._compress.flush(mode)
            self._write(data)

    def _write(self, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:  # a regular file takes it in one call; loop only for a short write
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError as exc:
            self.error = f"session recording stopped: cannot write {self.path}: {exc.strerror or exc}"

    def _timer_loop(self) -> None:
        while not self._stop.wait(self.flush_interval_s):
            self.flush()

    def close(self) -> None:
        """Flush, write the ``end`` document, finish the gzip stream, fsync and close. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stop.set()
            if not self.error:
                self._pending.append({"kind": "end", "t": round(max(self._last_t, self.now_s()), 3)})
                self.flush()
                if self._compress is not None and not self.error:
                    self._write(self._compress.flush(zlib.Z_FINISH))
            try:
                os.fsync(self._fd)
            except OSError:
                pass
            os.close(self._fd)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)

    def finish(self) -> bool:
        """End the recording: :meth:`close`, then, when :attr:`discard_if_empty` and not :attr:`worth_keeping`,
        delete the file (:attr:`discarded` becomes True). Returns True when the file is kept. Idempotent; never
        raises (a file that cannot be deleted is kept)."""
        self.close()
        with self._lock:
            if self.discarded:
                return False
            if self.discard_if_empty and not self.worth_keeping:
                try:
                    self.path.unlink()
                except FileNotFoundError:
                    pass
                except OSError:
                    return True
                self.discarded = True
                return False
            return True

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_recording(
    path: str | os.PathLike[str] | None,
    *,
    enabled: bool = True,
    host: str,
    sglang_version: str | None = None,
    note: str = "",
    demo: bool = False,
) -> Recorder | None:
    """Open the recorder of a live session the way ``--record PATH`` / ``--no-record`` ask.

    ``path`` (``--record PATH``) wins; else, when ``enabled`` (not ``--no-record`` and config ``record: true``),
    a new file :func:`specdash.paths.default_session_path` under the sessions dir; else None (not recording).
    The auto-named file is discarded by :meth:`Recorder.finish` when nothing worth replaying was recorded (e.g.
    the connection never came up); a ``path`` the user named is always kept.
    Raises OSError (e.g. FileExistsError, PermissionError) when the file cannot be created.
    """
    from specdash import paths

    auto_named = path is None
    if auto_named:
        if not enabled:
            return None
        path = paths.default_session_path(host)
    assert path is not None  # named, or auto-named just above
    return Recorder(path, {"host": host, "sglang_version": sglang_version, "note": note, "demo": demo},
                    discard_if_empty=auto_named)
