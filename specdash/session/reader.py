"""Reading a session file: what is readable, plus exactly where and what was skipped.

:func:`read_session` splits the YAML stream into documents itself (on lines that are ``---`` or start with
``--- ``), so one bad document never loses the rest. Documents in the recorder's own shape (``key: <JSON>``
lines, see :func:`specdash.session.recorder.dump_document`) are parsed with ``json``; anything else (a
hand-edited file) with libyaml's ``CSafeLoader`` when available. ``.gz`` files (or any file starting with the gzip magic
bytes) are decompressed incrementally, so a gzip stream cut short by a crash yields everything that was flushed.

Problems are reported as one line each, naming the document index (1-based) and the line number in the
(decompressed) stream, e.g. ``document 812 (line 40213): bad YAML (...): skipped``. Unknown event kinds are kept
(as :class:`~specdash.session.events.UnknownEvent`) and reported once per kind with a count.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import os
import re
import zlib
from pathlib import Path
from typing import Any

import yaml

from specdash.session.events import EndEvent, Event, HeaderEvent, UnknownEvent, event_from_dict
from specdash.text.display import clean

try:
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - pyyaml without libyaml
    _Loader = yaml.SafeLoader


#: At most this many per-document problems are listed one by one; the rest are counted.
MAX_LISTED_PROBLEMS = 50


class SessionError(Exception):
    """The file cannot be read as a session at all (missing, unreadable, or nothing readable in it).
    The message is one line naming the file."""


@dataclasses.dataclass
class SessionLog:
    """A session as read: ``header`` (None when the file has none), ``events`` in file order (header and
    ``end`` excluded), ``problems`` (one line each: where and what was skipped or kept unreplayed), ``path``,
    ``closed`` (True when the recorder wrote its ``end`` document, i.e. it was not interrupted)."""

    path: str
    header: HeaderEvent | None
    events: list[Event]
    problems: list[str]
    closed: bool = False

    @property
    def duration_s(self) -> float:
        """Seconds from the session start to the last event (0.0 when empty)."""
        return max((e.t for e in self.events), default=0.0)

    def of_kind(self, kind: str) -> list[Event]:
        """The events of one kind, in order (e.g. ``"finding"``)."""
        return [e for e in self.events if e.kind == kind]


#: The most decompressed bytes read from one session file (a busy hour is about 20 MB: this is six of them).
MAX_SESSION_BYTES = 128 * 1024 * 1024
#: The most documents read from one session file (a busy hour has about 25 000).
MAX_DOCUMENTS = 200_000
#: YAML aliases allowed in one document (the recorder writes none; a hand-edited file has no need of many).
MAX_ALIASES = 16
#: Values (mappings, lists, scalars) allowed in one document once aliases are expanded (the recorder's largest,
#: a 0.2 s log batch at 20 000 lines/s, has about 12 000); a larger document is skipped, unparsed when its text
#: alone shows it (more than this many commas and line breaks).
MAX_NODES = 300_000
#: Characters of documents not in the recorder's own shape that are parsed as YAML (libyaml reads ~10 MB/s, and
#: far less in many small documents): a hand-edited session is small; beyond this such documents are skipped.
MAX_YAML_CHARS = 16 * 1024 * 1024
#: Numbers in a document must be finite and at most this large in magnitude (``t: 1e309`` is a bad document).
MAX_NUMBER = 1e15
#: Problem lines and error messages are cut to this many characters.
MAX_MESSAGE_CHARS = 300

_IN_SLICE = 1 << 16  # compressed bytes given to zlib at once
_OUT_SLICE = 1 << 23  # decompressed bytes taken from zlib at once
_FLUSH_MARK = b"\x00\x00\xff\xff"  # ends every deflate full flush (the recorder's flush points)
_GZIP_MAGIC = b"\x1f\x8b"


def _size(n: int) -> str:
    """A size limit as it is said: ``128 MiB``, ``4096 bytes``."""
    return f"{n // 2**20} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n} bytes"


def _short(text: object) -> str:
    """One line, at most :data:`MAX_MESSAGE_CHARS` characters, safe to print."""
    return clean(text, max_chars=MAX_MESSAGE_CHARS)


#: zlib's words for a gzip trailer that does not match the data inflated before it (CRC-32 or length).
_TRAILER_CHECK_RE = re.compile(r"incorrect (?:data|length) check")


def _read_bytes(path: Path, problems: list[str]) -> bytes | bytearray:
    """The file's bytes, decompressed when gzip, at most :data:`MAX_SESSION_BYTES`.

    A gzip stream is inflated one flush segment at a time (segments end with the ``00 00 ff ff`` mark of a deflate
    flush; the recorder makes a full flush, which resets the compressor, at every write). When a segment is
    damaged, reading resumes at the next flush point whose data inflates, so only the damaged flushes are lost.
    """
    with open(path, "rb") as f:
        data = f.read(MAX_SESSION_BYTES + 1)
    if not data.startswith(_GZIP_MAGIC):
        if len(data) > MAX_SESSION_BYTES:
            problems.append(f"file larger than the {_size(MAX_SESSION_BYTES)} limit: only the first "
                            f"{_size(MAX_SESSION_BYTES)} are read")
            data = data[:MAX_SESSION_BYTES]
        return data
    if len(data) > MAX_SESSION_BYTES:
        data = data[:MAX_SESSION_BYTES]
    out = bytearray()  # one growing buffer: no list of chunks to join (a copy) at the end
    total = 0
    pos = 0
    size = len(data)
    decomp = zlib.decompressobj(31)
    raw_mode = False  # True after a resynchronisation: raw deflate from a flush point, no gzip header
    damaged_at: int | None = None
    damage_reason = ""

    def end_damage(resumed_at: int | None) -> None:
        nonlocal damaged_at
        if damaged_at is None:
            return
        where = (f"reading resumed at byte {resumed_at} (the next intact flush point)" if resumed_at is not None
                 else "no intact flush point after it: the rest of the file is skipped")
        problems.append(_short(f"gzip data damaged at byte {damaged_at} of the file ({damage_reason}) after "
                               f"{total} decompressed bytes: {where}"))
        damaged_at = None

    view = memoryview(data)  # slices without copies
    segment_end = -1
    while pos < size:
        if pos >= segment_end:
            mark = data.find(_FLUSH_MARK, pos)
            segment_end = size if mark < 0 else mark + len(_FLUSH_MARK)
        end = min(segment_end, pos + _IN_SLICE)  # bounded input, and output, per call: bounded memory
        try:
            piece: Any = view[pos:end]
            while True:
                chunk = decomp.decompress(piece, min(MAX_SESSION_BYTES - total + 1, _OUT_SLICE))
                if chunk or decomp.eof:
                    end_damage(pos)
                total += len(chunk)
                if total > MAX_SESSION_BYTES:
                    problems.append(f"more than {_size(MAX_SESSION_BYTES)} once decompressed (the limit): "
                                    f"only the first {_size(MAX_SESSION_BYTES)} are read")
                    out += chunk[:len(chunk) - (total - MAX_SESSION_BYTES)]
                    return out
                out += chunk
                piece = decomp.unconsumed_tail
                if not piece or decomp.eof:
                    break
        except zlib.error as exc:
            if not raw_mode and _TRAILER_CHECK_RE.search(str(exc)):
                # the gzip trailer's CRC or length does not match: every byte inflated (the damage made valid but
                # wrong deflate data), so nothing is skipped; where the damage lies is not known
                end_damage(pos)
                problems.append(_short(f"gzip checksum does not match ({exc}): the file was altered somewhere, so "
                                       "what follows the damage may be wrong; documents that do not parse are listed"))
                return out
            if damaged_at is None:
                damaged_at, damage_reason = pos, str(exc)
            decomp, raw_mode = zlib.decompressobj(-15), True
            pos = segment_end  # resume at the next flush point
            continue
        if decomp.eof:
            rest_at = end - len(decomp.unused_data)
            if raw_mode:
                rest_at += 8  # the gzip trailer (CRC, size) after the raw deflate data
            if rest_at >= size:
                return out
            if data.startswith(_GZIP_MAGIC, rest_at):  # concatenated gzip members
                decomp, raw_mode, pos = zlib.decompressobj(31), False, rest_at
                continue
            problems.append(f"{size - rest_at} bytes of non-gzip data after the gzip stream: skipped")
            return out
        pos = end
    if damaged_at is not None:
        end_damage(None)
    elif not decomp.eof:
        problems.append("gzip stream not finished (the recorder did not close the file): "
                        "read up to the last flushed block")
    return out


def _check_values(doc: Any) -> str | None:
    """Why a parsed document cannot be an event's data, or None: a number not finite or beyond
    :data:`MAX_NUMBER`, or more than :data:`MAX_NODES` values (an alias bomb)."""
    stack = [doc]
    nodes = 0
    while stack:
        value = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            return f"more than {MAX_NODES:,} values (limit)"
        if isinstance(value, dict):
            stack.extend(value.values())
            stack.extend(value.keys())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, float):
            if not math.isfinite(value) or abs(value) > MAX_NUMBER:
                return f"number {value!r:.30} out of range (finite, at most {MAX_NUMBER:g} in magnitude)"
        elif isinstance(value, int) and not isinstance(value, bool):
            if abs(value) > MAX_NUMBER:
                return f"number out of range (at most {MAX_NUMBER:g} in magnitude)"
    return None


def _count_aliases(doc_text: str) -> int:
    """YAML alias tokens in ``doc_text`` (libyaml's scanner: no structure is built)."""
    count = 0
    for token in yaml.scan(doc_text, Loader=_Loader):
        if isinstance(token, yaml.AliasToken):
            count += 1
            if count > MAX_ALIASES:
                break
    return count


_SEPARATOR_RE = re.compile(r"^---(?:[ \t]+(.*))?$", re.MULTILINE)
_SIZE_RE = re.compile(r"^#\s*size\s+(\d+)\s*$")


@dataclasses.dataclass
class _Doc:
    """Where one document lies in the text (offsets only: its body is sliced when it is parsed, then dropped)."""

    start: int  # offset of the document's start (its ``---`` separator, or 0)
    body_start: int  # offset where its body starts in the text (for line numbers)
    body_end: int
    size: int | None  # characters the separator's ``# size N`` comment promises, if any
    first_line: str = ""  # the content of a ``--- <content>`` separator line: the body's first line

    def body(self, text: str) -> str:
        body = text[self.body_start:self.body_end]
        return f"{self.first_line}\n{body}" if self.first_line else body


_NON_BLANK_RE = re.compile(r"\S")


def _split_documents(text: str, end: int, limit: int = MAX_DOCUMENTS) -> tuple[list[_Doc], bool]:
    """Split ``text[:end]``, a YAML stream, on separator lines (``---``, ``--- # size N``, ``--- <content>``; a
    line like ``----`` or ``---x`` is not one); text before the first separator is a document when non-blank.
    ``--- <content>`` (not a comment) keeps the content as the body's first line. Line numbers are computed only
    when a problem needs them (see :class:`_Lines`). Offsets only: no copy of the text is made here.
    At most ``limit`` documents; the flag says more separators were left."""

    def separator_at(i: int) -> bool:
        return text.startswith("---", i) and (i + 3 >= end or text[i + 3] in "\n \t")

    seps: list[int] = [0] if separator_at(0) else []
    left = False
    i = text.find("\n---", 0, end)
    while i >= 0:
        if separator_at(i + 1):
            if len(seps) > limit:
                left = True
                break
            seps.append(i + 1)
        i = text.find("\n---", i + 1, end)
    docs: list[_Doc] = []
    if not seps or seps[0] > 0:
        docs.append(_Doc(0, 0, seps[0] if seps else end, None))
    for k, sep in enumerate(seps):
        body_end = seps[k + 1] if k + 1 < len(seps) else end
        line_end = text.find("\n", sep, body_end)
        line_end = body_end if line_end < 0 else line_end
        content = text[sep + 3:line_end].strip()
        body_start = min(line_end + 1, body_end)
        size = None
        first_line = ""
        if content.startswith("#"):
            size_match = _SIZE_RE.match(content)
            size = int(size_match.group(1)) if size_match else None
        elif content:  # "--- {kind: marker, t: 1}": the content is the document's first line
            first_line = content
        docs.append(_Doc(sep, body_start, body_end, size, first_line))
    return [d for d in docs if d.size or d.first_line or _NON_BLANK_RE.search(text, d.body_start, d.body_end)], \
        left


class _Lines:
    """1-based line numbers of offsets in ``text``, counted on from the last offset asked for (documents are
    visited in order: many problems cost one pass over the text, not one pass each)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0
        self.line = 1

    def at(self, offset: int) -> int:
        if offset < self.offset:
            self.offset, self.line = 0, 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _fast_parse(doc_text: str) -> dict[str, Any] | None:
    """Parse a document in the recorder's exact shape (``"key": <json>`` lines, continuation lines indented;
    see :func:`specdash.session.recorder.dump_document`) with one ``json.loads``; None for any other shape
    (then YAML decides)."""
    if not doc_text.startswith('"kind": "'):
        return None
    try:
        doc = json.loads("{" + doc_text.rstrip("\n").replace('\n"', ',"') + "}")
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def read_session(path: str | os.PathLike[str]) -> SessionLog:
    """Read the session file at ``path`` (plain YAML stream or ``.gz``).

    The cyclic garbage collector is paused while reading (tens of thousands of new objects and no cycles:
    about 20 % faster for a busy hour).

    Returns every readable event; damaged parts are skipped and described in ``problems``: a truncated last
    document (file ends mid-line or its YAML is cut), bad YAML in the middle, a document that is not an event
    mapping, unknown kinds (kept, reported), a missing header or ``end``.
    Raises :class:`SessionError` (one line) when the file is missing/unreadable or holds no readable event.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _read_session(Path(path))
    finally:
        if collecting:
            gc.enable()


def _read_session(p: Path) -> SessionLog:
    problems: list[str] = []
    try:
        raw = _read_bytes(p, problems)
    except FileNotFoundError:
        raise SessionError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise SessionError(f"{p}: is a directory, not a session file") from None
    except OSError as exc:
        raise SessionError(f"{p}: cannot read: {exc.strerror or exc}") from None
    text = raw.decode("utf-8", errors="replace")
    if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
        problems.append("invalid UTF-8 bytes replaced by U+FFFD")
    del raw  # the text is all that is needed from here: half the peak memory
    partial = ""
    end = len(text)  # documents are read from text[:end] (no copy of the text is made)
    if text and not text.endswith("\n"):  # the file ends mid-line: the last write was cut
        end = text.rfind("\n") + 1
        partial = text[end:]
        partial_line = text.count("\n", 0, end) + 1

    documents, left = _split_documents(text, end)
    line_of = _Lines(text)
    if left or len(documents) > MAX_DOCUMENTS:
        problems.append(f"more than {MAX_DOCUMENTS:,} documents (the limit): only the first {MAX_DOCUMENTS:,} are "
                        "read, the rest is skipped")
        del documents[MAX_DOCUMENTS:]
        partial = ""
    header: HeaderEvent | None = None
    events: list[Event] = []
    closed = False
    listed: list[str] = []
    unlisted = 0
    unknown: dict[str, list[int]] = {}
    parsed_any = False

    def note(message: str) -> None:
        nonlocal unlisted
        if len(listed) < MAX_LISTED_PROBLEMS:
            listed.append(_short(message))
        else:
            unlisted += 1

    # a file whose gzip data is damaged was not cut while writing: its broken documents are said as damaged
    cause = "the file is damaged" if any(p.startswith(("gzip data damaged", "gzip checksum")) for p in problems) else \
        "the recording was cut while writing"
    cut_last = False
    yaml_chars = 0
    yaml_skipped = 0
    if partial:
        if partial.startswith("---") or "---".startswith(partial):
            note(f"document {len(documents) + 1} (line {partial_line}): truncated in its first line "
                 f"({cause}): skipped")
        else:
            cut_last = True

    for index, doc_info in enumerate(documents, start=1):
        doc_text = doc_info.body(text)

        def where(index: int = index, start: int = doc_info.start) -> str:
            return f"document {index} (line {line_of.at(start)})"  # computed only for a problem

        is_last = index == len(documents)
        if is_last and cut_last:
            note(f"{where()}: truncated at line {partial_line} (the file ends mid-line: {cause}): skipped")
            continue
        if is_last and doc_info.size is not None and len(doc_text) != doc_info.size:
            note(f"{where()}: truncated ({len(doc_text)} of {doc_info.size} characters: {cause}): skipped")
            continue
        if len(doc_text) > 1_000_000 and doc_text.count(",") + doc_text.count("\n") > MAX_NODES:
            note(f"{where()}: more than {MAX_NODES:,} values (limit): skipped unparsed")
            continue
        doc = _fast_parse(doc_text)
        try:
            if doc is None:
                yaml_chars += len(doc_text)
                if yaml_chars > MAX_YAML_CHARS:
                    yaml_skipped += 1
                    continue
                if "*" in doc_text and _count_aliases(doc_text) > MAX_ALIASES:
                    note(f"{where()}: more than {MAX_ALIASES} YAML aliases (the limit; an alias bomb?): skipped")
                    continue
                doc = yaml.load(doc_text, Loader=_Loader)
        except (yaml.YAMLError, RecursionError, ValueError, OverflowError) as exc:
            mark = getattr(exc, "problem_mark", None)
            at = f" at line {line_of.at(doc_info.body_start) + mark.line}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
            if is_last:
                note(f"{where()}: truncated or bad YAML{at} ({problem}): skipped")
            else:
                note(f"{where()}: bad YAML{at} ({problem}): skipped")
            continue
        if not isinstance(doc, dict):
            note(f"{where()}: not an event (a YAML {type(doc).__name__}, expected a mapping with 'kind' and 't'): "
                 "skipped")
            continue
        bad = _check_values(doc)
        if bad is not None:
            note(f"{where()}: {bad}: skipped")
            continue
        try:
            event = event_from_dict(doc)
        except (ValueError, TypeError, OverflowError) as exc:
            note(f"{where()}: {_short(exc)}: skipped")
            continue
        parsed_any = True
        if isinstance(event, HeaderEvent):
            if header is None and not events:
                header = event
            else:
                note(f"{where()}: a second header (another recording appended?): ignored")
            continue
        if isinstance(event, EndEvent):
            closed = True
            continue
        if isinstance(event, UnknownEvent):
            unknown.setdefault(event.unknown_kind, []).append(index)
        if closed:
            closed = False  # events after an end: the file was appended to after closing
        events.append(event)

    if not parsed_any:
        if _NON_BLANK_RE.search(text) is None:
            raise SessionError(f"{p}: empty file, not a session")
        first = listed[0] if listed else "no event documents"
        raise SessionError(f"{p}: not a specdash session: {first}")

    if yaml_skipped:
        problems.append(f"{yaml_skipped:,} documents not in the recorder's format skipped: more than "
                        f"{_size(MAX_YAML_CHARS)} of such documents (the limit for YAML parsing)")
    if header is None:
        problems.append("no header document at the start (specdash version, host, start time unknown)")
    problems.extend(listed)
    if unlisted:
        problems.append(f"... and {unlisted} more damaged documents skipped")
    for kind, indexes in unknown.items():
        first_doc = indexes[0]
        first_line = line_of.at(documents[first_doc - 1].start)
        problems.append(f"unknown event kind {kind!r} in {len(indexes)} document(s) (first: document {first_doc}, "
                        f"line {first_line}): kept, not replayed")
    if not closed:
        problems.append("no 'end' document: the recorder did not close the file (crash, kill, or still recording)")
    return SessionLog(path=str(p), header=header, events=events, problems=problems, closed=closed)
